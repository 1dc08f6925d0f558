"""The stack of the backfill tests (``test_backfill.py``, ``test_backfill_turns.py``, one stack per file so
that xdist runs the two files on two workers): the demo lake on the embedded S3 server, built for
2025-11-21T00:00Z with offsets pinned for 11-19 (what the ``lake`` source saw then: analytics at 90/25/80,
billing at 150) and 11-21 (analytics at 170/25/130), and Airflow's scheduler and API server (SQLite,
LocalExecutor) on a fresh home, with the retention step inline (Variable ``kafka_segments_engine``: the
tests' claims are the DAG's; ``test_maintenance_dag.py`` runs the DAG's Spark job)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kafka_segments.demo import DAY_MS, EmbeddedS3, build_demo_lake, pin_demo_offsets
from kafka_segments.storage import S3Store
from migrated_db import throwaway_stack
from orchestration.demo_stack import (
    MAINTENANCE_DAG_ID,
    StackSettings,
    free_port,
    run_step,
)
from orchestration.rest_api import api_request
from s3_fixtures import BUCKET, new_s3_store

ROOT = Path(__file__).resolve().parents[2]
LAKE_NOW = datetime(2025, 11, 21, tzinfo=UTC)
NOW_MS = int(LAKE_NOW.timestamp() * 1000)
DATES = ("2025-11-19", "2025-11-20", "2025-11-21")
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


@contextmanager
def backfill_stack(s3_server: EmbeddedS3, home: Path, *, migrated_database: Path) -> Iterator[Stack]:
    """The demo lake with its two pinned snapshots, and Airflow's scheduler and API server in ``home``, on a
    copy of the session's migrated database (``migrated_db``); the stack is killed at the end."""
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
        extra={
            "KAFKA_SEGMENTS_SCHEDULE": "@daily",
            "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",  # no run of "today": the test makes one
            "KAFKA_SEGMENTS_LAKE_TURN_POKE_SECONDS": str(LAKE_TURN_POKE_S),
            "AIRFLOW_VAR_KAFKA_SEGMENTS_ENGINE": "inline",  # the claims are the DAG's, not Spark's
        },
    )
    log = home / "airflow.log"
    with throwaway_stack(settings, migrated_database, log=log) as (env, api):
        yield Stack(env, api, log, store, pins)


def backfill(stack: Stack, *extra: str, dates: tuple[str, ...] = DATES) -> None:
    """``airflow backfill create`` as docs/airflow.md writes it (and ``extra``)."""
    args = ["airflow", "backfill", "create", "--dag-id", MAINTENANCE_DAG_ID]
    args += ["--from-date", dates[0], "--to-date", dates[-1], *extra]
    run_step("airflow backfill create", args, env=stack.env, log=stack.log)


def dag_run_path(run_id: str) -> str:
    return f"/api/v2/dags/{MAINTENANCE_DAG_ID}/dagRuns/{quote(run_id, safe='')}"


def report_xcom(stack: Stack, run_id: str) -> dict[str, Any]:
    """The ``report`` task's XCom entry of the run (through the REST API)."""
    entry: dict[str, Any] = api_request(
        stack.api, f"{dag_run_path(run_id)}/taskInstances/report/xcomEntries/return_value?deserialize=true"
    )
    return entry


def xcom_value(entry: dict[str, Any]) -> dict[str, Any]:
    value = entry["value"]
    parsed: dict[str, Any] = json.loads(value) if isinstance(value, str) else value
    return parsed
