"""Triggers through Airflow's REST API, as the UI sends them, on a real API server and scheduler (SQLite,
LocalExecutor, SimpleAuthManager with an ADMIN, a USER and a VIEWER account) over a local lake:

* the maintenance trigger form's ``dry_run`` is a switch shown on; triggering with the form's defaults (what
  the UI sends when nothing is changed) is a dry run, and the DAG is active from its deployment, so the
  click unpauses nothing and sets off no scheduled run;
* the delete-records DAG commits only for the users the Variable ``kafka_segments_delete_records_allowed``
  allows (default: ADMIN): a USER's committing request fails with a message naming the Variable and
  changes nothing, its dry run works, a VIEWER cannot trigger at all.

The scheduler's job schedule is off here (no scheduled run of "now" on the test lake); that the DAGs are
active is read from the API (``is_paused``), and ``tests/airflow/test_backfill_turns.py`` runs a scheduled
run. The maintenance run's retention step runs inline (Variable ``kafka_segments_engine``): the claims are
about triggers, and ``tests/airflow/test_maintenance_dag.py`` runs the DAG's Spark job.
"""

from __future__ import annotations

import json
import urllib.error
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from kafka_segments.lake.history import head_version
from kafka_segments.storage import LocalStore
from lake.retention_helpers import upload_fifteen_records
from migrated_db import throwaway_stack
from orchestration.demo_stack import (
    StackSettings,
    free_port,
    log_tail,
    wait_until,
)
from orchestration.rest_api import api_request, api_token

pytestmark = pytest.mark.airflow

ROOT = Path(__file__).resolve().parents[2]
MAINTENANCE = "kafka_segments_maintenance"
DELETE_RECORDS = "kafka_segments_delete_records"
PASSWORDS = {"admin": "admin-secret", "alice": "alice-secret", "victor": "victor-secret"}
USERS = "admin:ADMIN,alice:USER,victor:VIEWER"
REQUEST = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "offset": 7}]}
RUN_TIMEOUT_S = 420


@dataclass(frozen=True, slots=True)
class Stack:
    api: str
    log: Path
    lake: LocalStore
    tokens: dict[str, str]

    def request(self, user: str, path: str, **kwargs: Any) -> Any:
        return api_request(self.api, path, token=self.tokens[user], **kwargs)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, migrated_database: Path) -> Iterator[Stack]:
    """A local lake with t-0 = [0-4] [5-9] [10-14]; Airflow's API server and scheduler with three accounts,
    on a copy of the session's migrated database."""
    home = tmp_path_factory.mktemp("rest-api")
    lake = LocalStore(home / "lake")
    upload_fifteen_records(lake)
    passwords = home / "passwords.json"
    passwords.write_text(json.dumps(PASSWORDS))
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
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": USERS,
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
            "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",
            "KAFKA_SEGMENTS_LAKE_TURN_POKE_SECONDS": "10",
            "AIRFLOW_VAR_KAFKA_SEGMENTS_ENGINE": "inline",
        },
    )
    log = home / "airflow.log"
    with throwaway_stack(settings, migrated_database, log=log) as (_, api):
        tokens = {user: api_token(api, user, password) for user, password in PASSWORDS.items()}
        yield Stack(api, log, lake, tokens)


def form_defaults(stack: Stack, dag_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The trigger form's Params as the UI reads them (``/details``), and the conf it sends unchanged."""
    params: dict[str, Any] = stack.request("admin", f"/api/v2/dags/{dag_id}/details")["params"]
    return params, {name: param["value"] for name, param in params.items()}


def trigger(stack: Stack, user: str, dag_id: str, conf: dict[str, Any]) -> str:
    """A run triggered as ``user`` the way the UI does (no logical date); returns its run id."""
    run = stack.request(
        user, f"/api/v2/dags/{dag_id}/dagRuns", method="POST", body={"logical_date": None, "conf": conf}
    )
    return str(run["dag_run_id"])


def wait_for_run(stack: Stack, dag_id: str, run_id: str) -> dict[str, Any]:
    path = f"/api/v2/dags/{dag_id}/dagRuns/{quote(run_id, safe='')}"
    found: dict[str, Any] = {}

    def finished() -> bool:
        found.update(stack.request("admin", path))
        return found["state"] in {"success", "failed"}

    try:
        wait_until(f"run {run_id}", finished, timeout_s=RUN_TIMEOUT_S, interval_s=2)
    except Exception:
        pytest.fail(f"run {run_id} did not finish\n{log_tail(stack.log)}")
    return found


def xcom(stack: Stack, dag_id: str, run_id: str, task_id: str) -> dict[str, Any]:
    entry = stack.request(
        "admin",
        f"/api/v2/dags/{dag_id}/dagRuns/{quote(run_id, safe='')}/taskInstances/{task_id}"
        "/xcomEntries/return_value?deserialize=true",
    )
    value = entry["value"]
    parsed: dict[str, Any] = json.loads(value) if isinstance(value, str) else value
    return parsed


def task_log(stack: Stack, dag_id: str, run_id: str, task_id: str) -> str:
    document = stack.request(
        "admin",
        f"/api/v2/dags/{dag_id}/dagRuns/{quote(run_id, safe='')}/taskInstances/{task_id}/logs/1"
        "?full_content=true",
    )
    return json.dumps(document)


def test_the_maintenance_trigger_form_unchanged_starts_a_dry_run_and_nothing_else(stack: Stack) -> None:
    params, conf = form_defaults(stack, MAINTENANCE)
    assert params["dry_run"]["schema"]["type"] == "boolean"  # drawn as a switch ...
    assert params["dry_run"]["value"] is True  # ... shown on
    assert "scheduled and backfill runs always commit" in params["dry_run"]["description"]
    assert stack.request("admin", f"/api/v2/dags/{MAINTENANCE}")["is_paused"] is False  # nothing to unpause
    before = head_version(stack.lake)

    run_id = trigger(stack, "admin", MAINTENANCE, conf)
    run = wait_for_run(stack, MAINTENANCE, run_id)

    assert run["state"] == "success", log_tail(stack.log)
    report = xcom(stack, MAINTENANCE, run_id, "report")
    assert report["outcome"] == "dry run"
    assert report["dry_run"] is True
    assert report["engine"] == "inline"
    assert head_version(stack.lake) == before
    runs = stack.request("admin", f"/api/v2/dags/{MAINTENANCE}/dagRuns")["dag_runs"]
    assert [r["dag_run_id"] for r in runs] == [run_id]  # the click set off no other run
    assert stack.request("admin", f"/api/v2/dags/{MAINTENANCE}")["is_paused"] is False


def test_a_user_without_the_permission_cannot_commit_deletions_but_may_preview_them(stack: Stack) -> None:
    params, defaults = form_defaults(stack, DELETE_RECORDS)
    assert params["dry_run"]["schema"]["type"] == "boolean"
    assert params["dry_run"]["value"] is True
    assert stack.request("admin", f"/api/v2/dags/{DELETE_RECORDS}")["is_paused"] is False
    before = head_version(stack.lake)

    refused = trigger(stack, "alice", DELETE_RECORDS, {**defaults, "request": REQUEST, "dry_run": False})
    assert wait_for_run(stack, DELETE_RECORDS, refused)["state"] == "failed"
    message = task_log(stack, DELETE_RECORDS, refused, "delete_records")
    assert "kafka_segments_delete_records_allowed" in message
    assert "'alice' (role USER) may not commit" in message
    assert head_version(stack.lake) == before

    preview = trigger(stack, "alice", DELETE_RECORDS, {**defaults, "request": REQUEST})
    assert wait_for_run(stack, DELETE_RECORDS, preview)["state"] == "success"
    report = xcom(stack, DELETE_RECORDS, preview, "delete_records")
    assert report["outcome"] == "dry run"
    assert report["labels"]["airflow_triggered_by"] == "alice"
    assert head_version(stack.lake) == before

    with pytest.raises(urllib.error.HTTPError) as forbidden:
        trigger(stack, "victor", DELETE_RECORDS, {**defaults, "request": REQUEST})
    forbidden.value.close()
    assert forbidden.value.code == 403


def test_an_admin_commits_deletions(stack: Stack) -> None:
    _params, defaults = form_defaults(stack, DELETE_RECORDS)
    before = head_version(stack.lake)

    run_id = trigger(stack, "admin", DELETE_RECORDS, {**defaults, "request": REQUEST, "dry_run": False})

    assert wait_for_run(stack, DELETE_RECORDS, run_id)["state"] == "success", log_tail(stack.log)
    report = xcom(stack, DELETE_RECORDS, run_id, "delete_records")
    assert report["outcome"] == "committed"
    assert report["labels"]["airflow_triggered_by"] == "admin"
    assert report["committed_version"] == head_version(stack.lake) == (before or 0) + 1
