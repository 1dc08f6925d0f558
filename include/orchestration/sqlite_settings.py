"""Connection settings of the demo and test stacks' SQLite metadata database (``[database]
sql_alchemy_connect_args = orchestration.sqlite_settings.CONNECT_ARGS``); production uses PostgreSQL.

Every Airflow process of the stack writes. A writer waits up to a minute for the lock (Python's default, 5 s,
is not enough on a loaded 2-core machine), and a transaction that may write takes the lock when it begins
(``BEGIN IMMEDIATE``, also before a savepoint that opens one): in WAL mode SQLite refuses at once, whatever
the wait, to upgrade a read snapshot that another writer made stale (``SQLITE_BUSY_SNAPSHOT``), which is
what ``airflow backfill create --reprocess-behavior completed`` hit (read a run, then clear it, in a
savepoint), leaving the backfill created without its runs.
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
