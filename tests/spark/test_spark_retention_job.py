"""``spark_jobs/retention_job.py`` in this process: its exit codes for bad arguments and library errors
(checked before any Spark starts), and the execute stage on the session's Spark."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import retention_job
from kafka_segments.checkpoint import parse_offset_checkpoint
from kafka_segments.errors import TransientStoreError
from kafka_segments.pipeline.engines.spark_submit import RETENTION_JOB_NAME
from kafka_segments.pipeline.stages import STAGED, prepare_run, read_run_json
from kit import T0, FakeClock
from lake.retention_helpers import topic_yaml, upload_fifteen_records
from spark_helpers import PANDAS_WARNING, Lake
from spark_runner import SparkRunner

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings(PANDAS_WARNING)]


def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert retention_job.main(["--lake", "/tmp/lake"]) == retention_job.EXIT_USAGE
    assert "--run-id" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("run_id", "config_text", "reason"),
    [
        pytest.param("never-prepared", None, "no run 'never-prepared' in this lake", id="an_unprepared_run"),
        pytest.param(
            "r", "topics:\n  t:\n    retention.ms: soon\n", "retention.ms", id="a_bad_configuration"
        ),
    ],
)
def test_library_errors_exit_1_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], run_id: str, config_text: str | None, reason: str
) -> None:
    argv = ["--lake", str(tmp_path / "lake"), "--run-id", run_id]
    if config_text is not None:
        (tmp_path / "c.yaml").write_text(config_text)
        argv += ["--config", str(tmp_path / "c.yaml")]

    assert retention_job.main(argv) == retention_job.EXIT_FAILED

    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith(f"{RETENTION_JOB_NAME}: ")
    assert reason in line


def test_the_job_executes_a_prepared_run_on_spark(
    lake: Lake,
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, value in lake.environ.items():
        monkeypatch.setenv(name, value)
    upload_fifteen_records(lake.store, ts=10)
    config_file = tmp_path / "c.yaml"
    config_file.write_text(topic_yaml(retention_ms=10_000))
    run_id = prepare_run(lake.store, now_ms=T0, offsets=None, dry_run=False, clock=FakeClock()).run_id
    args = retention_job.parse_args(["--lake", lake.uri, "--run-id", run_id, "--config", str(config_file)])

    store, config = retention_job.load_inputs(args)
    staged = retention_job.run_job(spark.sparkContext, args, store, config)

    assert staged.engine == "spark"
    assert read_run_json(lake.store, run_id, STAGED)["report"]["engine"] == "spark"
    assert retention_job.summary_line(staged) == (
        f"{RETENTION_JOB_NAME}: run {run_id}: staged a new manifest (engine spark); adopted 3 segment(s), "
        "0 quarantined; planned 1 partition(s), 3 segment(s) to delete"
    )
    logged = capsys.readouterr().out.splitlines()  # the task log: plain progress lines, no redrawing
    reading = f"{RETENTION_JOB_NAME}: progress: adopt: reading new segments (executors)"
    assert f"{reading}: 0/3 segments, 0 B/" in logged[0]
    assert logged[0].endswith("(started)")
    assert any(line.startswith(f"{reading}: 3/3 segments") and line.endswith("(done)") for line in logged)
    assert not any("\r" in line for line in logged)


def test_the_job_starts_a_spark_context_and_no_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """The job maps functions over plain items: a SparkContext, no SparkSession (whose Spark SQL state the
    driver's JVM would build before the first task, for nothing)."""
    import pyspark
    from pyspark.sql import SparkSession

    started: list[tuple[str | None, str]] = []

    class Context:
        @classmethod
        def getOrCreate(cls, conf: pyspark.SparkConf) -> Context:  # noqa: N802 - pyspark's name
            started.append((conf.get("spark.app.name"), "context"))
            return cls()

        def setLogLevel(self, level: str) -> None:  # noqa: N802 - pyspark's name
            started.append((None, level))

    def no_session(*args: object) -> None:
        raise AssertionError("the job started a SparkSession")

    monkeypatch.setattr(pyspark, "SparkContext", Context)
    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", no_session)
    args = retention_job.parse_args(["--lake", "/tmp/lake", "--run-id", "r-1"])

    context = retention_job.build_context(args)

    assert isinstance(context, Context)
    assert started == [(f"{RETENTION_JOB_NAME} r-1", "context"), (None, "WARN")]


def test_an_executor_error_is_reported_by_its_last_line(spark: SparkSession) -> None:
    """A library error raised on an executor comes back as Spark's ``PythonException`` (the worker's whole
    traceback); the job's one-line reason is the error itself."""
    from pyspark.errors import PySparkException

    with pytest.raises(PySparkException) as failed:
        SparkRunner(spark.sparkContext).map(parse_offset_checkpoint, [b"garbage"])

    assert retention_job.failure_reason(failed.value) == (
        "kafka_segments.errors.CheckpointFileError: <memory> line 1: "
        "Malformed line in checkpoint file [<memory>]: garbage"
    )


def test_a_retriable_library_error_exits_75(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """EX_TEMPFAIL: the Airflow task retries the job; a permanent error (above) exits 1."""

    def unreachable(args: object) -> None:
        raise TransientStoreError("503 SlowDown after retries", location="s3://lake/x")

    monkeypatch.setattr(retention_job, "load_inputs", unreachable)

    assert retention_job.main(["--lake", str(tmp_path), "--run-id", "r"]) == retention_job.EXIT_TRANSIENT
    assert "503 SlowDown" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("reason", "retriable"),
    [
        ("kafka_segments.errors.TransientStoreError: s3://lake/x: 503 SlowDown", True),
        ("kafka_segments.errors.ConditionalWriteConflictError: s3://lake/x: 409", True),
        ("kafka_segments.errors.InvalidCrcError: t-0/0.log: CRC mismatch", False),
        ("kafka_segments.errors.NoSuchErrorClass: x", False),
        ("java.lang.OutOfMemoryError: Java heap space", False),
    ],
)
def test_an_executor_error_is_transient_only_when_it_names_a_retriable_library_error(
    reason: str, retriable: bool
) -> None:
    assert retention_job.names_retriable_error(reason) is retriable
