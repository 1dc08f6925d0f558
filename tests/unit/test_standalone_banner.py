"""The standalone stack's banner and ``env.sh`` (``orchestration.shell_env``): everything a command next to
the running stack needs (endpoint, credentials, ``AIRFLOW_HOME``), and a shell that sources ``env.sh`` sees
the stack's settings."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest
from kafka_segments.demo.embedded_s3 import EMBEDDED_CREDENTIALS
from orchestration.demo_stack import StackSettings, airflow_environment
from orchestration.shell_env import stack_exports, stack_unsets, standalone_banner, write_env_script

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
ENDPOINT = "http://127.0.0.1:41234"


def settings(tmp_path: Path) -> StackSettings:
    return StackSettings(
        project=ROOT,
        airflow_home=tmp_path / "airflow-home",
        lake_uri="s3://kafka-segments-demo/lake",
        s3_endpoint=ENDPOINT,
        config=ROOT / "config" / "demo.yaml",
    )


def test_the_banner_names_the_endpoint_credentials_and_airflow_home(tmp_path: Path) -> None:
    env_script = tmp_path / "env.sh"
    text = standalone_banner(settings(tmp_path), port=8085, env_script=env_script, login="admin / pw")
    assert "http://localhost:8085" in text
    assert "login: admin / pw" in text
    assert f"AIRFLOW_HOME: {tmp_path / 'airflow-home'}" in text
    assert ENDPOINT in text
    assert EMBEDDED_CREDENTIALS["aws_access_key_id"] in text
    assert EMBEDDED_CREDENTIALS["aws_secret_access_key"] in text
    assert "s3://kafka-segments-demo/lake" in text
    assert f"source {env_script}" in text


def test_the_banner_names_a_postgresql_metadata_database(tmp_path: Path) -> None:
    url = "postgresql+psycopg2://postgres@127.0.0.1:5433/airflow"
    postgres = dataclasses.replace(settings(tmp_path), database_url=url)
    text = standalone_banner(postgres, port=8085, env_script=tmp_path / "env.sh", login="admin / pw")
    assert f"metadata DB:  {url}" in text
    assert "SQLite" not in text
    assert "SQLite" in standalone_banner(settings(tmp_path), port=8085, env_script=tmp_path, login="a / p")


def test_env_script_exports_what_the_stack_changes_and_a_shell_sees_it(tmp_path: Path) -> None:
    caller = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "AWS_PROFILE": "prod"}
    env = airflow_environment(settings(tmp_path), base=caller)
    exports = stack_exports(env, base=caller)
    assert "HOME" not in exports  # unchanged: not written
    assert exports["AIRFLOW_HOME"] == str(tmp_path / "airflow-home")
    assert exports["AWS_ENDPOINT_URL"] == ENDPOINT
    assert exports["AIRFLOW_CONN_AWS_DEFAULT"].startswith("{")  # JSON survives quoting
    script = write_env_script(tmp_path, exports, unset=stack_unsets(env, base=caller))
    assert script.stat().st_mode & 0o077 == 0  # it holds credentials
    shown = subprocess.run(
        ["bash", "-c", f"source {script} && env"],
        env=caller,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    seen = dict(line.split("=", 1) for line in shown.splitlines() if "=" in line)
    for name in (
        "AIRFLOW_HOME",
        "AWS_ENDPOINT_URL",
        "AWS_SECRET_ACCESS_KEY",
        "AIRFLOW_CONN_AWS_DEFAULT",
        "PATH",
    ):
        assert seen[name] == env[name], name
    assert seen["AIRFLOW__CORE__DAGS_FOLDER"] == str(ROOT / "dags")
    assert "AWS_PROFILE" not in seen  # the stack drops it; a profile would override the embedded server
