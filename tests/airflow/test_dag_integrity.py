"""The DAG files: they import cleanly (no import errors, no warnings), declare the contract (ids, task order,
schedule, Params, run limits), do no I/O at parse time, and restrict the delete-records DAG with
``access_control`` exactly where an auth manager reads it."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest
from dag_helpers import DAGS, load_dag, parse_dags

pytestmark = pytest.mark.airflow

AUDIT = Path(__file__).with_name("parse_audit.py")
MAINTENANCE = "kafka_segments_maintenance"
DELETE_RECORDS = "kafka_segments_delete_records"
MAINTENANCE_TASKS = [
    "recover",
    "snapshot_offsets",
    "prepare",
    "spark_retention",
    "validate",
    "commit",
    "tables",
    "gc",
    "report",
]
FAB = "airflow.providers.fab.auth_manager.fab_auth_manager.FabAuthManager"


def parse_audit(folder: Path, **env: str) -> dict[str, Any]:
    """Parse ``folder`` in a fresh interpreter under ``parse_audit.py``'s audit hook (warnings are errors)."""
    environ = {key: value for key, value in os.environ.items() if key != "KAFKA_SEGMENTS_SCHEDULE"}
    environ.update(env)
    result = subprocess.run(
        [sys.executable, "-W", "error", str(AUDIT), str(folder)],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("PARSE-AUDIT ")]
    assert result.returncode == 0, result.stderr[-3000:]
    assert lines, result.stdout[-3000:]
    document: dict[str, Any] = json.loads(lines[-1].removeprefix("PARSE-AUDIT "))
    return document


def _chain(dag: Any) -> list[str]:
    """The task ids in dependency order, checking each task has exactly the previous one upstream."""
    order = [task.task_id for task in dag.topological_sort()]
    for previous, task_id in itertools.pairwise(order):
        assert previous in dag.get_task(task_id).upstream_task_ids, (previous, task_id)
    return order


def test_the_maintenance_dag_has_one_task_per_run_stage_in_the_table_order() -> None:
    """The DAG follows ``pipeline.sequence.RUN_STAGES``, the order the inline and Spark doors run."""
    from kafka_segments.pipeline.sequence import RUN_STAGES

    assert [stage.value for stage in RUN_STAGES] == MAINTENANCE_TASKS


def test_the_dag_folder_imports_both_dags_without_errors_or_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bag = parse_dags()
    assert bag.captured_warnings == {}
    maintenance, delete_records = bag.dags[MAINTENANCE], bag.dags[DELETE_RECORDS]

    assert _chain(maintenance) == MAINTENANCE_TASKS
    assert maintenance.get_task("report").upstream_task_ids == {"prepare", "gc", "tables"}
    assert maintenance.max_active_runs == 1
    assert maintenance.catchup is False
    assert maintenance.tags == {"kafka-segments"}
    assert maintenance.start_date.isoformat() == "2025-01-01T00:00:00+00:00"
    assert str(maintenance.schedule) == "@hourly"
    assert delete_records.schedule is None
    assert [task.task_id for task in delete_records.tasks] == ["delete_records"]
    assert maintenance.get_task("spark_retention").task_type == "RetentionSparkSubmitOperator"


def test_every_task_retries_transient_errors_only() -> None:
    from orchestration.retries import TransientOnlyRetryPolicy

    for dag_id in (MAINTENANCE, DELETE_RECORDS):
        for task in load_dag(dag_id).tasks:
            assert task.retries == 3, task.task_id
            assert isinstance(task.retry_policy, TransientOnlyRetryPolicy), task.task_id


def test_the_params_describe_and_validate_what_a_trigger_may_ask() -> None:
    from airflow.sdk.exceptions import ParamValidationError

    params = load_dag(MAINTENANCE).params
    assert set(params) == {"topics", "partitions", "dry_run", "offsets_source", "full_listing"}
    assert all(params.get_param(name).description for name in params)
    assert params.validate() == {
        "topics": None,
        "partitions": None,
        "dry_run": True,
        "offsets_source": None,
        "full_listing": False,
    }
    for name, good, bad in (
        ("topics", ["orders", "clicks"], ["no spaces allowed"]),
        ("partitions", ["orders-0", "my-topic-12"], ["orders"]),
        ("dry_run", True, "yes"),
        ("offsets_source", "kafka://broker:9092", ""),
        ("full_listing", True, "yes"),
    ):
        assert params.get_param(name).resolve(good) == good
        with pytest.raises(ParamValidationError):
            params.get_param(name).resolve(bad)

    request = load_dag(DELETE_RECORDS).params.get_param("request")
    assert request.resolve({"version": 1, "partitions": [{"topic": "t", "partition": 0, "offset": -1}]})
    for bad in (
        {"version": 2, "partitions": []},
        {"version": 1},
        {"partitions": [{"topic": "t", "offset": 1}]},
    ):
        with pytest.raises(ParamValidationError):
            request.resolve(bad)
    assert load_dag(DELETE_RECORDS).params.validate()["dry_run"] is True


@pytest.fixture(scope="module")
def default_audit() -> dict[str, Any]:
    """The DAG folder parsed under the audit with the default environment."""
    return parse_audit(DAGS)


@pytest.fixture(scope="module")
def configured_audit() -> dict[str, Any]:
    """The DAG folder parsed with no schedule, the FAB auth manager and two privileged roles configured."""
    return parse_audit(
        DAGS,
        KAFKA_SEGMENTS_SCHEDULE="none",
        AIRFLOW__CORE__AUTH_MANAGER=FAB,
        KAFKA_SEGMENTS_DELETE_RECORDS_ROLES="Admin,lake_admin",
    )


def test_parsing_the_dags_does_no_io(default_audit: dict[str, Any], configured_audit: dict[str, Any]) -> None:
    for audit in (default_audit, configured_audit):
        assert audit["import_errors"] == {}
        assert audit["warnings"] == {}
        assert audit["violations"] == []
        assert sorted(audit["dags"]) == [DELETE_RECORDS, MAINTENANCE]


def test_the_parse_audit_catches_a_dag_that_reads_a_file_or_a_variable(tmp_path: Path) -> None:
    (tmp_path / "reads_at_parse_time.py").write_text(
        textwrap.dedent(
            """
            from pathlib import Path

            from airflow.sdk import Variable, dag

            LAKE = Variable.get("kafka_segments_lake", default=None)
            CONFIG = Path(__file__).read_text()

            @dag(dag_id="reads_at_parse_time", schedule=None)
            def reads_at_parse_time():
                pass

            reads_at_parse_time()
            """
        )
    )

    events = [violation["event"] for violation in parse_audit(tmp_path)["violations"]]

    assert any(event.startswith("sqlite3.connect") for event in events), events
    assert any(event.startswith("open ") and "reads_at_parse_time.py" in event for event in events), events


def test_the_schedule_comes_from_the_environment_at_parse_time(
    default_audit: dict[str, Any], configured_audit: dict[str, Any]
) -> None:
    assert default_audit["schedules"] == {MAINTENANCE: "@hourly", DELETE_RECORDS: None}
    assert configured_audit["schedules"] == {MAINTENANCE: None, DELETE_RECORDS: None}


def test_delete_records_access_control_is_set_only_for_the_fab_auth_manager(
    default_audit: dict[str, Any], configured_audit: dict[str, Any]
) -> None:
    assert default_audit["access_control"] == {MAINTENANCE: None, DELETE_RECORDS: None}
    grant = {"DAG Runs": ["can_create", "can_read"], "DAGs": ["can_edit", "can_read"]}
    assert configured_audit["access_control"] == {
        MAINTENANCE: None,
        DELETE_RECORDS: {"Admin": grant, "lake_admin": grant},
    }


def test_airflow_warns_for_any_access_control_and_only_that_warning_is_silenced() -> None:
    from airflow.sdk import DAG
    from airflow.sdk.exceptions import RemovedInAirflow4Warning
    from orchestration.declarations import declaring_access_control, delete_records_access_control

    access = delete_records_access_control(fab=True)
    with pytest.warns(RemovedInAirflow4Warning, match="airflow.security.permissions"):
        DAG("warns", schedule=None, access_control=access)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with declaring_access_control():
            DAG("silenced", schedule=None, access_control=access)
        with declaring_access_control(), pytest.warns(DeprecationWarning, match="something else"):
            warnings.warn("something else", DeprecationWarning, stacklevel=1)
