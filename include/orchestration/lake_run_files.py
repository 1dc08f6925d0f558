"""What the lake view serves from a lake run's folder (docs/airflow.md, "The lake view"), and its links: a
run's report (``report.json``), its validation page and results (``validation.html``, ``validation.json``)
and its Great Expectations Data Docs (``data-docs/…``), behind Airflow's login like the page; and on the
page's commits and dry runs, links to them and to the Airflow run a lake run came from (its labels).

Only those files of one run's folder are served: a run id of the lake's syntax and a path of plain segments
(no ``..``, ``.``, empty segment or backslash); anything else is not found. A page from the lake is served
with a sandboxing Content-Security-Policy, so its scripts never run as Airflow's origin. No Airflow import
here (``lake_view_app`` routes the requests), and nothing heavy at import: the plugin's extra links
(``lake_run_links``) read ``LINKED`` in every Airflow component."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    from kafka_segments.storage.base import ObjectStore

DATA_DOCS = "data-docs/"
"""``segment_quality.docs.DATA_DOCS`` (``tests/airflow/test_lake_view_app.py`` checks the names)."""
SERVED = ("report.json", "validation.html", "validation.json")
"""The run files served by name (``run_folder.REPORT``, ``segment_quality.page.PAGE``,
``run_folder.VALIDATION``), and everything under ``data-docs/``."""
LINKED = (("report", SERVED[0]), ("validation", SERVED[1]), ("Data Docs", DATA_DOCS + "index.html"))
"""The links a run gets on the page, each when its folder holds that file."""
SANDBOX = "sandbox allow-scripts allow-popups"
"""The Content-Security-Policy of every served file: an opaque origin, no access to Airflow's session."""
AIRFLOW_RUNS_READ = 30
"""How many of the page's newest Airflow runs get a link to their DAG run (one GET of ``run.json`` each)."""
AIRFLOW_RUN_PREFIX = "af-"
"""The lake run ids of the DAGs' runs (``run_parameters.lake_run_id``): only those are read for labels."""

_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")
_TYPES = {
    "html": "text/html; charset=utf-8",
    "json": "application/json",
    "css": "text/css",
    "js": "text/javascript",
    "png": "image/png",
    "svg": "image/svg+xml",
    "ico": "image/x-icon",
}


@dataclass(frozen=True, slots=True)
class RunFile:
    body: bytes
    media_type: str


def valid_run_id(run_id: str) -> bool:
    """Whether ``run_id`` has the lake's run id syntax (``lake.layout.validate_run_id``)."""
    return _RUN_ID.fullmatch(run_id) is not None


def servable(run_id: str, path: str) -> bool:
    """Whether ``path`` in run ``run_id``'s folder may be served: a named file or one under ``data-docs/``,
    every segment plain."""
    if not valid_run_id(run_id):
        return False
    if path in SERVED:
        return True
    inner = path.removeprefix(DATA_DOCS)
    segments = inner.split("/")
    return inner != path and all(_SEGMENT.fullmatch(s) and s.strip(".") for s in segments)


def read_run_file(store: ObjectStore, run_id: str, path: str) -> RunFile | None:
    """The file ``path`` of run ``run_id``'s folder, ``None`` when it may not be served or is not there."""
    from kafka_segments.lake.run_folder import read_run_bytes_or_none

    if not servable(run_id, path):
        return None
    body = read_run_bytes_or_none(store, run_id, path)
    if body is None:
        return None
    extension = path.rpartition(".")[2].lower()
    return RunFile(body, _TYPES.get(extension, "application/octet-stream"))


def run_links(
    store: ObjectStore, run_ids: Iterable[str], *, files: str, airflow: str
) -> dict[str, tuple[tuple[str, str], ...]]:
    """Per run of ``run_ids``: ``(label, href)`` of its report, validation page and Data Docs when its
    folder holds them (``files`` + ``<run id>/<path>``), and of its Airflow run (``airflow`` +
    ``dags/<dag id>/runs/<run id>``, from its ``run.json`` labels) for the newest ``AIRFLOW_RUNS_READ``
    runs whose id is an Airflow one. One listing of the runs' folders, one GET per such run."""
    wanted = list(dict.fromkeys(run_ids))
    held = _files_held(store, set(wanted))
    links: dict[str, tuple[tuple[str, str], ...]] = {}
    airflow_runs = [r for r in wanted if r.startswith(AIRFLOW_RUN_PREFIX)][-AIRFLOW_RUNS_READ:]
    for run_id in wanted:
        found = [(label, f"{files}{run_id}/{name}") for label, name in LINKED if name in held.get(run_id, ())]
        dag_run = _airflow_run(store, run_id, airflow) if run_id in airflow_runs else None
        links[run_id] = tuple(found) + (() if dag_run is None else (("Airflow run", dag_run),))
    return links


def _files_held(store: ObjectStore, run_ids: set[str]) -> dict[str, set[str]]:
    from kafka_segments.lake.layout import RUNS_PREFIX, parse_run_folder_key

    names = {name for _, name in LINKED}
    held: dict[str, set[str]] = {}
    for meta in store.list(RUNS_PREFIX):
        parsed = parse_run_folder_key(meta.key)
        if parsed is not None and parsed[0] in run_ids and parsed[1] in names:
            held.setdefault(parsed[0], set()).add(parsed[1])
    return held


def _airflow_run(store: ObjectStore, run_id: str, airflow: str) -> str | None:
    from kafka_segments.errors import KafkaSegmentsError
    from kafka_segments.lake.run_folder import read_run

    try:
        labels: Mapping[str, str] = read_run(store, run_id).labels
    except KafkaSegmentsError:  # no run.json (a run of an old release) or not readable: no link
        return None
    dag_id, dag_run_id = labels.get("airflow_dag_id"), labels.get("airflow_run_id")
    if not dag_id or not dag_run_id:
        return None
    return f"{airflow}dags/{quote(dag_id, safe='')}/runs/{quote(dag_run_id, safe='')}"
