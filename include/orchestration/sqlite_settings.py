"""Connection settings of the demo and test stacks' SQLite metadata database (``[database]
sql_alchemy_connect_args = orchestration.sqlite_settings.CONNECT_ARGS``). SQLite's default 5 s lock wait is
not always enough on a loaded 2-core machine while ``airflow backfill create`` writes runs; a minute is."""

from __future__ import annotations

CONNECT_ARGS: dict[str, object] = {"timeout": 60}
"""``sqlite3.connect`` keyword arguments (Airflow adds ``check_same_thread`` itself)."""
