"""Backfills of the maintenance DAG: ``airflow backfill create`` over three past dates, run by a real
scheduler and API server (``backfill_stack``: SQLite, LocalExecutor, the retention step inline) against the
demo lake on the embedded S3 server.

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

Reprocessing a date already applied (reprocess behavior ``completed`` over the first date, after the later
dates moved the lake on) clears its run; it gets a new lake run that finds nothing to change, and the lake's
head version does not move. (One date shows it: every date's rerun is the same case, and each run costs a
validation.) The rerun is created through the REST API (``POST /api/v2/backfills``), right after the first
backfill, whose runs have all ended, is closed with ``PUT /api/v2/backfills/{id}/cancel`` (Airflow's
scheduler marks it completed only on a 30 s tick, and refuses another backfill of the DAG until then;
docs/airflow.md).

The backfills are created exactly as docs/airflow.md writes the command (no ``--max-active-runs``: a
backfill starts up to 10 runs at once). ``test_backfill_turns.py`` puts a scheduled run next to a backfill.
"""

from __future__ import annotations

from collections.abc import Iterator
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.error import HTTPError

import pytest
from backfill_stack import (
    DATE_MS,
    DATES,
    POLL_S,
    RUN_TIMEOUT_S,
    Stack,
    assert_dates_applied,
    backfill,
    backfill_stack,
    by_date,
    lake_reports,
)
from kafka_segments.demo import EmbeddedS3
from kafka_segments.lake.history import head_version
from orchestration.demo_stack import MAINTENANCE_DAG_ID, log_tail, wait_until

pytestmark = pytest.mark.airflow

REPROCESSED = DATES[:1]
"""The date run again: the earliest, so its rerun comes after later dates moved the lake on."""


@pytest.fixture(scope="module")
def stack(
    s3_server: EmbeddedS3, tmp_path_factory: pytest.TempPathFactory, migrated_database: Path
) -> Iterator[Stack]:
    """The demo lake with two pinned snapshots, and Airflow's scheduler and API server on a fresh SQLite."""
    home = tmp_path_factory.mktemp("backfill")
    with backfill_stack(s3_server, home, migrated_database=migrated_database) as running:
        yield running


def backfill_runs(stack: Stack) -> list[dict[str, Any]]:
    document = stack.request(f"/api/v2/dags/{MAINTENANCE_DAG_ID}/dagRuns?limit=50")
    return [run for run in document["dag_runs"] if run["run_type"] == "backfill"]


def close_finished_backfills(stack: Stack) -> list[int]:
    """Cancel every backfill of the DAG that Airflow has not marked completed yet (call it once their runs
    have all ended: a cancel fails only queued runs, so it then just closes the backfill); returns their
    ids. Only a completed backfill lets another one of the DAG be created."""
    document = stack.request(f"/api/v2/backfills?dag_id={MAINTENANCE_DAG_ID}")
    closed = []
    for entry in document["backfills"]:
        if entry["completed_at"] is None:
            try:
                stack.request(f"/api/v2/backfills/{entry['id']}/cancel", method="PUT")
            except HTTPError as error:
                if error.code != HTTPStatus.CONFLICT:  # 409: the scheduler's tick completed it meanwhile
                    raise
            closed.append(entry["id"])
    return closed


def backfill_through_the_api(stack: Stack, *, dates: tuple[str, ...], reprocess_behavior: str) -> None:
    """``POST /api/v2/backfills``: the REST API's form of ``airflow backfill create``."""
    body = {
        "dag_id": MAINTENANCE_DAG_ID,
        "from_date": f"{dates[0]}T00:00:00Z",
        "to_date": f"{dates[-1]}T00:00:00Z",
        "reprocess_behavior": reprocess_behavior,
        "dag_run_conf": {"dry_run": False},
    }
    stack.request("/api/v2/backfills", method="POST", body=body)


def wait_for_reports(stack: Stack, count: int) -> list[dict[str, Any]]:
    """Wait until the three backfill runs succeeded and the lake holds ``count`` run reports; returns them."""

    def done() -> bool:
        runs = backfill_runs(stack)
        failed = [run["dag_run_id"] for run in runs if run["state"] == "failed"]
        if failed:
            pytest.fail(f"backfill runs failed: {failed}\n{log_tail(stack.log)}")
        finished = len(runs) == len(DATES) and all(run["state"] == "success" for run in runs)
        return finished and len(lake_reports(stack)) >= count

    wait_until("backfill runs", done, timeout_s=RUN_TIMEOUT_S, interval_s=POLL_S)
    reports = lake_reports(stack)
    assert len(reports) == count
    return reports


def test_backfill_runs_each_date_with_its_pinned_offsets_and_a_rerun_changes_nothing(stack: Stack) -> None:
    backfill(stack)
    reports = by_date(wait_for_reports(stack, len(DATES)))
    assert_dates_applied(stack, reports)
    assert head_version(stack.store) == 4

    assert close_finished_backfills(stack) in ([], [1])  # [] when the scheduler's tick came first
    backfill_through_the_api(stack, dates=REPROCESSED, reprocess_behavior="completed")
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
