"""The stacks' metadata database settings and the throwaway PostgreSQL server's preconditions
(``orchestration.metadata_db``); ``tests/airflow/test_postgres_stack.py`` runs the server and Airflow on
it."""

from __future__ import annotations

from pathlib import Path

import pytest
from orchestration import metadata_db
from orchestration.demo_stack import StackSettings, airflow_environment
from orchestration.metadata_db import PostgresServer, database_settings

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
URL = "postgresql+psycopg2://postgres@127.0.0.1:5433/airflow"


def test_a_stack_on_postgresql_connects_to_its_url_without_sqlites_connect_arguments(tmp_path: Path) -> None:
    settings = StackSettings(
        project=ROOT, airflow_home=tmp_path, lake_uri="/lake", s3_endpoint=None, config=None, database_url=URL
    )
    env = airflow_environment(settings, base={})
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == URL
    assert "AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS" not in env  # sqlite3.connect's keyword arguments
    assert env["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
    assert "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN" not in database_settings(None)  # SQLite in AIRFLOW_HOME


def test_the_servers_url_is_loopback_psycopg2_as_the_superuser(tmp_path: Path) -> None:
    server = PostgresServer(bin_dir=tmp_path, folder=tmp_path, port=5433)
    assert server.url("airflow") == URL


def test_without_postgresqls_binaries_the_reason_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(metadata_db, "DEBIAN_POSTGRES", tmp_path / "none")
    monkeypatch.setenv("PATH", str(tmp_path))
    reason = metadata_db.unavailable_reason()
    assert reason is not None
    assert "initdb" in reason
    assert "\n" not in reason
    with (
        pytest.raises(metadata_db.PostgresError, match="binaries are not installed"),
        metadata_db.running_postgres(port=1, log=tmp_path / "log"),
    ):
        pass


def test_the_newest_debian_version_is_preferred(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for version in ("9", "15", "13"):
        (tmp_path / version / "bin").mkdir(parents=True)
        (tmp_path / version / "bin" / "initdb").touch()
    monkeypatch.setattr(metadata_db, "DEBIAN_POSTGRES", tmp_path)
    assert metadata_db.postgres_bin() == tmp_path / "15" / "bin"
