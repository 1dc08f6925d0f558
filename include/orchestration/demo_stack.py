"""The demo stack's processes on one machine: the environment Airflow needs, Airflow CLI steps, long-running
components (``airflow standalone``, ``scheduler``, ``api-server``) and their REST API.

Used by ``scripts/demo_airflow.py`` (``./scripts/demo``, ``./scripts/airflow-standalone``) and by the
backfill test. Never imported by a DAG file, and imports no Airflow: everything Airflow does here runs in
child processes configured through the environment, exactly as a user's shell would run them.

Facts this encodes (Airflow 3.3 on SQLite, Spark provider 6.3):

* ``airflow standalone`` and the Spark provider start ``airflow`` and ``spark-submit`` by name, so the
  virtualenv's ``bin`` must come first on ``PATH``; ``java`` must be on it too.
* Variables and Connections come from ``AIRFLOW_VAR_*`` / ``AIRFLOW_CONN_*`` (JSON connections); Airflow 3
  creates no default connections, and a missing ``spark_default`` silently means ``--master yarn``.
* Backfill runs are only started by a running scheduler, whose task workers need the API server's
  Execution API (``[core] execution_api_server_url``), for an unpaused DAG.
* Components started in the background ignore SIGINT, and SIGTERM to ``airflow standalone`` alone orphans
  its components: stop = SIGTERM to each component, then to the parent, then SIGKILL to what is left of the
  process group this module created (and nothing else).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from kafka_segments.demo.embedded_s3 import DEFAULT_REGION, EMBEDDED_CREDENTIALS

from orchestration.metadata_db import database_settings
from orchestration.rest_api import api_healthy

MAINTENANCE_DAG_ID = "kafka_segments_maintenance"
LOCAL_SPARK = json.dumps({"conn_type": "spark", "host": "local[*]"})
LOG_TAIL_LINES = 40
_DROPPED_ENV = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_PROFILE", "KAFKA_SEGMENTS_SCHEDULE")
_DROPPED_PREFIXES = ("AIRFLOW", "_AIRFLOW")


class DemoStackError(Exception):
    """A step of the demo stack failed: ``step`` says which, ``log`` where its output is."""

    def __init__(self, reason: str, *, step: str, log: Path | None = None) -> None:
        self.reason = reason
        self.step = step
        self.log = log
        super().__init__(f"{step}: {reason}" + ("" if log is None else f" (log: {log})"))


# ---------------------------------------------------------------------------------------------- environment


@dataclass(frozen=True, slots=True)
class StackSettings:
    """Where the demo's Airflow works and on what."""

    project: Path
    """The project's source tree (``dags/``, ``plugins/``, ``.venv/``)."""
    airflow_home: Path
    lake_uri: str
    s3_endpoint: str | None
    """The S3 endpoint of an ``s3://`` lake (the embedded server); ``None`` for a local lake."""
    config: Path | None
    offsets_source: str | None = "lake"
    spark_connection: str = LOCAL_SPARK
    api_port: int = 8080
    database_url: str | None = None
    """Airflow's metadata database (a SQLAlchemy URL); ``None``: SQLite in ``airflow_home``."""
    extra: Mapping[str, str] = field(default_factory=dict)
    """Anything else (``KAFKA_SEGMENTS_SCHEDULE``, Airflow settings), applied last."""


TASK_PRELOAD_SETTINGS = {
    "AIRFLOW__SCHEDULER__MP_START_METHOD": "forkserver",
    "AIRFLOW__SCHEDULER__MP_FORKSERVER_PRELOAD": "orchestration.task_preload",
}
"""The scheduler starts its task workers from a fork server that has imported what the tasks import
(``orchestration.task_preload``; docs/airflow.md "Task start-up")."""


def venv_bin(project: Path) -> Path:
    """The ``bin`` folder of the interpreter that runs the stack (the project's ``.venv`` when present)."""
    candidate = project / ".venv" / "bin"
    return candidate if (candidate / "airflow").exists() else Path(sys.executable).parent


def airflow_environment(settings: StackSettings, *, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of every Airflow process of the stack (the DAG contract's Variables and Connections,
    the lake's AWS settings for tasks and Spark, a throwaway ``AIRFLOW_HOME`` and its metadata database).

    Nothing Airflow-related is inherited from ``base`` (default ``os.environ``): an ``AIRFLOW__*`` setting of
    the calling process (a test session's unit-test mode, a developer's own Airflow) would change the stack.
    """
    env = {
        key: value
        for key, value in (os.environ if base is None else base).items()
        if key not in _DROPPED_ENV and not key.startswith(_DROPPED_PREFIXES)
    }
    bin_dir = venv_bin(settings.project)
    env.update(
        PATH=os.pathsep.join([str(bin_dir), env.get("PATH", os.defpath)]),
        AIRFLOW_HOME=str(settings.airflow_home),
        AIRFLOW__CORE__DAGS_FOLDER=str(settings.project / "dags"),
        AIRFLOW__CORE__PLUGINS_FOLDER=str(settings.project / "plugins"),
        AIRFLOW__CORE__LOAD_EXAMPLES="False",
        AIRFLOW__CORE__EXECUTOR="LocalExecutor",
        AIRFLOW__CORE__PARALLELISM="2",
        **TASK_PRELOAD_SETTINGS,
        **database_settings(settings.database_url),
        AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS="True",
        AIRFLOW__API__HOST="127.0.0.1",  # this machine only
        AIRFLOW__API__PORT=str(settings.api_port),
        AIRFLOW__CORE__EXECUTION_API_SERVER_URL=f"http://127.0.0.1:{settings.api_port}/execution/",
        AIRFLOW_VAR_KAFKA_SEGMENTS_LAKE=settings.lake_uri,
        AIRFLOW_CONN_SPARK_DEFAULT=settings.spark_connection,
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=str(bin_dir / "python"),
        PYTHONUNBUFFERED="1",
    )
    if settings.config is not None:
        env["AIRFLOW_VAR_KAFKA_SEGMENTS_CONFIG"] = str(settings.config)
    if settings.offsets_source is not None:
        env["AIRFLOW_VAR_KAFKA_SEGMENTS_OFFSETS_SOURCE"] = settings.offsets_source
    if settings.s3_endpoint is not None:
        env.update(s3_environment(settings.s3_endpoint))
        env["AIRFLOW_CONN_AWS_DEFAULT"] = aws_connection(settings.s3_endpoint)
    env.update(settings.extra)
    return env


def s3_environment(endpoint_url: str) -> dict[str, str]:
    """The standard AWS settings for the embedded S3 server (what the library and Spark read)."""
    return {
        "AWS_ENDPOINT_URL": endpoint_url,
        "AWS_ACCESS_KEY_ID": EMBEDDED_CREDENTIALS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": EMBEDDED_CREDENTIALS["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": DEFAULT_REGION,
        "AWS_REGION": DEFAULT_REGION,
    }


def aws_connection(endpoint_url: str) -> str:
    """``aws_default`` for the embedded server, in Airflow's JSON connection form."""
    return json.dumps(
        {
            "conn_type": "aws",
            "login": EMBEDDED_CREDENTIALS["aws_access_key_id"],
            "password": EMBEDDED_CREDENTIALS["aws_secret_access_key"],
            "extra": {"endpoint_url": endpoint_url, "region_name": DEFAULT_REGION},
        }
    )


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# ------------------------------------------------------------------------------------------------ processes


def log_tail(log: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` lines of a log file ("" when it does not exist)."""
    if not log.exists():
        return ""
    with log.open(encoding="utf-8", errors="replace") as handle:
        return "".join(deque(handle, maxlen=lines))


def run_step(
    step: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    log: Path,
    timeout_s: float = 600,
    on_line: Callable[[str], None] | None = None,
) -> None:
    """Run one command to completion with its output appended to ``log``; ``on_line`` gets each line of that
    output while the command runs (``orchestration.task_progress`` for ``airflow dags test``).

    Raises:
        DemoStackError: it failed (non-zero exit, not found, or ``timeout_s`` passed).
    """
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n===== {step}: {' '.join(args)}\n")
        out.flush()
        start = out.tell()
        try:
            process = subprocess.Popen(list(args), env=dict(env), stdout=out, stderr=subprocess.STDOUT)
        except FileNotFoundError as exc:
            raise DemoStackError(f"{args[0]} not found: {exc}", step=step, log=log) from exc
        try:
            returncode = _wait(
                process, timeout_s=timeout_s, follow=None if on_line is None else (log, start, on_line)
            )
        except subprocess.TimeoutExpired as exc:
            process.kill()
            process.wait()
            raise DemoStackError(f"did not finish within {timeout_s:.0f} s", step=step, log=log) from exc
    if returncode != 0:
        raise DemoStackError(f"exited with {returncode}", step=step, log=log)


def _wait(
    process: subprocess.Popen[bytes],
    *,
    timeout_s: float,
    follow: tuple[Path, int, Callable[[str], None]] | None,
    interval_s: float = 0.5,
) -> int:
    """Wait for ``process``; with ``follow`` (log, offset, callback), feed the callback each complete line
    the log gains from ``offset`` on, while the process runs and once more after it ended.

    Raises:
        subprocess.TimeoutExpired: ``timeout_s`` passed.
    """
    if follow is None:
        return process.wait(timeout=timeout_s)
    log, offset, on_line = follow
    deadline = time.monotonic() + timeout_s
    pending = ""
    with log.open(encoding="utf-8", errors="replace") as reader:
        reader.seek(offset)
        while True:
            returncode = process.poll()
            *lines, pending = (pending + reader.read()).split("\n")
            for line in lines:
                on_line(line)
            if returncode is not None:
                if pending:
                    on_line(pending)
                return returncode
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(process.args, timeout_s)
            time.sleep(interval_s)


class Component:
    """A long-running process in a session (process group) of its own, output appended to a log file.

    ``children_first``: stop its direct children before it (``airflow standalone``, whose children are the
    components); otherwise it is asked to stop first and takes its workers down itself (``scheduler``).
    """

    def __init__(
        self,
        name: str,
        args: Sequence[str],
        *,
        env: Mapping[str, str],
        log: Path,
        children_first: bool = False,
    ) -> None:
        self.name = name
        self.log = log
        self.children_first = children_first
        self._out: IO[str] = log.open("a", encoding="utf-8")
        self._out.write(f"\n===== {name}: {' '.join(args)}\n")
        self._out.flush()
        self.process = subprocess.Popen(
            list(args), env=dict(env), stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, *, timeout_s: float = 30) -> None:
        """SIGTERM (its direct children, then) itself; SIGKILL whatever is left of its process group."""
        try:
            if self.children_first:
                self._terminate_children(timeout_s)
            if self.running():
                self.process.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=timeout_s)
        finally:
            self._kill_group()
            self._out.close()

    def _terminate_children(self, timeout_s: float) -> None:
        import psutil  # type: ignore[import-untyped, unused-ignore]  # Airflow's dependency; no stubs in the lock

        if not self.running():
            return
        with contextlib.suppress(psutil.NoSuchProcess):
            children = psutil.Process(self.pid).children()
            for child in children:
                with contextlib.suppress(psutil.NoSuchProcess):
                    child.terminate()
            psutil.wait_procs(children, timeout=timeout_s)

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)  # our own session: the component and its orphans only
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)


@contextlib.contextmanager
def scheduler_and_api_server(
    env: Mapping[str, str], *, log: Path, port: int, migrated: bool = False, stop_timeout_s: float = 30
) -> Iterator[str]:
    """A migrated metadata database with the DAGs serialized, then Airflow's API server (on ``port``) and
    scheduler for the duration of the block; yields the API's base URL, and stops both afterwards.
    ``migrated``: ``AIRFLOW_HOME`` already holds a migrated database (the tests copy one), so no
    ``airflow db migrate`` (some 6 s of CPU). ``stop_timeout_s``: how long each may take to stop before it is
    killed (a throwaway test stack: 0; a stopping API server spends seconds of CPU tearing Python down).

    Raises:
        DemoStackError: a step failed, or the API server did not become healthy.
    """
    if not migrated:
        run_step("airflow db migrate", ["airflow", "db", "migrate"], env=env, log=log)
    run_step("airflow dags reserialize", ["airflow", "dags", "reserialize"], env=env, log=log)
    components: list[Component] = []
    try:
        components.append(
            Component("api-server", ["airflow", "api-server", "--port", str(port)], env=env, log=log)
        )
        components.append(Component("scheduler", ["airflow", "scheduler"], env=env, log=log))
        api, alive = f"http://127.0.0.1:{port}", components[0].running
        wait_until("api-server health", lambda: api_healthy(api), timeout_s=120, interval_s=0.25, alive=alive)
        yield api
    finally:
        for component in reversed(components):
            component.stop(timeout_s=stop_timeout_s)


def wait_until(
    what: str,
    check: Callable[[], bool],
    *,
    timeout_s: float,
    interval_s: float = 1.0,
    alive: Callable[[], bool] | None = None,
) -> None:
    """Poll ``check`` until it is true.

    Raises:
        DemoStackError: ``timeout_s`` passed, or ``alive`` says the process being waited on has died.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        with contextlib.suppress(OSError, ValueError):
            if check():
                return
        if alive is not None and not alive():
            raise DemoStackError("the process exited", step=what)
        if time.monotonic() > deadline:
            raise DemoStackError(f"not done after {timeout_s:.0f} s", step=what)
        time.sleep(interval_s)


OUTPUT_MARKER = ".kafka-segments-demo-output"


def fresh_output_dir(path: Path) -> Path:
    """``path`` as a new, empty output folder of the demo, marked as such.

    What an earlier demo left there is removed; a folder that is not empty and was not made by the demo is
    never touched.

    Raises:
        DemoStackError: ``path`` is a file, or a non-empty folder the demo did not make.
    """
    if path.exists():
        if not path.is_dir() or (any(path.iterdir()) and not (path / OUTPUT_MARKER).exists()):
            raise DemoStackError(
                f"{path} exists and is not a demo output folder; choose another --output",
                step="output folder",
            )
        shutil.rmtree(path)
    path.mkdir(parents=True)
    (path / OUTPUT_MARKER).write_text("made by the kafka-segments demo; removed by its next run\n")
    return path
