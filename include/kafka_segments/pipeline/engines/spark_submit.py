"""How a Spark job of this project is submitted: the job's spec, the library archive, and ``spark-submit``.

Never imports pyspark. A ``SparkJobSpec`` is complete for any launcher (``run --engine spark`` or Airflow's
``SparkSubmitOperator``): the entry script in ``spark_jobs/``, a zip of ``kafka_segments`` as ``py_files``
(executors need not have the project installed), the ``spark-submit`` process's environment (with the
``AWS_*`` settings), and ``conf``. The settings are never in ``conf``: ``--conf`` arguments are on the
command line, which every local user sees (``ps``). A standalone cluster's executors do not inherit the
launcher's environment, so the job's driver hands them its settings with each task
(``SparkRunner(environ=...)``, ``engines.worker_environ``); prefer instance roles to keys."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from kafka_segments.errors import LocatedError
from kafka_segments.pipeline.engines.library_archive import (
    SparkJobNotFoundError,
    library_archive,
    package_dir,
)

__all__ = [
    "DEFAULT_LOCAL_IP",
    "OUTPUT_TAIL_LINES",
    "RETENTION_JOB_NAME",
    "RETENTION_JOB_SCRIPT",
    "SPARK_JOBS_ENV",
    "SparkJobError",
    "SparkJobNotFoundError",
    "SparkJobResult",
    "SparkJobSpec",
    "aws_settings",
    "find_spark_submit",
    "job_conf",
    "launcher_env",
    "library_archive",
    "retention_job_spec",
    "run_spark_submit",
    "spark_jobs_dir",
    "spark_submit_argv",
]

RETENTION_JOB_NAME = "kafka-segments-retention"
"""The retention job's Spark application name; the job's one-line summary and errors start with it."""
RETENTION_JOB_SCRIPT = "retention_job.py"
SPARK_JOBS_ENV = "KAFKA_SEGMENTS_SPARK_JOBS"
"""Where the ``spark_jobs`` folder is when the project does not run from its source tree."""
DEFAULT_LOCAL_IP = "127.0.0.1"
OUTPUT_TAIL_LINES = 40
_URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class SparkJobError(LocatedError):
    """``spark-submit`` failed (``location``: the application and the master).

    Attributes:
        exit_code: ``spark-submit``'s exit code (``None``: it could not be started).
        output_tail: its last lines of output (stdout and stderr together).
    """

    def __init__(
        self, reason: str, *, location: str, exit_code: int | None, output_tail: tuple[str, ...] = ()
    ) -> None:
        self.exit_code = exit_code
        self.output_tail = tuple(output_tail)
        super().__init__(reason, location=location)


@dataclass(frozen=True, slots=True)
class SparkJobSpec:
    """Everything needed to submit one job (see the module docstring)."""

    name: str
    application: str
    application_args: tuple[str, ...]
    py_files: tuple[str, ...]
    env: Mapping[str, str]
    conf: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class SparkJobResult:
    """A finished ``spark-submit``."""

    argv: tuple[str, ...]
    exit_code: int
    seconds: float
    output_tail: tuple[str, ...]
    summary: str | None
    """The job's one-line summary (its last line starting with the job's name), if it printed one."""


def spark_jobs_dir() -> Path:
    """The ``spark_jobs`` folder: ``$KAFKA_SEGMENTS_SPARK_JOBS``, else ``<repo>/spark_jobs`` beside
    ``include/``. Raises ``SparkJobNotFoundError`` when it is not a directory."""
    configured = os.environ.get(SPARK_JOBS_ENV)
    if configured:
        folder = Path(configured).expanduser().resolve()
        where = f"${SPARK_JOBS_ENV}"
    else:
        folder = package_dir().parents[1] / "spark_jobs"
        where = "the project's source tree"
    if not folder.is_dir():
        raise SparkJobNotFoundError(
            f"no spark_jobs folder ({where}); run from the project's source tree or set {SPARK_JOBS_ENV}",
            location=str(folder),
        )
    return folder


def retention_job_spec(
    *, lake: str, run_id: str, config_path: str | None, environ: Mapping[str, str] | None = None
) -> SparkJobSpec:
    """The retention job (``spark_jobs/retention_job.py``) of the prepared run ``run_id``: it executes the
    run (``stages.execute_run``) with its reads and per-topic planning on Spark's executors.

    A local lake path and the configuration path are made absolute (executors of a cluster do not share the
    launcher's working directory). ``environ`` defaults to ``os.environ``."""
    env_in = os.environ if environ is None else environ
    application = spark_jobs_dir() / RETENTION_JOB_SCRIPT
    if not application.is_file():
        raise SparkJobNotFoundError("the retention job's script is missing", location=str(application))
    args = ["--lake", _absolute_lake(lake), "--run-id", run_id]
    if config_path is not None:
        args += ["--config", os.path.abspath(config_path)]
    return SparkJobSpec(
        name=RETENTION_JOB_NAME,
        application=str(application),
        application_args=tuple(args),
        py_files=(str(library_archive()),),
        env=launcher_env(env_in),
        conf=job_conf(env_in),
    )


def launcher_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment ``spark-submit`` needs on top of the launcher's (see the module docstring)."""
    python = environ.get("PYSPARK_PYTHON") or sys.executable
    env = {
        "PYSPARK_PYTHON": python,
        "PYSPARK_DRIVER_PYTHON": environ.get("PYSPARK_DRIVER_PYTHON") or python,
        "SPARK_LOCAL_IP": environ.get("SPARK_LOCAL_IP") or DEFAULT_LOCAL_IP,
    }
    env.update(aws_settings(environ))
    return env


def job_conf(environ: Mapping[str, str]) -> dict[str, str]:
    """The Spark configuration of a job: the workers' Python, no UI, warnings and errors only in the log.
    Never a secret: it becomes ``--conf`` arguments (see the module docstring)."""
    python = environ.get("PYSPARK_PYTHON") or sys.executable
    return {
        "spark.pyspark.python": python,
        "spark.pyspark.driver.python": environ.get("PYSPARK_DRIVER_PYTHON") or python,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.log.level": "WARN",
    }


def find_spark_submit() -> str:
    """The ``spark-submit`` next to this interpreter (the pyspark wheel installs it there), else on ``PATH``.

    Raises ``SparkJobNotFoundError``."""
    beside = Path(sys.executable).parent / "spark-submit"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("spark-submit")
    if found is None:
        raise SparkJobNotFoundError(
            "spark-submit is neither next to this Python nor on PATH (install pyspark)", location=str(beside)
        )
    return found


def spark_submit_argv(spec: SparkJobSpec, *, master: str) -> list[str]:
    """The ``spark-submit`` command line of ``spec`` on ``master`` (client deploy mode)."""
    argv = [find_spark_submit(), "--master", master, "--name", spec.name]
    if spec.py_files:
        argv += ["--py-files", ",".join(spec.py_files)]
    for key, value in sorted(spec.conf.items()):
        argv += ["--conf", f"{key}={value}"]
    return [*argv, spec.application, *spec.application_args]


def run_spark_submit(
    spec: SparkJobSpec, *, master: str = "local[*]", progress: Callable[[str], None] | None = None
) -> SparkJobResult:
    """Run ``spark-submit`` for ``spec`` and wait for it; each output line goes to ``progress``.

    Raises:
        SparkJobError: ``spark-submit`` could not be started or exited non-zero (with its exit code and the
            tail of its output; the reason is the job's own one-line error when it printed one).
        SparkJobNotFoundError: no ``spark-submit``.
    """
    argv = spark_submit_argv(spec, master=master)
    location = f"{spec.application} on {master}"
    env = {**os.environ, **spec.env}
    tail: deque[str] = deque(maxlen=OUTPUT_TAIL_LINES)
    started = time.monotonic()
    try:
        code = _stream(argv, env, tail, progress)
    except OSError as exc:
        raise SparkJobError(f"cannot start spark-submit: {exc}", location=location, exit_code=None) from exc
    lines = tuple(tail)
    if code != 0:
        raise SparkJobError(
            f"spark-submit exited with code {code}: {_failure_line(spec.name, lines)}",
            location=location,
            exit_code=code,
            output_tail=lines,
        )
    return SparkJobResult(
        tuple(argv), code, time.monotonic() - started, lines, _last_line_of(spec.name, lines)
    )


def _stream(
    argv: list[str], env: Mapping[str, str], tail: deque[str], progress: Callable[[str], None] | None
) -> int:
    process = subprocess.Popen(
        argv, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    )
    try:
        for line in _lines(process):
            tail.append(line)
            if progress is not None:
                progress(line)
        return process.wait()
    except BaseException:
        process.kill()
        process.wait()
        raise


def _lines(process: subprocess.Popen[str]) -> Iterator[str]:
    if process.stdout is None:
        return
    with process.stdout:
        for line in process.stdout:
            yield line.rstrip("\n")


def _failure_line(name: str, lines: tuple[str, ...]) -> str:
    own = _last_line_of(name, lines)
    if own is not None:
        return own
    meaningful = [line.strip() for line in lines if line.strip()]
    return meaningful[-1] if meaningful else "no output"


def _last_line_of(name: str, lines: tuple[str, ...]) -> str | None:
    prefix = f"{name}: "
    return next((line for line in reversed(lines) if line.startswith(prefix)), None)


def aws_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """The ``AWS_*`` settings of ``environ`` (non-empty ones): what a job's workers need to open the lake."""
    return {name: value for name, value in sorted(environ.items()) if name.startswith("AWS_") and value}


def _absolute_lake(lake: str) -> str:
    return lake if _URI_SCHEME.match(lake) else os.path.abspath(lake)
