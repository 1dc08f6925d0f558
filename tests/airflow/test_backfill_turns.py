"""A backfill of the maintenance DAG and a scheduled run take turns on the lake
(``orchestration.lake_turns``), one at a time in date order, and none fails with a commit conflict: a real
scheduler and API server
(``backfill_stack``: SQLite, LocalExecutor, the retention step inline) on the demo lake on the embedded S3
server. The backfill is created exactly as docs/airflow.md writes the command (no ``--max-active-runs``).

In its own file, with its own stack, so that xdist runs it beside ``test_backfill.py`` on the other worker.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from backfill_stack import (
    POLL_S,
    RUN_TIMEOUT_S,
    Stack,
    backfill,
    backfill_stack,
    dag_run_path,
    report_xcom,
    xcom_value,
)
from kafka_segments.demo import EmbeddedS3
from orchestration.demo_stack import MAINTENANCE_DAG_ID, log_tail, run_step, wait_until
from orchestration.rest_api import api_request
from scheduled_run import scheduled_run_id

pytestmark = pytest.mark.airflow

NEXT_DATES = ("2025-11-22",)
SCHEDULED = datetime(2025, 11, 23, tzinfo=UTC)
"""A scheduled run's time after the backfill's dates (the lake's turns go in date order)."""
SCHEDULED_RUN = Path(__file__).with_name("scheduled_run.py")


@pytest.fixture(scope="module")
def stack(
    s3_server: EmbeddedS3, tmp_path_factory: pytest.TempPathFactory, migrated_database: Path
) -> Iterator[Stack]:
    """The demo lake with two pinned snapshots, and Airflow's scheduler and API server on a fresh SQLite."""
    home = tmp_path_factory.mktemp("backfill-turns")
    with backfill_stack(s3_server, home, migrated_database=migrated_database) as running:
        yield running


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

    wait_until("backfill and scheduled runs", finished, timeout_s=RUN_TIMEOUT_S, interval_s=POLL_S)
    tasks = {run: _task_instances(stack, run) for run in runs}
    assert [tasks[run]["commit"]["try_number"] for run in runs] == [1] * len(runs)  # no conflict, no retry
    for earlier, later in itertools.pairwise(runs):  # one at a time, in date order
        started = datetime.fromisoformat(tasks[later]["snapshot_offsets"]["start_date"])
        assert started >= datetime.fromisoformat(tasks[earlier]["report"]["end_date"]), (earlier, later)
    reports = [xcom_value(report_xcom(stack, run)) for run in runs]
    versions = [report["committed_version"] for report in reports if report["committed_version"] is not None]
    assert versions == sorted(versions)
    assert all(report["outcome"] in {"committed", "nothing to change"} for report in reports)


def _run(stack: Stack, run_id: str) -> dict[str, Any]:
    document: dict[str, Any] = api_request(stack.api, dag_run_path(run_id))
    return document


def _task_instances(stack: Stack, run_id: str) -> dict[str, dict[str, Any]]:
    path = f"{dag_run_path(run_id)}/taskInstances"
    return {task["task_id"]: task for task in api_request(stack.api, path)["task_instances"]}


def _done(stack: Stack, run_id: str, task_id: str) -> bool:
    """Whether the run exists and its task succeeded."""
    return _task_instances(stack, run_id).get(task_id, {}).get("state") == "success"
