"""Parse a DAG folder with ``DagBag`` under an audit hook that records I/O done by DAG code at parse time.

    python parse_audit.py DAG_FOLDER

Prints one line ``PARSE-AUDIT <json>``: the DAGs with their task ids, schedules and access control, the
import errors and captured warnings, and the violations.

Airflow and the DagBag machinery are imported before the hook is installed (their own start-up reads
configuration files). Then, while a frame of a file in ``DAG_FOLDER`` is executing (a DAG file's module
body, and everything it calls or imports), these audit events are violations:

* ``open`` of any file, unless the import system itself opens it (a module's source, bytecode or extension
  while importing: the innermost Python frame belongs to ``importlib._bootstrap*``);
* ``os.listdir``/``os.scandir`` outside the import system;
* any socket, ``sqlite3`` connection, subprocess or ``os.system`` call.

So a DAG that reads a Variable (database or API), a Connection, a file or the network at parse time is
caught, and so is a module it imports that does I/O in its body. Variables and Connections are looked up
as on a server (``_AIRFLOW_PROCESS_CONTEXT=server``: the metadata database), and the database's connection
pool is emptied first, so such a lookup has to open a connection.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

_NETWORK_OR_PROCESS = (
    "socket.",
    "sqlite3.connect",
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
)
_FILE_EVENTS = ("open", "os.listdir", "os.scandir")
_IMPORT_SYSTEM = ("<frozen importlib._bootstrap", "importlib/_bootstrap")
_HARMLESS = {("urllib3/util/connection.py", "_has_ipv6")}
"""Known probes that do no I/O: urllib3 binds an IPv6 socket to ``::1`` port 0 when it is imported, to learn
whether the host supports IPv6 (no traffic, nothing read)."""


def _describe(event: str, args: tuple[Any, ...]) -> str:
    first = args[0] if args else ""
    return f"{event} {first!r}"[:300]


def _schedule(dag: Any) -> str | None:
    """The DAG's schedule as declared (None without one)."""
    schedule = getattr(dag, "schedule", None)
    return None if schedule is None else str(schedule)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, set | frozenset | list | tuple):
        return sorted(_plain(v) for v in value)
    return value


def main(folder: str) -> int:
    # Variables and Connections read at parse time go to the metadata database (the server's secrets
    # chain), and every database access must open a new connection (an audited sqlite3.connect).
    os.environ["_AIRFLOW_PROCESS_CONTEXT"] = "server"
    import airflow.sdk  # noqa: F401  (configuration, logging, providers: before the hook)

    # the OpenLineage client (imported by the Spark provider's operator when the OpenLineage provider is
    # installed) reads its HTTP library's package metadata on import: a library's start-up, not DAG code
    import openlineage.client  # noqa: F401
    from airflow import settings
    from airflow.dag_processing.dagbag import DagBag

    if settings.engine is not None:
        settings.engine.dispose()

    dag_folder = str(Path(folder).resolve())
    violations: list[dict[str, str]] = []
    armed = [True]

    def in_dag_code(frame: Any) -> tuple[bool, str]:
        """Whether DAG code is running (and no known harmless probe), and the innermost caller."""
        innermost = frame.f_code.co_filename
        inside = False
        while frame is not None:
            code = frame.f_code
            if any(code.co_filename.endswith(path) and code.co_name == name for path, name in _HARMLESS):
                return False, innermost
            inside = inside or code.co_filename.startswith(dag_folder + os.sep)
            frame = frame.f_back
        return inside, innermost

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if not armed[0]:
            return
        interesting = event.startswith(_NETWORK_OR_PROCESS) or event in _FILE_EVENTS
        if not interesting:
            return
        armed[0] = False  # the hook's own work must not recurse
        try:
            inside, innermost = in_dag_code(sys._getframe(1))
            if not inside:
                return
            if event in _FILE_EVENTS and innermost.startswith(_IMPORT_SYSTEM):
                return
            violations.append({"event": _describe(event, args), "caller": innermost})
        finally:
            armed[0] = True

    sys.addaudithook(hook)
    bag = DagBag(dag_folder=dag_folder)
    armed[0] = False
    document = {
        "dags": {dag_id: sorted(dag.task_ids) for dag_id, dag in bag.dags.items()},
        "schedules": {dag_id: _schedule(dag) for dag_id, dag in bag.dags.items()},
        "access_control": {dag_id: _plain(dag.access_control) for dag_id, dag in bag.dags.items()},
        "import_errors": {str(k): str(v) for k, v in bag.import_errors.items()},
        "warnings": {str(k): list(v) for k, v in bag.captured_warnings.items()},
        "violations": violations,
    }
    sys.stdout.write("PARSE-AUDIT " + json.dumps(document) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
