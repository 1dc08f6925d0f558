"""Backfills of the maintenance DAG: ``airflow backfill create`` over three past dates, run by a real
scheduler and API server (SQLite, LocalExecutor, local Spark) against the demo lake on the embedded S3 server.

Each backfill run's ``now`` is its date (the data interval end of a daily trigger), its offsets are the
snapshot pinned for that date or the newest earlier pin (never a live source), and a date already applied
changes nothing when it is run again. The demo lake is built for 2025-11-21T00:00Z with offsets pinned for
11-19 (what the ``lake`` source saw then: analytics at 90/25/80, billing at 150) and 11-21 (analytics at
170/25/130); 11-20 has no pin of its own. With ``config/demo.yaml`` (retention.ms 7 days, consumed
retention after 1 day) the dates delete:

* 11-19 (pin 11-19): clickstream-0 two segments by consumed retention (M = 90); clickstream-2 one by the
  log start offset (kafka-delete-records moved it to 50) and one by consumed retention (M = 80);
* 11-20 (pin 11-19, the newest earlier): clickstream-1 its first segment by retention.ms (8.5 days old
  on 11-21, 7.5 on 11-20);
* 11-21 (pin 11-21): clickstream-0 two more by consumed retention (M = 170), clickstream-1 one more by
  retention.ms, clickstream-2 one more by consumed retention (M = 130).

Reprocessing a date already applied (``--reprocess-behavior completed`` over the first date, after the later
dates moved the lake on) clears its run; it gets a new lake run that finds nothing to change, and the lake's
head version does not move. (One date shows it: every date's rerun is the same case, and each run costs a
Spark job and a validation.)

The backfills are created exactly as docs/airflow.md writes the command (no ``--max-active-runs``: a
backfill starts up to 10 runs at once), and a scheduled run is put next to one: the runs take turns on the
lake (``orchestration.lake_turns``), one at a time in date order, and none fails with a commit conflict.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from kafka_segments.demo import DAY_MS, EmbeddedS3, build_demo_lake, pin_demo_offsets
from kafka_segments.lake.history import head_version
from kafka_segments.storage import S3Store
from orchestration.demo_stack import (
    MAINTENANCE_DAG_ID,
    StackSettings,
    airflow_environment,
    free_port,
    log_tail,
    run_step,
    scheduler_and_api_server,
    wait_until,
)
from orchestration.rest_api import api_request
from s3_fixtures import BUCKET, new_s3_store
from scheduled_run import scheduled_run_id

pytestmark = pytest.mark.airflow

ROOT = Path(__file__).resolve().parents[2]
LAKE_NOW = datetime(2025, 11, 21, tzinfo=UTC)
NOW_MS = int(LAKE_NOW.timestamp() * 1000)
DATES = ("2025-11-19", "2025-11-20", "2025-11-21")
DATE_MS = {date: NOW_MS - (2 - index) * DAY_MS for index, date in enumerate(DATES)}
REPROCESSED = DATES[:1]
"""The date run again: the earliest, so its rerun comes after later dates moved the lake on."""
NEXT_DATES = ("2025-11-22",)
SCHEDULED = datetime(2025, 11, 23, tzinfo=UTC)
"""A scheduled run's time after the second backfill's dates (the lake's turns go in date order)."""
RUN_TIMEOUT_S = 1200
SCHEDULED_RUN = Path(__file__).with_name("scheduled_run.py")


@dataclass(frozen=True, slots=True)
class Stack:
    env: dict[str, str]
    api: str
    log: Path
    store: S3Store
    pins: dict[str, str]
    """Date → the snapshot id pinned for it."""


@pytest.fixture(scope="module")
def stack(s3_server: EmbeddedS3, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """The demo lake with two pinned snapshots, and Airflow's scheduler and API server on a fresh SQLite."""
    home = tmp_path_factory.mktemp("backfill")
    store = new_s3_store(s3_server)
    build_demo_lake(store, now_ms=NOW_MS)
    pins = {
        date: pin_demo_offsets(store, now_ms=NOW_MS, at_ms=DATE_MS[date]).snapshot_id
        for date in (DATES[0], DATES[2])
    }
    port = free_port()
    settings = StackSettings(
        project=ROOT,
        airflow_home=home / "airflow-home",
        lake_uri=f"s3://{BUCKET}/{store.prefix.rstrip('/')}",
        s3_endpoint=s3_server.endpoint_url,
        config=ROOT / "config" / "demo.yaml",
        offsets_source="lake",  # never asked by a backfill run
        api_port=port,
        extra={
            "KAFKA_SEGMENTS_SCHEDULE": "@daily",
            "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",  # no run of "today": the test makes one
            "KAFKA_SEGMENTS_LAKE_TURN_POKE_SECONDS": "10",
        },
    )
    env = airflow_environment(settings)
    log = home / "airflow.log"
    with scheduler_and_api_server(env, log=log, port=port) as api:
        yield Stack(env, api, log, store, pins)


def backfill(stack: Stack, *extra: str, dates: tuple[str, ...] = DATES) -> None:
    """``airflow backfill create`` as docs/airflow.md writes it (and ``extra``)."""
    args = ["airflow", "backfill", "create", "--dag-id", MAINTENANCE_DAG_ID]
    args += ["--from-date", dates[0], "--to-date", dates[-1], *extra]
    run_step("airflow backfill create", args, env=stack.env, log=stack.log)


def backfill_runs(stack: Stack) -> list[dict[str, Any]]:
    document = api_request(stack.api, f"/api/v2/dags/{MAINTENANCE_DAG_ID}/dagRuns?limit=50")
    return [run for run in document["dag_runs"] if run["run_type"] == "backfill"]


def backfills_completed(stack: Stack) -> bool:
    """Whether every backfill of the DAG is completed (only then may another one be created)."""
    document = api_request(stack.api, f"/api/v2/backfills?dag_id={MAINTENANCE_DAG_ID}")
    return all(backfill["completed_at"] is not None for backfill in document["backfills"])


def lake_reports(stack: Stack) -> list[dict[str, Any]]:
    keys = [
        meta.key for meta in stack.store.list("_kafka_segments/runs/") if meta.key.endswith("/report.json")
    ]
    return [json.loads(stack.store.get(key)) for key in keys]


def wait_for_reports(stack: Stack, count: int) -> list[dict[str, Any]]:
    """Wait until the three backfill runs succeeded and the lake holds ``count`` run reports; returns them."""

    def done() -> bool:
        runs = backfill_runs(stack)
        failed = [run["dag_run_id"] for run in runs if run["state"] == "failed"]
        if failed:
            pytest.fail(f"backfill runs failed: {failed}\n{log_tail(stack.log)}")
        finished = len(runs) == len(DATES) and all(run["state"] == "success" for run in runs)
        return finished and len(lake_reports(stack)) >= count and backfills_completed(stack)

    wait_until("backfill runs", done, timeout_s=RUN_TIMEOUT_S, interval_s=2)
    reports = lake_reports(stack)
    assert len(reports) == count
    return reports


def by_date(reports: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One report per backfill date (from the Airflow run id the lake run is labelled with)."""
    found: dict[str, dict[str, Any]] = {}
    for report in reports:
        labels = report["labels"]
        assert labels["airflow_run_type"] == "backfill", labels
        date = labels["airflow_run_id"].removeprefix("backfill__")[:10]
        assert date not in found, f"two reports for {date}"
        found[date] = report
    return found


def deleted(report: dict[str, Any]) -> dict[str, dict[str, int]]:
    """``topic-partition`` → segments deleted by reason."""
    return {
        f"{p['topic']}-{p['partition']}": {reason: item["segments"] for reason, item in p["deleted"].items()}
        for p in report["plan"]["partitions"]
        if p["deleted"]
    }


def test_backfill_runs_each_date_with_its_pinned_offsets_and_a_rerun_changes_nothing(stack: Stack) -> None:
    backfill(stack)
    reports = by_date(wait_for_reports(stack, len(DATES)))
    assert sorted(reports) == list(DATES)
    for date, report in reports.items():
        assert report["now_ms"] == DATE_MS[date], date
        assert report["outcome"] == "committed", (date, report["outcome"])
        assert report["validation"]["success"] is True, date
    assert [reports[date]["committed_version"] for date in DATES] == [2, 3, 4]

    offsets = {date: report["offsets_snapshot"] for date, report in reports.items()}
    assert (offsets[DATES[0]]["origin"], offsets[DATES[0]]["id"]) == ("pinned", stack.pins[DATES[0]])
    assert (offsets[DATES[1]]["origin"], offsets[DATES[1]]["id"]) == ("pinned-earlier", stack.pins[DATES[0]])
    assert (offsets[DATES[2]]["origin"], offsets[DATES[2]]["id"]) == ("pinned", stack.pins[DATES[2]])

    assert deleted(reports[DATES[0]]) == {
        "clickstream-0": {"consumed": 2},
        "clickstream-2": {"log-start-offset": 1, "consumed": 1},
    }
    assert deleted(reports[DATES[1]]) == {"clickstream-1": {"retention.ms": 1}}
    assert deleted(reports[DATES[2]]) == {
        "clickstream-0": {"consumed": 2},
        "clickstream-1": {"retention.ms": 1},
        "clickstream-2": {"consumed": 1},
    }
    last_run = reports[DATES[2]]["labels"]["airflow_run_id"]
    xcom = api_request(
        stack.api,
        f"/api/v2/dags/{MAINTENANCE_DAG_ID}/dagRuns/{quote(last_run, safe='')}"
        "/taskInstances/report/xcomEntries/return_value?deserialize=true",
    )
    assert _xcom_value(xcom)["run_id"] == reports[DATES[2]]["run_id"]
    assert head_version(stack.store) == 4

    backfill(stack, "--reprocess-behavior", "completed", dates=REPROCESSED)
    first_runs = {report["run_id"] for report in reports.values()}
    reruns = by_date(
        [r for r in wait_for_reports(stack, len(DATES) + len(REPROCESSED)) if r["run_id"] not in first_runs]
    )
    assert sorted(reruns) == list(REPROCESSED)
    for date, rerun in reruns.items():
        assert rerun["now_ms"] == DATE_MS[date], date
        assert rerun["outcome"] == "nothing to change", (date, rerun["outcome"])
        assert rerun["plan"]["totals"]["segments_deleted"] == 0, date
    assert head_version(stack.store) == 4


def test_a_backfill_and_a_scheduled_run_take_turns_on_the_lake_in_date_order(stack: Stack) -> None:
    backfill(stack, dates=NEXT_DATES)
    runs = [f"backfill__{date}T00:00:00+00:00" for date in NEXT_DATES]
    wait_until(
        "a backfill run has the lake",
        lambda: any(_done(stack, run, "recover") for run in runs),
        timeout_s=RUN_TIMEOUT_S,
    )
    run_step(
        "a scheduled run",
        [sys.executable, str(SCHEDULED_RUN), MAINTENANCE_DAG_ID, SCHEDULED.isoformat()],
        env=stack.env,
        log=stack.log,
    )
    runs.append(scheduled_run_id(SCHEDULED))

    def finished() -> bool:
        states = [_run(stack, run)["state"] for run in runs]
        if "failed" in states:
            pytest.fail(f"runs failed: {dict(zip(runs, states, strict=True))}\n{log_tail(stack.log)}")
        return states == ["success"] * len(runs)

    wait_until("backfill and scheduled runs", finished, timeout_s=RUN_TIMEOUT_S, interval_s=2)
    tasks = {run: _task_instances(stack, run) for run in runs}
    assert [tasks[run]["commit"]["try_number"] for run in runs] == [1] * len(runs)  # no conflict, no retry
    for earlier, later in itertools.pairwise(runs):  # one at a time, in date order
        started = datetime.fromisoformat(tasks[later]["snapshot_offsets"]["start_date"])
        assert started >= datetime.fromisoformat(tasks[earlier]["report"]["end_date"]), (earlier, later)
    reports = [_xcom_value(_report_xcom(stack, run)) for run in runs]
    versions = [report["committed_version"] for report in reports if report["committed_version"] is not None]
    assert versions == sorted(versions)
    assert all(report["outcome"] in {"committed", "nothing to change"} for report in reports)


def _run(stack: Stack, run_id: str) -> dict[str, Any]:
    path = f"/api/v2/dags/{MAINTENANCE_DAG_ID}/dagRuns/{quote(run_id, safe='')}"
    document: dict[str, Any] = api_request(stack.api, path)
    return document


def _task_instances(stack: Stack, run_id: str) -> dict[str, dict[str, Any]]:
    path = f"/api/v2/dags/{MAINTENANCE_DAG_ID}/dagRuns/{quote(run_id, safe='')}/taskInstances"
    return {task["task_id"]: task for task in api_request(stack.api, path)["task_instances"]}


def _done(stack: Stack, run_id: str, task_id: str) -> bool:
    """Whether the run exists and its task succeeded."""
    return _task_instances(stack, run_id).get(task_id, {}).get("state") == "success"


def _report_xcom(stack: Stack, run_id: str) -> dict[str, Any]:
    path = f"/api/v2/dags/{MAINTENANCE_DAG_ID}/dagRuns/{quote(run_id, safe='')}"
    entry: dict[str, Any] = api_request(
        stack.api, f"{path}/taskInstances/report/xcomEntries/return_value?deserialize=true"
    )
    return entry


def _xcom_value(entry: dict[str, Any]) -> dict[str, Any]:
    value = entry["value"]
    parsed: dict[str, Any] = json.loads(value) if isinstance(value, str) else value
    return parsed
