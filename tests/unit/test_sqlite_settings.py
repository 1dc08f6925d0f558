"""The stack's SQLite connections wait for a busy database instead of failing with "database is locked",
also in a savepoint that reads and then writes while another process writes (what
``airflow backfill create --reprocess-behavior completed`` does while the scheduler works)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from orchestration.sqlite_settings import CONNECT_ARGS, ImmediateConnection

pytestmark = pytest.mark.unit


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "airflow.db"
    with sqlite3.connect(path, isolation_level=None) as setup:
        setup.execute("PRAGMA journal_mode=WAL")  # as Airflow sets it
        setup.execute("CREATE TABLE task_reschedule (id INTEGER PRIMARY KEY, ti TEXT)")
        setup.execute("INSERT INTO task_reschedule (ti) VALUES ('a'), ('b')")
    return path


def _other_writer(path: Path, done: threading.Event) -> threading.Thread:
    """Another process of the stack: one write, waiting for the lock like Airflow's connections do."""

    def write() -> None:
        with sqlite3.connect(path, timeout=30) as other:
            other.execute("INSERT INTO task_reschedule (ti) VALUES ('c')")
        done.set()

    thread = threading.Thread(target=write)
    thread.start()
    return thread


def test_a_savepoint_that_reads_then_writes_waits_for_the_lock_instead_of_failing(database: Path) -> None:
    connection = sqlite3.connect(database, **CONNECT_ARGS)  # type: ignore[call-overload]
    connection.execute("SAVEPOINT sa_savepoint_1")  # session.begin_nested()
    assert connection.execute("SELECT count(*) FROM task_reschedule").fetchone() == (2,)
    written = threading.Event()
    writer = _other_writer(database, written)
    written.wait(timeout=1)

    connection.execute("DELETE FROM task_reschedule WHERE ti = 'a'")  # "database is locked" without the fix
    connection.execute("RELEASE SAVEPOINT sa_savepoint_1")
    connection.commit()
    writer.join(timeout=30)

    assert written.is_set()
    with sqlite3.connect(database) as check:
        assert sorted(row[0] for row in check.execute("SELECT ti FROM task_reschedule")) == ["b", "c"]


def test_every_write_transaction_begins_immediate_and_waits_a_minute() -> None:
    assert CONNECT_ARGS["factory"] is ImmediateConnection
    assert CONNECT_ARGS["isolation_level"] == "IMMEDIATE"
    assert isinstance(CONNECT_ARGS["timeout"], int)
    assert CONNECT_ARGS["timeout"] >= 60
