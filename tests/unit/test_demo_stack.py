"""The demo stack's process helpers (``orchestration.demo_stack``): the environment every Airflow process
gets, the output folder guard, and stopping a component with everything it started."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped, unused-ignore]
import pytest
from orchestration import settings as contract
from orchestration.demo_stack import (
    OUTPUT_MARKER,
    Component,
    DemoStackError,
    StackSettings,
    airflow_environment,
    fresh_output_dir,
    log_tail,
    run_step,
)

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def settings(tmp_path: Path, **overrides: object) -> StackSettings:
    values: dict[str, object] = {
        "project": ROOT,
        "airflow_home": tmp_path / "home",
        "lake_uri": "s3://bucket/lake",
        "s3_endpoint": "http://127.0.0.1:9999",
        "config": ROOT / "config" / "demo.yaml",
    }
    values.update(overrides)
    return StackSettings(**values)  # type: ignore[arg-type]


def test_the_environment_sets_the_dag_contracts_variables_and_connections(tmp_path: Path) -> None:
    env = airflow_environment(settings(tmp_path), base={"PATH": "/usr/bin"})
    assert env[f"AIRFLOW_VAR_{contract.LAKE_VARIABLE.upper()}"] == "s3://bucket/lake"
    assert env[f"AIRFLOW_VAR_{contract.CONFIG_VARIABLE.upper()}"] == str(ROOT / "config" / "demo.yaml")
    assert env[f"AIRFLOW_VAR_{contract.OFFSETS_SOURCE_VARIABLE.upper()}"] == "lake"
    aws = json.loads(env[f"AIRFLOW_CONN_{contract.AWS_CONN_ID.upper()}"])
    assert (aws["conn_type"], aws["extra"]["endpoint_url"]) == ("aws", "http://127.0.0.1:9999")
    spark = json.loads(env[f"AIRFLOW_CONN_{contract.SPARK_CONN_ID.upper()}"])
    assert spark == {"conn_type": "spark", "host": "local[*]"}
    assert env["AWS_ENDPOINT_URL"] == "http://127.0.0.1:9999"
    assert env["SPARK_LOCAL_IP"] == "127.0.0.1"
    assert env["PATH"].split(":")[0] == str(Path(env["PYSPARK_PYTHON"]).parent)  # airflow, spark-submit
    assert env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] == "http://127.0.0.1:8080/execution/"


def test_the_scheduler_forks_its_tasks_from_a_preloaded_fork_server(tmp_path: Path) -> None:
    env = airflow_environment(settings(tmp_path))
    assert env["AIRFLOW__SCHEDULER__MP_START_METHOD"] == "forkserver"
    assert env["AIRFLOW__SCHEDULER__MP_FORKSERVER_PRELOAD"] == "orchestration.task_preload"


def test_sqlite_writers_wait_up_to_a_minute_for_the_lock(tmp_path: Path) -> None:
    """The stack's Airflow processes share one SQLite file; Python's 5 s lock wait made a backfill create
    racing the scheduler fail with "database is locked" on a loaded machine."""
    import importlib

    path = airflow_environment(settings(tmp_path))["AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS"]
    module, _, name = path.rpartition(".")
    connect_args = getattr(importlib.import_module(module), name)
    assert isinstance(connect_args, dict)
    assert connect_args["timeout"] >= 60


def test_nothing_airflow_or_aws_profile_related_is_inherited(tmp_path: Path) -> None:
    """A test session's unit-test mode (data-interval timetables) or a developer's AWS profile would change
    what the stack does."""
    base = {
        "PATH": "/usr/bin",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "True",
        "AIRFLOW_HOME": "/elsewhere",
        "AIRFLOW_VAR_KAFKA_SEGMENTS_LAKE": "s3://prod/lake",
        "AWS_PROFILE": "prod",
        "KAFKA_SEGMENTS_SCHEDULE": "@once",
        "HOME": "/root",
    }
    env = airflow_environment(settings(tmp_path, offsets_source=None, s3_endpoint=None), base=base)
    assert "AIRFLOW__CORE__UNIT_TEST_MODE" not in env
    assert "AWS_PROFILE" not in env
    assert "KAFKA_SEGMENTS_SCHEDULE" not in env
    assert "AIRFLOW_VAR_KAFKA_SEGMENTS_OFFSETS_SOURCE" not in env
    assert "AIRFLOW_CONN_AWS_DEFAULT" not in env
    assert env["AIRFLOW_HOME"] == str(tmp_path / "home")
    assert env["AIRFLOW_VAR_KAFKA_SEGMENTS_LAKE"] == "s3://bucket/lake"
    assert env["HOME"] == "/root"


def test_extra_settings_apply_last(tmp_path: Path) -> None:
    extra = {"KAFKA_SEGMENTS_SCHEDULE": "@daily", "AIRFLOW__CORE__PARALLELISM": "1"}
    env = airflow_environment(settings(tmp_path, extra=extra), base={})
    assert env["KAFKA_SEGMENTS_SCHEDULE"] == "@daily"
    assert env["AIRFLOW__CORE__PARALLELISM"] == "1"


def test_the_output_folder_of_an_earlier_demo_is_replaced(tmp_path: Path) -> None:
    output = fresh_output_dir(tmp_path / "out")
    (output / "old.log").write_text("x")
    again = fresh_output_dir(output)
    assert sorted(p.name for p in again.iterdir()) == [OUTPUT_MARKER]


def test_a_folder_the_demo_did_not_make_is_never_removed(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(DemoStackError, match="is not a demo output folder"):
        fresh_output_dir(tmp_path)
    assert (tmp_path / "precious.txt").read_text() == "keep me"


def test_a_failed_step_names_itself_and_its_log(tmp_path: Path) -> None:
    log = tmp_path / "steps.log"
    run_step("fine", ["sh", "-c", "echo hello"], env={"PATH": "/usr/bin:/bin"}, log=log)
    with pytest.raises(DemoStackError, match=r"^broken: exited with 3 \(log: ") as failure:
        run_step("broken", ["sh", "-c", "echo oops; exit 3"], env={"PATH": "/usr/bin:/bin"}, log=log)
    assert failure.value.log == log
    assert log_tail(log).splitlines()[-1] == "oops"
    assert "hello" in log.read_text()


@pytest.mark.parametrize("children_first", [True, False])
def test_stopping_a_component_ends_its_children_and_their_orphans(
    tmp_path: Path, children_first: bool
) -> None:
    """Like ``airflow standalone``: a parent whose children run on; everything ignores SIGTERM."""
    script = "trap '' TERM; sleep 60 & sh -c \"trap '' TERM; sleep 60\" & wait"
    component = Component(
        "sleepers",
        ["sh", "-c", script],
        env={"PATH": "/usr/bin:/bin"},
        log=tmp_path / "c.log",
        children_first=children_first,
    )
    deadline = time.monotonic() + 10
    while len(psutil.Process(component.pid).children(recursive=True)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    family = [psutil.Process(component.pid), *psutil.Process(component.pid).children(recursive=True)]
    component.stop(timeout_s=0.2)
    assert not component.running()
    _gone, alive = psutil.wait_procs(family, timeout=5)
    assert alive == [], alive


def test_the_embedded_s3_password_does_not_mask_the_products_name_in_logs(tmp_path: Path) -> None:
    """Airflow masks a connection's password wherever it appears in a task log; with "kafka-segments" as the
    embedded server's secret, every DAG id, tag, bucket and path in the demo's logs became ``***``."""
    from airflow.sdk._shared.secrets_masker import SecretsMasker
    from kafka_segments.demo.embedded_s3 import EMBEDDED_CREDENTIALS

    assert not any(
        "kafka-segments" in value or "kafka_segments" in value for value in EMBEDDED_CREDENTIALS.values()
    )
    password = json.loads(airflow_environment(settings(tmp_path))["AIRFLOW_CONN_AWS_DEFAULT"])["password"]
    assert password == EMBEDDED_CREDENTIALS["aws_secret_access_key"]
    masker = SecretsMasker()
    masker.add_mask(password)
    line = "kafka-segments report of kafka_segments_maintenance: s3://kafka-segments-demo/lake"
    assert masker.redact(line) == line
    masker.add_mask("kafka-segments")  # what the embedded server's password used to be
    assert "***" in masker.redact(line)


@pytest.mark.parametrize(
    ("options", "steps", "timeout_s"),
    [
        ({}, ["airflow db migrate", "airflow dags reserialize"], 30),
        ({"migrated": True, "stop_timeout_s": 0}, ["airflow dags reserialize"], 0),
    ],
)
def test_a_test_stack_skips_the_migration_and_is_killed_at_once(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    options: dict[str, Any],
    steps: list[str],
    timeout_s: float,
) -> None:
    """``scheduler_and_api_server``: ``migrated`` (a copied database) runs no ``airflow db migrate``, and
    ``stop_timeout_s`` is how long each component may take to stop; the demo's defaults are unchanged."""
    from orchestration import demo_stack

    ran: list[str] = []
    stopped: list[tuple[str, float]] = []

    class Recorded:
        def __init__(self, name: str, args: list[str], **_: object) -> None:
            self.name = name

        def running(self) -> bool:
            return True

        def stop(self, *, timeout_s: float = 30) -> None:
            stopped.append((self.name, timeout_s))

    monkeypatch.setattr(demo_stack, "run_step", lambda step, *_, **__: ran.append(step))
    monkeypatch.setattr(demo_stack, "Component", Recorded)
    monkeypatch.setattr(demo_stack, "api_healthy", lambda _api: True)

    with demo_stack.scheduler_and_api_server({}, log=tmp_path / "log", port=8793, **options) as api:
        assert api == "http://127.0.0.1:8793"

    assert ran == steps
    assert stopped == [("scheduler", timeout_s), ("api-server", timeout_s)]
