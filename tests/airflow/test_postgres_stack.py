"""Airflow 3 as production runs it: PostgreSQL as the metadata database and LocalExecutor running tasks in
parallel (``AIRFLOW__CORE__PARALLELISM`` 2), a real scheduler and API server (``backfill_stack``) on the demo
lake on the embedded S3 server, with SimpleAuthManager's ADMIN, USER and VIEWER accounts
(``rest_api_stack``). The PostgreSQL server is Debian's, started for this module (``initdb`` in a temporary
folder as an unprivileged user, a free loopback port: ``orchestration.metadata_db``), and the stack migrates
its empty database once (``airflow db migrate``); without PostgreSQL's binaries, or as root without a user
to run it as, the module skips with the reason.

The claims are the SQLite stacks', made by the same assertions: a backfill of three dates runs each date
with its pinned offsets (``test_backfill.py``) while a scheduled run waits beside it, and the four runs take
their turns on the lake one at a time in date order with no commit conflict (``test_backfill_turns.py``);
the delete-records DAG commits only for the users its Variable allows (``test_rest_api_safety.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import rest_api_stack
from backfill_stack import (
    DATES,
    Stack,
    assert_dates_applied,
    assert_took_turns,
    backfill_beside_a_scheduled_run,
    backfill_stack,
    by_date,
    lake_reports,
)
from kafka_segments.demo import EmbeddedS3
from orchestration.demo_stack import MAINTENANCE_DAG_ID, free_port
from orchestration.metadata_db import PostgresServer, running_postgres, unavailable_reason
from rest_api_stack import (
    assert_an_admin_commits_deletions,
    assert_only_allowed_users_commit_deletions,
    user_tokens,
    users_settings,
)

pytestmark = pytest.mark.airflow

DATABASE = "airflow"
SCHEDULED = datetime(2025, 11, 23, tzinfo=UTC)
"""The scheduled run's time, after the backfill's dates (the lake's turns go in date order)."""
REQUEST = {"version": 1, "partitions": [{"topic": "clickstream", "partition": 0, "offset": 200}]}
"""Within clickstream-0 (240 records; its log start offset is 160 once the backfill ran, 0 before)."""


@pytest.fixture(scope="module")
def postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    log = tmp_path_factory.mktemp("postgres") / "steps.log"
    with running_postgres(port=free_port(), log=log) as server:
        yield server


@pytest.fixture(scope="module")
def stack(
    s3_server: EmbeddedS3, tmp_path_factory: pytest.TempPathFactory, postgres: PostgresServer
) -> Iterator[Stack]:
    """The demo lake with two pinned snapshots, and Airflow's scheduler and API server on a new PostgreSQL
    database, with the three accounts (requests as the ADMIN)."""
    home = tmp_path_factory.mktemp("postgres-stack")
    url = postgres.create_database(DATABASE)
    extra = {
        **users_settings(home),
        # the scheduler's log server (default 8793) on a port of its own: other Airflows run on this host
        "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
    }
    with backfill_stack(s3_server, home, migrated_database=None, database_url=url, extra=extra) as running:
        yield dataclasses.replace(running, token=user_tokens(running.api)["admin"])


@pytest.fixture(scope="module")
def users(stack: Stack) -> rest_api_stack.Stack:
    """The same stack, for requests as each of the three accounts."""
    return rest_api_stack.Stack(stack.api, stack.log, stack.store, user_tokens(stack.api))


def test_a_backfill_of_three_dates_and_a_scheduled_run_take_turns_on_postgres(
    stack: Stack, postgres: PostgresServer
) -> None:
    runs = backfill_beside_a_scheduled_run(stack, dates=DATES, when=SCHEDULED)

    # the stack's metadata is in PostgreSQL (not in a SQLite file of its AIRFLOW_HOME)
    assert postgres.query("SELECT dag_id FROM backfill", database=DATABASE) == [MAINTENANCE_DAG_ID]
    assert_took_turns(stack, runs)
    backfilled = [r for r in lake_reports(stack) if r["labels"]["airflow_run_type"] == "backfill"]
    assert_dates_applied(stack, by_date(backfilled))


def test_only_allowed_users_commit_deletions_on_postgres(users: rest_api_stack.Stack) -> None:
    assert_only_allowed_users_commit_deletions(users, REQUEST)
    assert_an_admin_commits_deletions(users, REQUEST)
