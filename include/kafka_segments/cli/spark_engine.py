"""``run --engine spark`` and ``plan --engine spark``: the maintenance DAG's stages (``pipeline/stages.py``),
in sequence, from the command line, with spark-submit of ``spark_jobs/retention_job.py`` between prepare and
validate. A dry run stages and validates but commits nothing. Exit codes as the inline engine: 0 ok; 1 a
problem (quarantine, failed validation or Spark job, commit conflict); 2 bad input (also when the Spark job
exits 2: a topic or partition the lake does not have)."""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_segments.cli.common import EXIT_PROBLEM, EXIT_USAGE, run_options
from kafka_segments.cli.output import emit

if TYPE_CHECKING:
    from kafka_segments.config import Config
    from kafka_segments.lake.runs import RunRecord
    from kafka_segments.pipeline.sequence import RunOptions
    from kafka_segments.storage.base import ObjectStore

DEFAULT_MASTER = "local[*]"
VALIDATOR_MODULE = "segment_quality"

Progress = Callable[[str], None]


def run_spark_engine(args: argparse.Namespace, *, dry_run: bool) -> int:
    """The stages of a run on Spark (see the module docstring); prints the report, returns the exit code."""
    from kafka_segments.cli.lake_cmds import open_lake
    from kafka_segments.config import ConfigError, load_config
    from kafka_segments.offsets.snapshot_fields import SnapshotFormatError
    from kafka_segments.pipeline.sequence import run_stages

    labels = {"engine": "spark", "command": f"kafka-segments {args.command}"}
    options = run_options(args, dry_run=dry_run, labels=labels)
    door = SparkDoor(args)
    try:
        config = load_config(args.config)  # bad configuration: exit 2 before anything runs
        finished = run_stages(open_lake(args.lake), config, options, door)
    except (ConfigError, SnapshotFormatError) as exc:
        print(f"kafka-segments {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if finished.report is not None:
        _print_report(args, finished.report)
    if finished.failure is not None:
        print(f"kafka-segments {args.command}: {finished.failure}", file=sys.stderr)
        return door.failure_exit
    return _quarantine_status(args, finished.report or {})


class SparkDoor:
    """Executes with spark-submit of the retention job, validates with the quality package's gate, each in
    a process of its own."""

    requires_validation = True

    def __init__(self, args: argparse.Namespace) -> None:
        self._args = args
        self.failure_exit = EXIT_PROBLEM
        """The exit code of a failed stage: 2 when the Spark job exited 2 (the user's input), else 1."""

    def execute(self, store: ObjectStore, config: Config, record: RunRecord, options: RunOptions) -> None:
        from kafka_segments.lake.runs import RunOutcome
        from kafka_segments.pipeline.sequence import StageFailedError

        failure = _execute(self._args, record.run_id, step=options.step)
        if failure is not None:
            reason, self.failure_exit = failure
            raise StageFailedError(reason, outcome=RunOutcome.ABORTED)

    def validate(self, store: ObjectStore, record: RunRecord, options: RunOptions) -> None:
        from kafka_segments.lake.runs import RunOutcome
        from kafka_segments.pipeline.sequence import StageFailedError

        failure = _validate(self._args, record.run_id, step=options.step)
        if failure is not None:
            raise StageFailedError(failure, outcome=RunOutcome.REJECTED)


def _execute(args: argparse.Namespace, run_id: str, *, step: Progress) -> tuple[str, int] | None:
    """The Spark job; the reason the run must end uncommitted and the exit code it means, or ``None``."""
    from kafka_segments.pipeline.engines.spark_submit import (
        SparkJobError,
        SparkJobNotFoundError,
        retention_job_spec,
        run_spark_submit,
    )

    master = getattr(args, "spark_master", None) or DEFAULT_MASTER
    try:
        spec = retention_job_spec(lake=args.lake, run_id=run_id, config_path=args.config)
        step(f"execute: spark-submit {spec.name} on {master} (adopt and plan on Spark's executors)")
        result = run_spark_submit(spec, master=master, progress=lambda line: step(f"spark: {line}"))
    except SparkJobError as exc:
        code = EXIT_USAGE if exc.exit_code == EXIT_USAGE else EXIT_PROBLEM
        return f"the Spark job failed, nothing is committed: {exc}", code
    except SparkJobNotFoundError as exc:
        return f"the Spark job failed, nothing is committed: {exc}", EXIT_PROBLEM
    step(f"execute: done in {result.seconds:.1f} s")
    return None


def _validate(args: argparse.Namespace, run_id: str, *, step: Progress) -> str | None:
    """Run the validation stage in its own process (Great Expectations loads for seconds and stays out of
    this one); ``None`` when it passed, else the reason."""
    step(f"validate: python -m {VALIDATOR_MODULE} validate")
    if importlib.util.find_spec(VALIDATOR_MODULE) is None:
        return f"validation could not run, nothing is committed: {VALIDATOR_MODULE} is not installed"
    argv = [sys.executable, "-m", VALIDATOR_MODULE, "validate", "--lake", args.lake, "--run-id", run_id]
    if args.config is not None:
        argv += ["--config", args.config]
    completed = subprocess.run(argv, capture_output=True, text=True, check=False)
    for line in completed.stdout.splitlines():
        step(f"validate: {line}")
    if completed.returncode == 0:
        return None
    lines = [line.strip() for line in completed.stderr.splitlines() if line.strip()]
    reason = lines[-1] if lines else f"exit code {completed.returncode}"
    verdict = "failed" if completed.returncode == EXIT_PROBLEM else "could not run"
    return f"validation {verdict}, nothing is committed: {reason}"


def _print_report(args: argparse.Namespace, report: dict[str, Any]) -> None:
    """The run's report, printed (``--json``: the document) and written to ``--report``."""
    from kafka_segments.pipeline.report import render_report

    if args.report:
        Path(args.report).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    emit(report, render_report(report), as_json=args.json)


def _quarantine_status(args: argparse.Namespace, report: dict[str, Any]) -> int:
    """Exit 1 when partitions were quarantined or the tables did not sync (as the inline engine), else 0."""
    from kafka_segments.cli.common import run_exit

    return run_exit(args.command, report)
