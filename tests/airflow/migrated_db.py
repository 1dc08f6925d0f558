"""A migrated, empty Airflow metadata database, made once per test session and copied into every test
stack's ``AIRFLOW_HOME`` instead of running ``airflow db migrate`` there (an Airflow CLI process: some 6 s of
CPU, 7-16 s on a loaded 2-core machine, per stack).

The session's own database (``conftest.airflow_db``: ``airflow db reset`` in this process) is saved as the
template right after the reset, before any test writes to it. ``airflow db reset`` and ``airflow db migrate``
of a new database both create the tables from the ORM, stamp the migration head and add the default pool
and log templates: the two databases have the same tables, indexes and rows
(``test_migrated_db.py`` compares them). SQLite's online backup copies them, so a database in WAL mode
whose latest pages are still in its ``-wal`` file is copied whole.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from orchestration.demo_stack import StackSettings, airflow_environment, scheduler_and_api_server

DATABASE_NAME = "airflow.db"
"""The file of Airflow's default ``[database] sql_alchemy_conn`` in ``AIRFLOW_HOME``, which the stacks use."""


class MigratedDatabaseError(Exception):
    """The copy would replace a database that is already there (``target``)."""

    def __init__(self, target: Path) -> None:
        self.target = target
        super().__init__(f"{target} exists: a stack's metadata database is copied into a new AIRFLOW_HOME")


def copy_database(source: Path, target: Path) -> Path:
    """``source``'s content in a new file ``target`` (SQLite's online backup); returns ``target``.

    Raises:
        MigratedDatabaseError: ``target`` exists.
    """
    if target.exists():
        raise MigratedDatabaseError(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with (
        contextlib.closing(sqlite3.connect(source)) as reader,
        contextlib.closing(sqlite3.connect(target)) as writer,
    ):
        reader.backup(writer)
    return target


def install_migrated_database(template: Path, airflow_home: Path) -> Path:
    """The template copied as the metadata database of a new stack's ``airflow_home``; returns its path.

    Raises:
        MigratedDatabaseError: ``airflow_home`` already has one.
    """
    return copy_database(template, airflow_home / DATABASE_NAME)


@contextlib.contextmanager
def throwaway_stack(
    settings: StackSettings, template: Path | None, *, log: Path
) -> Iterator[tuple[dict[str, str], str]]:
    """Airflow's scheduler and API server (on ``settings.api_port``) for a test, on a copy of ``template``
    (no ``airflow db migrate``), killed at the end; yields the stack's environment and the API's base URL.
    ``template`` ``None``: the stack's database is the empty one ``settings.database_url`` names (PostgreSQL),
    which ``airflow db migrate`` migrates first."""
    if template is not None:
        install_migrated_database(template, settings.airflow_home)
    env = airflow_environment(settings)
    with scheduler_and_api_server(
        env, log=log, port=settings.api_port, migrated=template is not None, stop_timeout_s=0
    ) as api:
        yield env, api
