"""Connection settings of the demo and test stacks' SQLite metadata database (Airflow imports them by name:
``[database] sql_alchemy_connect_args = orchestration.sqlite_settings.CONNECT_ARGS``). Production
deployments use PostgreSQL (docker-compose.yaml) and never read this.

SQLite lets one writer in at a time, and the stack's scheduler, API server, task processes and
``airflow backfill create`` all write. Two things made a writer fail with "database is locked" on a loaded
2-core machine:

* Python waits 5 s for the lock by default: here a writer waits up to a minute (``timeout``);
* no wait helps a transaction that reads first and writes later, when another process wrote in between:
  in WAL mode (Airflow turns it on) its snapshot is stale, and SQLite refuses the upgrade at once
  (``SQLITE_BUSY_SNAPSHOT``). ``airflow backfill create --reprocess-behavior completed`` does exactly that
  in a savepoint (``session.begin_nested()``: read the run, clear its task instances), and a failure there
  leaves the backfill created without its runs. So every transaction that may write takes the write lock
  when it begins (``BEGIN IMMEDIATE``, also before a savepoint that opens a transaction), where a busy
  database is waited for; reads outside a transaction never wait.
"""

from __future__ import annotations

import sqlite3
from typing import Any

LOCK_WAIT_S = 60


class _Cursor(sqlite3.Cursor):
    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        _begin_before_savepoint(self.connection, sql)
        super().execute(sql, parameters)
        return self


class ImmediateConnection(sqlite3.Connection):
    """A connection whose transactions begin with ``BEGIN IMMEDIATE``: Python's sqlite3 opens one before a
    data-changing statement (``isolation_level``), and this class before a ``SAVEPOINT`` outside one."""

    def cursor(self, factory: Any = _Cursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        _begin_before_savepoint(self, sql)
        return super().execute(sql, parameters)


def _begin_before_savepoint(connection: sqlite3.Connection, sql: str) -> None:
    if not connection.in_transaction and sql.lstrip()[:9].upper() == "SAVEPOINT":
        sqlite3.Connection.execute(connection, "BEGIN IMMEDIATE")


CONNECT_ARGS: dict[str, object] = {
    "timeout": LOCK_WAIT_S,
    "isolation_level": "IMMEDIATE",
    "factory": ImmediateConnection,
}
"""``sqlite3.connect`` keyword arguments (Airflow adds ``check_same_thread`` itself)."""
