"""Triggers through Airflow's REST API, as the UI sends them, on a real API server and scheduler (SQLite,
LocalExecutor, SimpleAuthManager with an ADMIN, a USER and a VIEWER account) over a local lake:

* the maintenance trigger form's ``dry_run`` is a switch shown on; triggering with the form's defaults (what
  the UI sends when nothing is changed) is a dry run at the form's Logical Date whose commit and gc tasks
  end skipped, and the DAG is active from its deployment, so the click unpauses nothing and sets off no
  scheduled run; a backfill from the dialog's Backfill tab, switch untouched, is a dry run too;
* the delete-records DAG commits only for the users the Variable ``kafka_segments_delete_records_allowed``
  allows (default: ADMIN): a USER's committing request fails with a message naming the Variable and
  changes nothing, its dry run works, a VIEWER cannot trigger at all;
* the lake view's **Preview now** (issue 37) starts the maintenance DAG's dry run as the user, only from the
  page's own origin and only for a user Airflow lets trigger; the run's task instances link to its lake
  run's report, which the plugin serves to a VIEWER, and the lake run links back to its DAG run.

The scheduler's job schedule is off here (no scheduled run of "now" on the test lake); that the DAGs are
active is read from the API (``is_paused``), and ``tests/airflow/test_backfill_turns.py`` runs a scheduled
run. The maintenance run's retention step runs inline (Variable ``kafka_segments_engine``): the claims are
about triggers, and ``tests/airflow/test_maintenance_dag.py`` runs the DAG's Spark job.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from kafka_segments.lake.history import head_version
from kafka_segments.storage import LocalStore
from lake.retention_helpers import upload_fifteen_records
from migrated_db import throwaway_stack
from orchestration.demo_stack import StackSettings, free_port, log_tail
from rest_api_stack import (
    Stack,
    assert_an_admin_commits_deletions,
    assert_only_allowed_users_commit_deletions,
    form_defaults,
    trigger,
    user_tokens,
    users_settings,
    wait_for_run,
    xcom,
)

pytestmark = pytest.mark.airflow

ROOT = Path(__file__).resolve().parents[2]
MAINTENANCE = "kafka_segments_maintenance"
REQUEST = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "offset": 7}]}
FORM_DATE = datetime(2025, 11, 29, 6, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, migrated_database: Path) -> Iterator[Stack]:
    """A local lake with t-0 = [0-4] [5-9] [10-14]; Airflow's API server and scheduler with three accounts,
    on a copy of the session's migrated database."""
    home = tmp_path_factory.mktemp("rest-api")
    lake = LocalStore(home / "lake")
    upload_fifteen_records(lake)
    port = free_port()
    settings = StackSettings(
        project=ROOT,
        airflow_home=home / "airflow-home",
        lake_uri=str(home / "lake"),
        s3_endpoint=None,
        config=None,
        offsets_source=None,
        api_port=port,
        extra={
            **users_settings(home),
            "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",
            "KAFKA_SEGMENTS_LAKE_TURN_POKE_SECONDS": "10",
            "AIRFLOW_VAR_KAFKA_SEGMENTS_ENGINE": "inline",
        },
    )
    log = home / "airflow.log"
    with throwaway_stack(settings, migrated_database, log=log) as (_, api):
        yield Stack(api, log, lake, user_tokens(api))


def test_the_maintenance_trigger_form_unchanged_starts_a_dry_run_and_nothing_else(stack: Stack) -> None:
    """With the form's Logical Date set to a past day: the run applies its rules at that time."""
    params, conf = form_defaults(stack, MAINTENANCE)
    assert params["dry_run"]["schema"]["type"] == "boolean"  # drawn as a switch ...
    assert params["dry_run"]["value"] is True  # ... shown on
    assert "Manual runs and backfills read this switch" in params["dry_run"]["description"]
    assert stack.request("admin", f"/api/v2/dags/{MAINTENANCE}")["is_paused"] is False  # nothing to unpause
    before = head_version(stack.lake)

    run_id = trigger(stack, "admin", MAINTENANCE, conf, logical_date=FORM_DATE.isoformat())
    run = wait_for_run(stack, MAINTENANCE, run_id)

    assert run["state"] == "success", log_tail(stack.log)
    report = xcom(stack, MAINTENANCE, run_id, "report")
    assert report["outcome"] == "dry run"
    assert report["dry_run"] is True
    assert report["engine"] == "inline"
    assert report["now_ms"] == int(FORM_DATE.timestamp() * 1000)  # the form's Logical Date, not the click's
    states = {ti["task_id"]: ti["state"] for ti in task_instances(stack, MAINTENANCE, run_id)}
    assert (states["commit"], states["gc"], states["report"]) == ("skipped", "skipped", "success")
    assert head_version(stack.lake) == before
    runs = stack.request("admin", f"/api/v2/dags/{MAINTENANCE}/dagRuns")["dag_runs"]
    assert [r["dag_run_id"] for r in runs] == [run_id]  # the click set off no other run
    assert stack.request("admin", f"/api/v2/dags/{MAINTENANCE}")["is_paused"] is False


def test_a_backfill_from_the_dialog_with_the_switch_on_is_a_dry_run(stack: Stack) -> None:
    """The Backfill tab shows the same ``dry_run`` switch, on; left untouched, the dialog sends no conf (the
    Params' defaults apply). The lake's records are from 1970: a committing run would delete segments."""
    before = head_version(stack.lake)
    hour = "2025-11-28T06:00:00Z"  # not FORM_DATE: a backfill skips a date that has a run
    body = {"dag_id": MAINTENANCE, "from_date": hour, "to_date": hour, "dag_run_conf": None}
    stack.request("admin", "/api/v2/backfills", method="POST", body=body)
    runs = stack.request("admin", f"/api/v2/dags/{MAINTENANCE}/dagRuns?run_type=backfill")["dag_runs"]
    (run_id,) = [run["dag_run_id"] for run in runs]

    run = wait_for_run(stack, MAINTENANCE, run_id)

    assert run["state"] == "success", log_tail(stack.log)
    report = xcom(stack, MAINTENANCE, run_id, "report")
    assert (report["outcome"], report["dry_run"]) == ("dry run", True)
    assert report["plan"]["totals"]["segments_deleted"] > 0  # what it would have deleted
    assert head_version(stack.lake) == before
    states = {ti["task_id"]: ti["state"] for ti in task_instances(stack, MAINTENANCE, run_id)}
    assert (states["commit"], states["gc"]) == ("skipped", "skipped")


def test_a_user_without_the_permission_cannot_commit_deletions_but_may_preview_them(stack: Stack) -> None:
    assert_only_allowed_users_commit_deletions(stack, REQUEST)


def test_an_admin_commits_deletions(stack: Stack) -> None:
    assert_an_admin_commits_deletions(stack, REQUEST)


def preview(stack: Stack, user: str, *, origin: str | None) -> tuple[int, str]:
    """POST the lake view's Preview now as ``user`` with that ``Origin``: the status and the final URL."""
    headers = {"Authorization": f"Bearer {stack.tokens[user]}"}
    if origin is not None:
        headers["Origin"] = origin
    url = f"{stack.api}/kafka-segments/lakes/default/preview"
    request = urllib.request.Request(url, data=b"", method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # follows the 303 to the DAG run
            return response.status, response.geturl()
    except urllib.error.HTTPError as error:
        return error.code, url


def test_preview_now_starts_a_dry_run_whose_files_are_linked(stack: Stack) -> None:
    runs = f"/api/v2/dags/{MAINTENANCE}/dagRuns"
    before = {r["dag_run_id"] for r in stack.request("admin", runs)["dag_runs"]}
    assert preview(stack, "admin", origin="https://elsewhere.example")[0] == 403
    assert preview(stack, "admin", origin=None)[0] == 403
    assert preview(stack, "victor", origin=stack.api)[0] == 403  # a VIEWER may not trigger
    assert {r["dag_run_id"] for r in stack.request("admin", runs)["dag_runs"]} == before

    status, url = preview(stack, "alice", origin=stack.api)
    assert status == 200
    run_id = next(
        r["dag_run_id"] for r in stack.request("admin", runs)["dag_runs"] if r["dag_run_id"] not in before
    )
    assert url == f"{stack.api}/dags/{MAINTENANCE}/runs/{quote(run_id, safe='')}"
    run = wait_for_run(stack, MAINTENANCE, run_id)
    assert run["state"] == "success", log_tail(stack.log)
    assert run["conf"] == {"dry_run": True}
    report = xcom(stack, MAINTENANCE, run_id, "report")
    assert report["outcome"] == "dry run"

    instance = f"{runs}/{quote(run_id, safe='')}/taskInstances/report/links"
    links = stack.request("victor", instance)["extra_links"]
    files = f"/kafka-segments/lakes/default/runs/{report['run_id']}/"
    assert links["Lake run: report"] == files + "report.json"
    served = stack.request("victor", files + "report.json")
    assert served["run_id"] == report["run_id"]
    from orchestration.lake_run_files import run_links

    found = run_links(stack.lake, [report["run_id"]], files="", airflow="../../")[report["run_id"]]
    assert ("Airflow run", f"../../dags/{MAINTENANCE}/runs/{quote(run_id, safe='')}") in found


def task_instances(stack: Stack, dag_id: str, run_id: str) -> list[dict[str, Any]]:
    path = f"/api/v2/dags/{dag_id}/dagRuns/{quote(run_id, safe='')}/taskInstances"
    return list(stack.request("admin", path)["task_instances"])
