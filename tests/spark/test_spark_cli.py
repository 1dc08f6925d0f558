"""``kafka-segments plan|run --engine spark`` as a user runs them, on moto's S3: the run a real process with a
real ``spark-submit`` (``local[1]``: one Python worker to start), the validation stage in its own process.
Its lake is ``run_lake``'s, holding both kinds of work (compaction, two quarantined partitions; retention by
time and consumed offsets). The spark run commits what ``--engine inline`` commits on an identical
copy of the lake, with the same bytes in the rounds' objects; the plan changes no committed state. The plan
runs in this process, its Spark job the job's own code (``retention_job``) on the session's Spark: the
``spark-submit`` process itself is the run's to prove, and a second one would prove nothing more. And the
stages' failure paths in this process: bad input exits 2 before any stage, a topic the lake does not have
exits 2 from the Spark job and the CLI, a run whose validation cannot pass ends uncommitted with its
report."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import retention_job
from cli_harness import cli
from compaction_lake import DAMAGED, UNCLEANABLE
from kafka_segments.cli import spark_engine
from kafka_segments.cli.main import main
from kafka_segments.config import load_config
from kafka_segments.demo import EmbeddedS3
from kafka_segments.lake.codec import manifest_to_json
from kafka_segments.lake.history import manifest_versions
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.lake.run_folder import list_runs, read_outcome
from kafka_segments.lake.runs import Outcome
from kafka_segments.pipeline.engines import spark_submit
from kafka_segments.pipeline.engines.spark_submit import SparkJobError, SparkJobResult, SparkJobSpec
from kafka_segments.pipeline.stages import execute_run
from kafka_segments.storage import LocalStore
from kit import T0
from lake.retention_helpers import upload_fifteen_records
from run_lake import LAKE_CONFIG, RETENTION_TOPICS, RUN_FOLDER_RETENTION_MS, fill, write_offsets
from s3_fixtures import BUCKET, new_s3_store
from spark_helpers import PANDAS_WARNING, normalized, written_by

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings(PANDAS_WARNING)]

CONFIG = f"topics:\n{RETENTION_TOPICS}"
"""Retention alone (the failure-path tests)."""
QUARANTINED = f"kafka-segments run: 2 partition(s) quarantined and left alone: {UNCLEANABLE}, {DAMAGED}"


def job_on(spark: SparkSession) -> Callable[..., SparkJobResult]:
    """``run_spark_submit`` replaced by the job's own code (``retention_job``: its arguments, inputs, run and
    summary line) on ``spark``'s context, in this process; its output goes to ``progress`` as
    ``spark-submit``'s does."""

    def submit(spec: SparkJobSpec, *, master: str, progress: Callable[[str], None]) -> SparkJobResult:
        args = retention_job.parse_args(spec.application_args)
        store, config = retention_job.load_inputs(args)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = retention_job.execute_on(spark.sparkContext, args, store, config)
        lines = (*out.getvalue().splitlines(), *err.getvalue().splitlines())
        for line in lines:
            progress(line)
        if code != 0:  # as run_spark_submit reports a job's exit code
            reason = f"spark-submit exited with code {code}: {lines[-1]}"
            raise SparkJobError(reason, location=spec.name, exit_code=code, output_tail=lines)
        return SparkJobResult(argv=(), exit_code=0, seconds=0.0, output_tail=lines, summary=lines[-1])

    return submit


@pytest.mark.skipif(
    importlib.util.find_spec("segment_quality.__main__") is None,
    reason="the validation stage (python -m segment_quality) is not installed",
)
def test_run_engine_spark_commits_what_inline_commits(
    s3_server: EmbeddedS3,
    process_env: dict[str, str],
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    on_spark, inline = new_s3_store(s3_server), new_s3_store(s3_server)
    fill(on_spark)
    fill(inline)
    config_file = tmp_path / "config.yaml"
    config_file.write_text(LAKE_CONFIG)
    snapshot = write_offsets(tmp_path / "offsets.json")
    common = ["--config", str(config_file), "--now", str(T0), "--offsets", str(snapshot)]
    spark_args = [*common, "--lake", f"s3://{BUCKET}/{on_spark.prefix.rstrip('/')}", "--engine", "spark"]
    spark_args += ["--spark-master", "local[1]"]

    with monkeypatch.context() as patch:
        for name, value in process_env.items():
            patch.setenv(name, value)
        patch.setattr(spark_submit, "run_spark_submit", job_on(spark))
        code = main(["plan", *spark_args, "--json"])
    planned = capsys.readouterr()
    assert code == 1, planned.err  # the quarantined partitions
    plan = json.loads(planned.out)
    assert (plan["outcome"], plan["engine"], plan["validation"]["success"]) == ("dry run", "spark", True)
    assert manifest_versions(on_spark) == []  # staged and validated, nothing committed

    report_file = tmp_path / "report.json"
    ran = cli(  # with k as a table too
        "run",
        *_syncing_k(spark_args, config_file, tmp_path),
        "--report",
        str(report_file),
        env=process_env,
        timeout=600,
    )
    assert (ran.returncode, ran.stderr.splitlines()[-1]) == (1, QUARANTINED), ran.stderr
    assert "[run] execute: spark-submit kafka-segments-retention on local[1]" in ran.stderr
    assert "[run] validate: python -m segment_quality validate" in ran.stderr
    assert "[run] gc: deleting retired objects" in ran.stderr
    assert "committed version 1 (base None)" in ran.stdout
    assert "k-0: log start 0 -> 5, log end 15; deleted consumed: 1 segment(s)" in ran.stdout
    report = json.loads(report_file.read_text())
    assert (report["outcome"], report["engine"], report["committed_version"]) == ("committed", "spark", 1)
    assert len(report["gc"]["deleted"]) == 6  # t's segments: file.delete.delay.ms 0
    assert report["gc"]["run_folder_retention_ms"] == RUN_FOLDER_RETENTION_MS  # the configured one
    assert [(t["table"], t["to_version"]) for t in report["tables"]["report"]["tables"]] == [  # after commit
        ("kafka_segments.k", 1)
    ]

    with monkeypatch.context() as patch:
        for name, value in process_env.items():
            patch.setenv(name, value)
        code = main(["run", *common, "--lake", f"s3://{BUCKET}/{inline.prefix.rstrip('/')}", "--json"])
    reference = capsys.readouterr()
    assert code == 1, reference.err
    expected = json.loads(reference.out)
    assert expected["gc"]["run_folder_retention_ms"] == RUN_FOLDER_RETENTION_MS  # the inline run's gc too

    run_ids = frozenset({plan["run_id"], report["run_id"], expected["run_id"]})
    prefixes = [on_spark.prefix.rstrip("/"), inline.prefix.rstrip("/")]

    def same(document: Any) -> Any:
        return normalized(document, run_ids, wall_clock=True, prefixes=prefixes)

    assert same(report["compaction"]) == same(expected["compaction"])
    assert same(report["plan"]) == same(expected["plan"])
    assert same(plan["plan"]) == same(report["plan"])
    assert same(json.loads(manifest_to_json(resolve_manifest(on_spark)))) == same(
        json.loads(manifest_to_json(resolve_manifest(inline)))
    )
    written = {same(key): data for key, data in written_by(on_spark, report["run_id"]).items()}
    assert len(written) > 4
    assert written == {same(key): data for key, data in written_by(inline, expected["run_id"]).items()}
    segments = {str(p.topic_partition): len(p.segments) for p in resolve_manifest(on_spark).partitions}
    assert (segments["k-0"], segments["t-0"], segments["t-1"]) == (2, 0, 0)


def _syncing_k(args: list[str], config_file: Path, tmp_path: Path) -> list[str]:
    """``args`` with a configuration that also makes ``k`` a table (docs/tables.md, "After every run")."""
    tables = tmp_path / "tables.yaml"
    catalog = f"uri=sqlite:///{tmp_path / 'catalog.db'}"
    tables.write_text(
        LAKE_CONFIG.replace("broker:\n", f"broker:\n  kafka_segments.table.catalog: [{catalog}]\n").replace(
            "  k:\n", "  k:\n    kafka_segments.table.enable: true\n"
        )
    )
    return [str(tables) if arg == str(config_file) else arg for arg in args]


def test_a_bad_configuration_exits_2_before_any_stage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = LocalStore(tmp_path / "lake")
    upload_fifteen_records(store, ts=10)
    bad = tmp_path / "bad.yaml"
    bad.write_text("topics:\n  t:\n    retention.ms: soon\n")

    code = main(["run", "--lake", str(tmp_path / "lake"), "--config", str(bad), "--engine", "spark"])

    assert code == 2
    assert "retention.ms" in capsys.readouterr().err
    assert list(list_runs(store)) == []


def test_a_topic_the_lake_does_not_have_exits_2_through_the_spark_job(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = LocalStore(tmp_path / "lake")
    upload_fifteen_records(store, ts=10)
    config_file = tmp_path / "config.yaml"
    config_file.write_text(CONFIG)
    monkeypatch.setattr(spark_submit, "run_spark_submit", job_on(spark))
    argv = ["run", "--lake", str(tmp_path / "lake"), "--config", str(config_file), "--now", str(T0)]
    argv += ["--topics", "nope"]

    code = main([*argv, "--engine", "spark", "--spark-master", "local[1]"])

    assert code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert "spark-submit exited with code 2" in last
    assert "chose nope, not in the lake (topics: t)" in last
    assert manifest_versions(store) == []
    (run_id,) = list_runs(store)
    ended = read_outcome(store, run_id)
    assert ended is not None
    assert ended.outcome is Outcome.ABORTED


def test_a_run_whose_validation_cannot_run_ends_uncommitted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Spark job is replaced by the inline execute stage (this test is about the stages around it)."""
    store = LocalStore(tmp_path / "lake")
    upload_fifteen_records(store, ts=10)
    config_file = tmp_path / "config.yaml"
    config_file.write_text(CONFIG)
    submitted: list[tuple[SparkJobSpec, str]] = []

    def execute_inline(spec: SparkJobSpec, *, master: str, progress: object) -> SparkJobResult:
        submitted.append((spec, master))
        args = dict(zip(spec.application_args[::2], spec.application_args[1::2], strict=True))
        execute_run(store, load_config(args["--config"]), args["--run-id"])
        return SparkJobResult(argv=(), exit_code=0, seconds=0.0, output_tail=(), summary=None)

    monkeypatch.setattr(spark_submit, "run_spark_submit", execute_inline)
    monkeypatch.setattr(spark_engine, "VALIDATOR_MODULE", "no_such_validator_module")
    argv = ["run", "--lake", str(tmp_path / "lake"), "--config", str(config_file), "--now", str(T0)]

    code = main([*argv, "--engine", "spark", "--spark-master", "spark://127.0.0.1:7077", "--json"])

    assert code == 1
    captured = capsys.readouterr()
    assert "validation could not run, nothing is committed: no_such_validator_module" in captured.err
    report = json.loads(captured.out)
    assert report["outcome"].startswith("validation could not run")
    assert report["plan"]["totals"]["segments_deleted"] == 3
    assert [(spec.application_args[1], master) for spec, master in submitted] == [
        (str(tmp_path / "lake"), "spark://127.0.0.1:7077")
    ]
    assert manifest_versions(store) == []
    ended = read_outcome(store, report["run_id"])
    assert ended is not None
    assert ended.outcome is Outcome.ABORTED
