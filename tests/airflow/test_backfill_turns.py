"""A backfill of the maintenance DAG and a scheduled run take turns on the lake
(``orchestration.lake_turns``), one at a time in date order, and none fails with a commit conflict: a real
scheduler and API server
(``backfill_stack``: SQLite, LocalExecutor, the retention step inline) on the demo lake on the embedded S3
server. The backfill is created exactly as docs/airflow.md writes the command (no ``--max-active-runs``).

In its own file, with its own stack, so that xdist runs it beside ``test_backfill.py`` on the other worker.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from backfill_stack import Stack, assert_took_turns, backfill_beside_a_scheduled_run, backfill_stack
from kafka_segments.demo import EmbeddedS3

pytestmark = pytest.mark.airflow

NEXT_DATES = ("2025-11-22",)
SCHEDULED = datetime(2025, 11, 23, tzinfo=UTC)
"""A scheduled run's time after the backfill's dates (the lake's turns go in date order)."""


@pytest.fixture(scope="module")
def stack(
    s3_server: EmbeddedS3, tmp_path_factory: pytest.TempPathFactory, migrated_database: Path
) -> Iterator[Stack]:
    """The demo lake with two pinned snapshots, and Airflow's scheduler and API server on a fresh SQLite."""
    home = tmp_path_factory.mktemp("backfill-turns")
    with backfill_stack(s3_server, home, migrated_database=migrated_database) as running:
        yield running


def test_a_backfill_and_a_scheduled_run_take_turns_on_the_lake_in_date_order(stack: Stack) -> None:
    runs = backfill_beside_a_scheduled_run(stack, dates=NEXT_DATES, when=SCHEDULED)
    assert_took_turns(stack, runs)
