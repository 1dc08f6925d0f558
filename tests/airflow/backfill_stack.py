"""The stack of the backfill tests (``test_backfill.py``, ``test_backfill_turns.py``, one stack per file so
that xdist runs the two files on two workers): the demo lake on the embedded S3 server, built for
2025-11-21T00:00Z with offsets pinned for 11-19 (what the ``lake`` source saw then: analytics at 90/25/80,
billing at 150) and 11-21 (analytics at 170/25/130), and Airflow's scheduler and API server (SQLite,
LocalExecutor) on a fresh home, with the retention step inline (Variable ``kafka_segments_engine``: the
tests' claims are the DAG's; ``test_maintenance_dag.py`` runs the DAG's Spark job). The stack's metadata
database is a copy of the session's migrated SQLite, or an empty PostgreSQL database it migrates
(``test_postgres_stack.py``). What the backfill of ``DATES`` must leave, and how runs must take turns on the
lake, are written once here (``assert_dates_applied``, ``assert_took_turns``) for both stacks."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from kafka_segments.demo import DAY_MS, EmbeddedS3, build_demo_lake, pin_demo_offsets
from kafka_segments.storage import S3Store
from migrated_db import throwaway_stack
from orchestration.demo_stack import (
    MAINTENANCE_DAG_ID,
    StackSettings,
    free_port,
    log_tail,
    run_step,
    wait_until,
)
from orchestration.rest_api import api_request
from s3_fixtures import BUCKET, new_s3_store
from scheduled_run import scheduled_run_id

ROOT = Path(__file__).resolve().parents[2]
SCHEDULED_RUN = Path(__file__).with_name("scheduled_run.py")
LAKE_NOW = datetime(2025, 11, 21, tzinfo=UTC)
NOW_MS = int(LAKE_NOW.timestamp() * 1000)
DATES = ("2025-11-19", "2025-11-20", "2025-11-21")
COMMIT_CONF = '{"dry_run": false}'
"""The backfills' ``--dag-run-conf``: the ``dry_run`` switch off (docs/airflow.md: backfills read it)."""
DATE_MS = {date: NOW_MS - (2 - index) * DAY_MS for index, date in enumerate(DATES)}
PINNED = (DATES[0], DATES[2])
RUN_TIMEOUT_S = 1200
LAKE_TURN_POKE_S = 20
"""Seconds between two looks of a run waiting for its turn (the DAG's default is 30). Every look is a task
process of its own (about 2 s of CPU with its Execution API calls), and a waiting run takes its turn on
average half this interval after the run before it ended: 20 s looks half as often as 10 s did (19 looks of
waiting runs in ``test_backfill.py``) for some 5 s more per handover."""
POLL_S = 2
"""Seconds between two looks of a test at its runs (each lists the DAG's runs through the REST API, some
0.1 s of the API server's time on a loaded machine). With the tasks' imports preloaded
(``orchestration.task_preload``) a run takes some 7 s, so a look every 5 s came on average 2.5 s after
the runs had ended; every 2 s makes some 30 requests in ``test_backfill.py``."""


@dataclass(frozen=True, slots=True)
class Stack:
    env: dict[str, str]
    api: str
    log: Path
    store: S3Store
    pins: dict[str, str]
    """Date → the snapshot id pinned for it."""
    token: str | None = None
    """An ADMIN's REST API token; ``None``: the stack lets every request in as an admin."""

    def request(self, path: str, **kwargs: Any) -> Any:
        """One REST API request (``api_request``) as the stack's admin."""
        return api_request(self.api, path, token=self.token, **kwargs)


@contextmanager
def backfill_stack(
    s3_server: EmbeddedS3,
    home: Path,
    *,
    migrated_database: Path | None,
    database_url: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> Iterator[Stack]:
    """The demo lake with its two pinned snapshots, and Airflow's scheduler and API server in ``home``, on a
    copy of the session's migrated database (``migrated_db``), or (``migrated_database`` ``None``) on the
    empty database ``database_url`` names, migrated first; ``extra``: more Airflow settings. The stack is
    killed at the end."""
    store = new_s3_store(s3_server)
    build_demo_lake(store, now_ms=NOW_MS)
    pins = {date: pin_demo_offsets(store, now_ms=NOW_MS, at_ms=DATE_MS[date]).snapshot_id for date in PINNED}
    port = free_port()
    settings = StackSettings(
        project=ROOT,
        airflow_home=home / "airflow-home",
        lake_uri=f"s3://{BUCKET}/{store.prefix.rstrip('/')}",
        s3_endpoint=s3_server.endpoint_url,
        config=ROOT / "config" / "demo.yaml",
        offsets_source="lake",  # never asked by a backfill run
        api_port=port,
        database_url=database_url,
        extra={
            "KAFKA_SEGMENTS_SCHEDULE": "@daily",
            "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",  # no run of "today": the test makes one
            "KAFKA_SEGMENTS_LAKE_TURN_POKE_SECONDS": str(LAKE_TURN_POKE_S),
            "AIRFLOW_VAR_KAFKA_SEGMENTS_ENGINE": "inline",  # the claims are the DAG's, not Spark's
            **(extra or {}),
        },
    )
    log = home / "airflow.log"
    with throwaway_stack(settings, migrated_database, log=log) as (env, api):
        yield Stack(env, api, log, store, pins)


def backfill(stack: Stack, *extra: str, dates: tuple[str, ...] = DATES) -> None:
    """``airflow backfill create`` as docs/airflow.md writes it (committing: the ``dry_run`` switch off; and
    ``extra``)."""
    args = ["airflow", "backfill", "create", "--dag-id", MAINTENANCE_DAG_ID]
    args += ["--from-date", dates[0], "--to-date", dates[-1], "--dag-run-conf", COMMIT_CONF, *extra]
    run_step("airflow backfill create", args, env=stack.env, log=stack.log)


def dag_run_path(run_id: str) -> str:
    return f"/api/v2/dags/{MAINTENANCE_DAG_ID}/dagRuns/{quote(run_id, safe='')}"


def report_xcom(stack: Stack, run_id: str) -> dict[str, Any]:
    """The ``report`` task's XCom entry of the run (through the REST API)."""
    entry: dict[str, Any] = stack.request(
        f"{dag_run_path(run_id)}/taskInstances/report/xcomEntries/return_value?deserialize=true"
    )
    return entry


def xcom_value(entry: dict[str, Any]) -> dict[str, Any]:
    value = entry["value"]
    parsed: dict[str, Any] = json.loads(value) if isinstance(value, str) else value
    return parsed


def dag_run(stack: Stack, run_id: str) -> dict[str, Any]:
    document: dict[str, Any] = stack.request(dag_run_path(run_id))
    return document


def task_instances(stack: Stack, run_id: str) -> dict[str, dict[str, Any]]:
    path = f"{dag_run_path(run_id)}/taskInstances"
    return {task["task_id"]: task for task in stack.request(path)["task_instances"]}


def task_done(stack: Stack, run_id: str, task_id: str) -> bool:
    """Whether the run exists and its task succeeded."""
    return task_instances(stack, run_id).get(task_id, {}).get("state") == "success"


def add_scheduled_run(stack: Stack, when: datetime) -> str:
    """A scheduled run of the DAG at ``when``, created as the scheduler does (``scheduled_run.py``); returns
    its run id."""
    args = [sys.executable, str(SCHEDULED_RUN), MAINTENANCE_DAG_ID, when.isoformat()]
    run_step("a scheduled run", args, env=stack.env, log=stack.log)
    return scheduled_run_id(when)


def wait_for_runs(stack: Stack, runs: list[str]) -> None:
    """Wait until every run in ``runs`` succeeded (fail the test as soon as one failed)."""

    def finished() -> bool:
        states = [dag_run(stack, run)["state"] for run in runs]
        if "failed" in states:
            pytest.fail(f"runs failed: {dict(zip(runs, states, strict=True))}\n{log_tail(stack.log)}")
        return states == ["success"] * len(runs)

    wait_until("backfill and scheduled runs", finished, timeout_s=RUN_TIMEOUT_S, interval_s=POLL_S)


def backfill_beside_a_scheduled_run(stack: Stack, *, dates: tuple[str, ...], when: datetime) -> list[str]:
    """A backfill of ``dates`` (``backfill``) and, once one of its runs has the lake, a scheduled run at
    ``when``; waits until all succeeded and returns their run ids, the backfill's first (in date order)."""
    backfill(stack, dates=dates)
    runs = [f"backfill__{date}T00:00:00+00:00" for date in dates]
    wait_until(
        "a backfill run has the lake",
        lambda: any(task_done(stack, run, "recover") for run in runs),
        timeout_s=RUN_TIMEOUT_S,
    )
    runs.append(add_scheduled_run(stack, when))
    wait_for_runs(stack, runs)
    return runs


def assert_took_turns(stack: Stack, runs: list[str]) -> None:
    """The runs (in date order) had the lake one at a time, in that order, and none met a commit conflict."""
    tasks = {run: task_instances(stack, run) for run in runs}
    assert [tasks[run]["commit"]["try_number"] for run in runs] == [1] * len(runs)  # no conflict, no retry
    for earlier, later in itertools.pairwise(runs):  # one at a time, in date order
        started = datetime.fromisoformat(tasks[later]["snapshot_offsets"]["start_date"])
        assert started >= datetime.fromisoformat(tasks[earlier]["report"]["end_date"]), (earlier, later)
    reports = [xcom_value(report_xcom(stack, run)) for run in runs]
    versions = [report["committed_version"] for report in reports if report["committed_version"] is not None]
    assert versions == sorted(versions)
    assert all(report["outcome"] in {"committed", "nothing to change"} for report in reports)


def lake_reports(stack: Stack) -> list[dict[str, Any]]:
    keys = [
        meta.key for meta in stack.store.list("_kafka_segments/runs/") if meta.key.endswith("/report.json")
    ]
    return [json.loads(stack.store.get(key)) for key in keys]


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


def recover_log(stack: Stack, run_id: str) -> str:
    """The ``recover`` task's log of the run (every look of the sensor is in its first try's log)."""
    path = f"{dag_run_path(run_id)}/taskInstances/recover/logs/1?full_content=true"
    return json.dumps(stack.request(path))


def deleted(report: dict[str, Any]) -> dict[str, dict[str, int]]:
    """``topic-partition`` → segments deleted by reason."""
    return {
        f"{p['topic']}-{p['partition']}": {reason: item["segments"] for reason, item in p["deleted"].items()}
        for p in report["plan"]["partitions"]
        if p["deleted"]
    }


def assert_dates_applied(stack: Stack, reports: dict[str, dict[str, Any]]) -> None:
    """The backfill of ``DATES`` on the demo lake (``by_date`` of its lake reports): each date ran with its
    ``now``, its pinned offsets and the deletions the demo's configuration gives (``test_backfill.py``'s
    docstring lists them), committed versions 2 to 4 in date order, and each run after the first watched the
    one before it end."""
    assert sorted(reports) == list(DATES)
    for date, report in reports.items():
        assert report["now_ms"] == DATE_MS[date], date
        assert report["outcome"] == "committed", (date, report["outcome"])
        assert report["validation"]["success"] is True, date
        assert report["engine"] == "inline", date
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
    for date in DATES[1:]:  # the run next in line watched the one before it end (lake_turns.watch_holder)
        assert "next in line: watching" in recover_log(stack, reports[date]["labels"]["airflow_run_id"]), date
    last_run = reports[DATES[2]]["labels"]["airflow_run_id"]
    assert xcom_value(report_xcom(stack, last_run))["run_id"] == reports[DATES[2]]["run_id"]
