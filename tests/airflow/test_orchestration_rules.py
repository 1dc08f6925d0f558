"""The orchestration helpers' rules, without running a DAG: which errors are retried, how library errors fail
a task, what a run's ``now``, dry run and offsets are, the lake run id, the settings and the XCom handover."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from airflow.sdk import RetryAction
from airflow.sdk.exceptions import AirflowFailException
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import (
    CommitConflictError,
    CommitStateUnknownError,
    ConditionalWriteConflictError,
    InvalidLakeUriError,
    RunStateError,
    TransientStoreError,
)
from kafka_segments.lake.layout import validate_run_id
from kafka_segments.storage import LocalStore
from lake.retention_helpers import group, write_snapshot
from orchestration.declarations import maintenance_schedule
from orchestration.failures import task_failures
from orchestration.retries import TransientOnlyRetryPolicy
from orchestration.run_parameters import (
    RunParameterError,
    RunParameters,
    lake_run_id,
    maintenance_parameters,
    run_now_ms,
)

pytestmark = pytest.mark.airflow

INTERVAL_END = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
TRIGGERED = datetime(2025, 6, 1, 12, 7, 30, tzinfo=UTC)
WHERE = "s3://bucket/lake"


def dag_run(
    run_type: str,
    *,
    run_id: str = "manual__2025-06-01T12:07:30+00:00",
    clear_number: int = 0,
    logical_date: datetime | None = None,
) -> Any:
    return SimpleNamespace(
        dag_id="kafka_segments_maintenance",
        run_id=run_id,
        run_type=run_type,
        run_after=TRIGGERED,
        logical_date=logical_date,
        data_interval_end=INTERVAL_END,
        clear_number=clear_number,
        triggering_user_name="alice",
    )


def context(run_type: str, **params: Any) -> Any:
    defaults = {
        "topics": None,
        "partitions": None,
        "dry_run": None,
        "offsets_source": None,
        "full_listing": False,
    }
    return {"dag_run": dag_run(run_type), "params": {**defaults, **params}}


@pytest.mark.parametrize(
    "error",
    [
        TransientStoreError("503 SlowDown after retries", location=WHERE),
        ConditionalWriteConflictError("409 ConditionalRequestConflict", location=WHERE),
        CommitStateUnknownError("the commit's response was lost", location=WHERE),
        ConnectionError("reset by peer"),
        TimeoutError("timed out"),
    ],
)
def test_transient_errors_are_retried(error: Exception) -> None:
    decision = TransientOnlyRetryPolicy().evaluate(error, try_number=1, max_tries=4)
    assert decision.action is RetryAction.RETRY


@pytest.mark.parametrize(
    "error",
    [
        CommitConflictError("version 3 was taken by run r2", location=WHERE),
        RunStateError("run r1 was aborted", location=WHERE),
        InvalidLakeUriError("lake URI 'ftp://x': unsupported scheme"),
        KeyError("a bug"),
    ],
)
def test_every_other_error_fails_at_once(error: Exception) -> None:
    decision = TransientOnlyRetryPolicy().evaluate(error, try_number=1, max_tries=4)
    assert decision.action is RetryAction.FAIL


def test_a_library_error_becomes_a_non_retried_failure_with_its_message() -> None:
    conflict = CommitConflictError("version 3 was committed by run r2", location=WHERE)

    with pytest.raises(AirflowFailException) as failure, task_failures("commit"):
        raise conflict

    message = str(failure.value)
    assert message.startswith(f"commit: CommitConflictError: {WHERE}: version 3 was committed by run r2")
    assert "another run committed first" in message
    assert failure.value.__cause__ is conflict


@pytest.mark.parametrize("error", [TransientStoreError("throttled", location=WHERE), KeyError("a bug")])
def test_transient_errors_and_bugs_pass_through_unchanged(error: Exception) -> None:
    with pytest.raises(type(error)) as raised, task_failures("gc"):
        raise error
    assert raised.value is error


def test_a_scheduled_or_backfill_run_applies_its_rules_at_its_data_interval_end() -> None:
    for run_type, dry_run in (("scheduled", True), ("backfill", False)):
        parameters = maintenance_parameters(context(run_type, dry_run=dry_run), default_offsets_source="lake")
        assert parameters.now_ms == int(INTERVAL_END.timestamp() * 1000)
        assert parameters.dry_run is False


def test_a_manual_run_is_a_dry_run_at_its_trigger_time_unless_told_otherwise() -> None:
    parameters = maintenance_parameters(context("manual"), default_offsets_source=None)
    assert parameters.now_ms == int(TRIGGERED.timestamp() * 1000) == run_now_ms(dag_run("manual"))
    assert parameters.dry_run is True
    assert (
        maintenance_parameters(context("manual", dry_run=False), default_offsets_source=None).dry_run is False
    )
    assert (
        maintenance_parameters(context("scheduled", dry_run=True), default_offsets_source=None).dry_run
        is False  # scheduled runs always commit: the Param's default (true) is for people
    )


def test_the_full_listing_switch_travels_to_the_lake_run() -> None:
    assert maintenance_parameters(context("manual"), default_offsets_source=None).full_listing is False
    parameters = maintenance_parameters(context("scheduled", full_listing=True), default_offsets_source=None)
    assert parameters.full_listing is True
    assert RunParameters.from_dict(json.loads(json.dumps(parameters.to_dict()))) == parameters


def test_a_manual_runs_now_is_the_logical_date_of_its_form_never_a_later_one() -> None:
    form_date = datetime(2025, 5, 29, 0, 0, tzinfo=UTC)
    assert run_now_ms(dag_run("manual", logical_date=form_date)) == int(form_date.timestamp() * 1000)
    later = datetime(2025, 6, 2, tzinfo=UTC)  # after the trigger: rules would delete what has not expired
    assert run_now_ms(dag_run("manual", logical_date=later)) == int(TRIGGERED.timestamp() * 1000)
    for run_type in ("scheduled", "backfill"):  # their logical date is the interval's start: now is its end
        assert run_now_ms(dag_run(run_type, logical_date=form_date)) == int(INTERVAL_END.timestamp() * 1000)


def test_a_backfill_uses_pinned_offsets_only() -> None:
    parameters = maintenance_parameters(
        context("backfill", offsets_source="kafka://broker:9092"), default_offsets_source="lake"
    )
    assert parameters.offsets_choice().earlier_pin is True
    assert parameters.offsets_choice().source is None


def test_the_offsets_param_wins_over_the_variable() -> None:
    assert (
        maintenance_parameters(
            context("scheduled", offsets_source=" kafka://b:9092 "), default_offsets_source="lake"
        )
        .offsets_choice()
        .source
        == "kafka://b:9092"
    )
    assert (
        maintenance_parameters(context("scheduled"), default_offsets_source="lake").offsets_source == "lake"
    )


def test_topics_and_partitions_select_what_is_planned() -> None:
    from kafka_segments.topic_partition import TopicPartition

    parameters = maintenance_parameters(
        context("manual", topics=["orders", "orders"], partitions=["my-topic-3", "orders-0"]),
        default_offsets_source=None,
    )
    selection = parameters.selection()
    assert selection.topics == ("orders",)
    assert selection.partitions == (TopicPartition("my-topic", 3), TopicPartition("orders", 0))
    assert maintenance_parameters(context("manual", topics=[]), default_offsets_source=None).topics is None
    assert RunParameters.from_dict(json.loads(json.dumps(parameters.to_dict()))) == parameters


@pytest.mark.parametrize(
    ("name", "value"),
    [("partitions", ["orders"]), ("topics", [".."]), ("dry_run", "no"), ("full_listing", "yes")],
)
def test_an_unusable_param_is_refused(name: str, value: Any) -> None:
    with pytest.raises(RunParameterError, match=f"Param {name}"):
        maintenance_parameters(context("manual", **{name: value}), default_offsets_source=None)


@given(run_id=st.text(max_size=300), clear_number=st.integers(0, 10**6))
def test_the_lake_run_id_is_a_valid_run_id_stable_per_airflow_run_and_clear(
    run_id: str, clear_number: int
) -> None:
    first = lake_run_id(dag_run("manual", run_id=run_id, clear_number=clear_number))

    assert validate_run_id(first) == first
    assert lake_run_id(dag_run("scheduled", run_id=run_id, clear_number=clear_number)) == first
    assert lake_run_id(dag_run("manual", run_id=run_id, clear_number=clear_number + 1)) != first


def test_the_schedule_variable() -> None:
    assert maintenance_schedule({}) == "@hourly"
    assert maintenance_schedule({"KAFKA_SEGMENTS_SCHEDULE": " */15 * * * * "}) == "*/15 * * * *"
    assert maintenance_schedule({"KAFKA_SEGMENTS_SCHEDULE": "None"}) is None
    assert maintenance_schedule({"KAFKA_SEGMENTS_SCHEDULE": ""}) is None


def test_settings_come_from_variables_and_the_aws_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestration.settings import SettingsError, read_aws_settings, read_lake_settings

    monkeypatch.delenv("AIRFLOW_VAR_KAFKA_SEGMENTS_LAKE", raising=False)
    with pytest.raises(SettingsError, match="Airflow Variable kafka_segments_lake"):
        read_lake_settings()
    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_SEGMENTS_LAKE", "s3://bucket/lake")
    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_SEGMENTS_CONFIG", "/etc/kafka-segments.yaml")
    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_SEGMENTS_OFFSETS_SOURCE", "")
    settings = read_lake_settings()
    assert (settings.lake, settings.config_path, settings.offsets_source) == (
        "s3://bucket/lake",
        "/etc/kafka-segments.yaml",
        None,
    )

    monkeypatch.delenv("AIRFLOW_CONN_AWS_DEFAULT", raising=False)
    assert read_aws_settings() is None
    connection = {
        "conn_type": "aws",
        "login": "AKIDEXAMPLE",
        "password": "secret-key-example",
        "extra": {"endpoint_url": "http://minio:9000", "region_name": "eu-west-1"},
    }
    monkeypatch.setenv("AIRFLOW_CONN_AWS_DEFAULT", json.dumps(connection))
    aws = read_aws_settings()
    assert aws is not None
    assert aws.environ() == {
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "secret-key-example",
        "AWS_ENDPOINT_URL": "http://minio:9000",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_REGION": "eu-west-1",
    }


def test_a_dry_runs_fresh_snapshot_travels_whole_and_a_stored_one_by_id(tmp_path: Path) -> None:
    from kafka_segments.offsets.snapshot_codec import load_snapshot_file
    from kafka_segments.offsets.snapshot_store import store_snapshot
    from kafka_segments.pipeline.offsets_input import ResolvedOffsets
    from orchestration.handover import offsets_from_xcom, offsets_to_xcom

    store = LocalStore(tmp_path / "lake")
    path = write_snapshot(tmp_path / "s.json", [group("g", [(0, 7, 1000)])], taken_at_ms=2000)
    snapshot = load_snapshot_file(path)
    fresh = ResolvedOffsets(snapshot, None, "taken")
    stored = ResolvedOffsets(snapshot, store_snapshot(store, snapshot).snapshot_id, "taken", "a note")

    for resolved in (fresh, stored):
        document = json.loads(json.dumps(offsets_to_xcom(resolved)))
        assert ("snapshot" in document) is (resolved.snapshot_id is None)
        assert offsets_from_xcom(store, document) == resolved
    assert offsets_from_xcom(store, offsets_to_xcom(None)) is None


def test_a_lake_asset_is_named_by_its_uri() -> None:
    from orchestration.assets import lake_asset

    assert lake_asset("s3://bucket/prefix/").uri == "s3://bucket/prefix"
    assert lake_asset("/data/lake").uri == "file:///data/lake"


def test_a_spark_job_that_exits_75_is_retried_and_any_other_exit_fails_at_once() -> None:
    """The job exits 75 (``EX_TEMPFAIL``) for a retriable library error; the provider's hook reports the
    code only in its message."""
    from airflow.providers.common.compat.sdk import AirflowException
    from orchestration.spark_operator import SparkJobTransientError, submit_failure

    transient = submit_failure(AirflowException("Cannot execute: spark-submit ... Error code is: 75."))
    permanent = AirflowException("Cannot execute: spark-submit ... Error code is: 1.")

    assert isinstance(transient, SparkJobTransientError)
    policy = TransientOnlyRetryPolicy()
    assert policy.evaluate(transient, try_number=1, max_tries=4).action is RetryAction.RETRY
    assert submit_failure(permanent) is permanent
    assert policy.evaluate(permanent, try_number=1, max_tries=4).action is RetryAction.FAIL


def test_a_commit_names_the_topics_its_run_changed_and_their_assets_sit_under_the_lake() -> None:
    from kafka_segments.state.manifest import Manifest, PartitionState
    from kafka_segments.topic_partition import TopicPartition
    from orchestration.lineage import changed_topics, topic_asset

    def state(topic: str, partition: int, run_id: str) -> PartitionState:
        return PartitionState(TopicPartition(topic, partition), 0, 0, (), run_id=run_id)

    manifest = Manifest(
        version=3,
        parent_version=2,
        run_id="r3",
        operation="run",
        committed_at_ms=0,
        now_ms=0,
        partitions=(state("b", 0, "r3"), state("a", 1, "r3"), state("a", 0, "r2"), state("z", 0, "r1")),
    )
    assert changed_topics(manifest) == ["a", "b"]
    assert topic_asset("s3://lake/prod/", "orders").uri == "s3://lake/prod/orders"
    assert topic_asset("s3://lake/prod", "orders").uri == "s3://lake/prod/orders"


def test_the_engine_variable_says_where_the_retention_step_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """``kafka_segments_engine``: ``spark`` when unset (a Spark job), ``inline`` in the task's process; any
    other value fails naming the Variable."""
    from orchestration.settings import ENGINE_VARIABLE, SettingsError, read_engine

    variable = f"AIRFLOW_VAR_{ENGINE_VARIABLE.upper()}"
    monkeypatch.delenv(variable, raising=False)
    assert read_engine() == "spark"
    for value, engine in ((" Inline ", "inline"), ("spark", "spark"), (" ", "spark")):
        monkeypatch.setenv(variable, value)
        assert read_engine() == engine, value
    monkeypatch.setenv(variable, "flink")
    with pytest.raises(SettingsError, match="unknown engine 'flink'") as refused:
        read_engine()
    assert refused.value.location == f"Airflow Variable {ENGINE_VARIABLE}"


def test_the_metrics_line_says_nothing_is_sent_for_a_dry_run_or_without_a_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from orchestration.metrics import publish_metrics

    metrics = {"log_cleaner": {}, "retention": {}, "partitions": []}  # never read: nothing is sent
    assert publish_metrics(None, lake=WHERE).startswith("dry run: no metric sent")
    for name in ("STATSD_ON", "STATSD_DATADOG_ENABLED", "OTEL_ON"):
        monkeypatch.setenv(f"AIRFLOW__METRICS__{name}", "False")
    assert publish_metrics(metrics, lake=WHERE).startswith("no metric sent: no metrics backend is on")
