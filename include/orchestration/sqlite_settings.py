"""Connection settings of the demo and test stacks' SQLite metadata database (Airflow imports them by name:
``[database] sql_alchemy_connect_args = orchestration.sqlite_settings.CONNECT_ARGS``).

SQLite lets one writer in at a time; a second one waits ``timeout`` seconds (Python's default: 5) and then
fails with "database is locked". In a stack whose scheduler starts the first run of a backfill while
``airflow backfill create`` is still writing the next ones, 5 s is not always enough on a loaded 2-core
machine; a minute is. Production deployments use PostgreSQL (docker-compose.yaml) and never read this.
"""

from __future__ import annotations

CONNECT_ARGS: dict[str, object] = {"timeout": 60}
"""``sqlite3.connect`` keyword arguments (Airflow adds ``check_same_thread`` itself)."""
