"""spark-submit entry point of a retention run's ``execute`` stage (``stages.execute_run``).

    spark-submit --py-files kafka_segments-<hash>.zip retention_job.py --lake L --run-id R [--config F]

The run must have been prepared (``stages.prepare_run``: ``request.json`` in its folder). The job adopts
the lake's new segments with the reads fanned out to the executors, plans each topic on an executor, and
stages the new manifest in the run's folder (nothing is committed: validation and the commit are later
stages). It prints a one-line summary and exits 0; a library error (``KafkaSegmentsError``, also one raised
on an executor and returned by Spark) exits 1 with a one-line reason as the last line on stderr, or 75
(``EX_TEMPFAIL``) when the error is one a retry can cure (the library marks those ``retriable``: an
unreachable or throttling store, a concurrent conditional write); bad arguments and the user's input errors
(``kafka_segments.errors.INPUT_ERRORS``: a topic or partition the lake does not have) exit 2, which
``kafka-segments run --engine spark`` carries through. No rules live here.

``kafka_segments.pipeline.engines.spark_submit.retention_job_spec`` builds the matching ``spark-submit`` call.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from kafka_segments.errors import INPUT_ERRORS, KafkaSegmentsError
from kafka_segments.pipeline.engines.spark_submit import RETENTION_JOB_NAME

if TYPE_CHECKING:
    from kafka_segments.config import Config
    from kafka_segments.pipeline.stages import StagedRun
    from kafka_segments.storage.base import ObjectStore
    from pyspark import SparkContext

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_TRANSIENT = 75
"""``EX_TEMPFAIL`` (sysexits.h): the job failed on an error a retry can cure; the Airflow task retries it."""


@dataclass(frozen=True, slots=True)
class JobArgs:
    lake: str
    run_id: str
    config: str | None


def parse_args(argv: Sequence[str] | None = None) -> JobArgs:
    """The job's arguments (``SystemExit(2)`` with a usage line for bad ones)."""
    parser = argparse.ArgumentParser(prog=RETENTION_JOB_NAME, description=__doc__.split("\n\n")[0])
    parser.add_argument("--lake", required=True, help="the lake URI: s3://bucket/prefix or a local path")
    parser.add_argument("--run-id", required=True, help="the prepared run to execute")
    parser.add_argument("--config", help="the YAML configuration (default: Kafka's defaults)")
    args = parser.parse_args(argv)
    return JobArgs(lake=args.lake, run_id=args.run_id, config=args.config)


def load_inputs(args: JobArgs) -> tuple[ObjectStore, Config]:
    """The lake's store and the configuration, checked before Spark starts: an unprepared run id, a bad
    configuration or lake URI fails in a second, not after the JVM's start.

    Raises ``KafkaSegmentsError`` (``ConfigError``, ``InvalidLakeUriError``, ``RunStateError``, ...)."""
    from kafka_segments.config import Config, load_config
    from kafka_segments.pipeline.stages import read_prepared_run
    from kafka_segments.storage.uri import open_store

    config = Config.default() if args.config is None else load_config(args.config)
    store = open_store(args.lake)
    read_prepared_run(store, args.run_id)
    return store, config


def run_job(sc: SparkContext, args: JobArgs, store: ObjectStore, config: Config) -> StagedRun:
    """Execute the prepared run with its fan-outs on ``sc``'s executors."""
    from kafka_segments.pipeline.engines.cluster import ClusterEngine
    from kafka_segments.pipeline.engines.spark_submit import aws_settings
    from kafka_segments.pipeline.stages import execute_run
    from kafka_segments.progress import LineReporter, reporting
    from spark_runner import SparkRunner

    runner = SparkRunner(sc, environ=aws_settings(os.environ))
    engine = ClusterEngine(runner, args.lake)
    progress = LineReporter(lambda line: _say(sys.stdout, f"{RETENTION_JOB_NAME}: {line}"))
    with reporting(progress):
        return execute_run(store, config, args.run_id, engine=engine)


def summary_line(staged: StagedRun) -> str:
    """``kafka-segments-retention: run R: staged a new manifest (engine spark); ...`` (one line)."""
    from kafka_segments.lake.runs import RunOutcome

    result = staged.result
    adoption = result.adoption
    plans = result.plan.partitions
    outcome = "staged a new manifest" if staged.changed else RunOutcome.NOTHING_TO_CHANGE.value
    deleted = sum(len(plan.deletions) for plan in plans)
    return (
        f"{RETENTION_JOB_NAME}: run {staged.record.run_id}: {outcome} (engine {staged.engine}); "
        f"adopted {len(adoption.adopted)} segment(s), {len(adoption.quarantined)} quarantined; "
        f"planned {len(plans)} partition(s), {deleted} segment(s) to delete"
    )


def build_context(args: JobArgs) -> SparkContext:
    """The job's SparkContext, without a SparkSession: the job maps functions over plain items (RDDs) and
    never uses Spark SQL, whose session state (catalog, analyzer, optimizer rules) the JVM would otherwise
    build and JIT-compile before the first task, for nothing."""
    from pyspark import SparkConf, SparkContext

    sc = SparkContext.getOrCreate(SparkConf().setAppName(f"{RETENTION_JOB_NAME} {args.run_id}"))
    sc.setLogLevel("WARN")
    return sc


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        store, config = load_inputs(args)
    except KafkaSegmentsError as exc:
        _say(sys.stderr, f"{RETENTION_JOB_NAME}: {exc}")
        return failure_exit(exc)
    return _execute(args, store, config)


def _execute(args: JobArgs, store: ObjectStore, config: Config) -> int:
    sc = build_context(args)
    try:
        return execute_on(sc, args, store, config)
    finally:
        sc.stop()


def execute_on(sc: SparkContext, args: JobArgs, store: ObjectStore, config: Config) -> int:
    """The job's run on ``sc`` (which it leaves running): its summary line or one-line reason, and its exit
    code (see the module docstring)."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    try:
        staged = run_job(sc, args, store, config)
    except KafkaSegmentsError as exc:
        _say(sys.stderr, f"{RETENTION_JOB_NAME}: {exc}")
        return failure_exit(exc)
    except (PySparkException, Py4JError) as exc:
        sys.stderr.write(f"{exc}\n")  # the executor's traceback, for the log
        reason = failure_reason(exc)
        _say(sys.stderr, f"{RETENTION_JOB_NAME}: a Spark task failed: {reason}")
        return EXIT_TRANSIENT if names_retriable_error(reason) else EXIT_FAILED
    _say(sys.stdout, summary_line(staged))
    return EXIT_OK


def failure_reason(exc: BaseException) -> str:
    """The last line of a Spark error: for an executor's Python error (``PythonException``) that is the
    exception itself, e.g. ``kafka_segments.errors.TransientStoreError: s3://...: ...``."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def failure_exit(exc: KafkaSegmentsError) -> int:
    """2 for the user's input errors, 75 for an error the library marks ``retriable``, else 1."""
    if isinstance(exc, INPUT_ERRORS):
        return EXIT_USAGE
    return EXIT_TRANSIENT if type(exc).retriable else EXIT_FAILED


def names_retriable_error(reason: str) -> bool:
    """Whether an executor's error line (``kafka_segments.errors.<Name>: ...``) names a retriable library
    error (Spark returns the executor's exception as text only)."""
    from kafka_segments import errors

    match = re.match(r"kafka_segments\.errors\.([A-Za-z_]\w*)\b", reason)
    error = None if match is None else getattr(errors, match.group(1), None)
    return isinstance(error, type) and issubclass(error, KafkaSegmentsError) and error.retriable


def _say(stream: TextIO, line: str) -> None:
    """One line, flushed at once (spark-submit's output interleaves the JVM's)."""
    stream.write(line.replace("\n", " ") + "\n")
    stream.flush()


if __name__ == "__main__":
    sys.exit(main())
