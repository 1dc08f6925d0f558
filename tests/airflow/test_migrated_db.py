"""The migrated database the test stacks copy (``migrated_db``): what ``airflow db migrate`` makes in a new
``AIRFLOW_HOME``, and copied whole."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
from migrated_db import MigratedDatabaseError, copy_database, install_migrated_database
from orchestration.demo_stack import StackSettings, airflow_environment, run_step

pytestmark = pytest.mark.airflow

ROOT = Path(__file__).resolve().parents[2]
VOLATILE = {"created_at", "updated_at"}
"""Columns holding when a row was written."""


def contents(database: Path) -> tuple[set[tuple[str, str, str]], dict[str, list[tuple[object, ...]]]]:
    """The database's tables and indexes (type, name, SQL), and every table's rows without ``VOLATILE``."""
    with contextlib.closing(sqlite3.connect(database)) as connection:
        schema = set(
            connection.execute("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        )
        rows = {}
        for (table,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            columns = [
                c[1] for c in connection.execute(f'PRAGMA table_info("{table}")') if c[1] not in VOLATILE
            ]
            selected = ", ".join(f'"{c}"' for c in columns)
            rows[table] = sorted(connection.execute(f'SELECT {selected} FROM "{table}"'), key=repr)
    return schema, rows


def test_a_stack_starts_from_what_airflow_db_migrate_makes(migrated_database: Path, tmp_path: Path) -> None:
    """The session's database right after ``airflow db reset`` in the test process, copied, has the tables,
    indexes and rows (the migration head, the default pool, the log templates) of a new stack's
    ``airflow db migrate``."""
    settings = StackSettings(
        project=ROOT,
        airflow_home=tmp_path / "migrated",
        lake_uri=str(tmp_path / "lake"),
        s3_endpoint=None,
        config=None,
        offsets_source=None,
    )
    run_step(
        "airflow db migrate",
        ["airflow", "db", "migrate"],
        env=airflow_environment(settings),
        log=tmp_path / "log",
    )
    copied = install_migrated_database(migrated_database, tmp_path / "copied")

    migrated_schema, migrated_rows = contents(settings.airflow_home / "airflow.db")
    copied_schema, copied_rows = contents(copied)
    assert copied_schema == migrated_schema
    assert copied_rows == migrated_rows
    assert copied_rows["alembic_version"] != []
    assert [row[1] for row in copied_rows["slot_pool"]] == ["default_pool"]


def test_a_copy_holds_what_is_still_in_the_write_ahead_log(tmp_path: Path) -> None:
    """Airflow's SQLite databases are in WAL mode: until a checkpoint, committed rows live in ``-wal`` only,
    which a copy of the file alone would lose."""
    source = tmp_path / "source.db"
    with contextlib.closing(sqlite3.connect(source)) as writer:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("CREATE TABLE t (v INTEGER)")
        writer.executemany("INSERT INTO t VALUES (?)", [(v,) for v in range(100)])
        writer.commit()
        assert (tmp_path / "source.db-wal").stat().st_size > 0

        copy = copy_database(source, tmp_path / "copy.db")

    with contextlib.closing(sqlite3.connect(copy)) as reader:
        assert reader.execute("SELECT count(*), sum(v) FROM t").fetchone() == (100, 4950)


def test_a_database_that_is_there_is_never_replaced(tmp_path: Path) -> None:
    source = tmp_path / "source.db"
    with contextlib.closing(sqlite3.connect(source)) as writer:
        writer.execute("CREATE TABLE t (v INTEGER)")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "airflow.db").write_bytes(b"precious")

    with pytest.raises(MigratedDatabaseError, match="exists") as refused:
        install_migrated_database(source, tmp_path / "home")

    assert refused.value.target == tmp_path / "home" / "airflow.db"
    assert (tmp_path / "home" / "airflow.db").read_bytes() == b"precious"
