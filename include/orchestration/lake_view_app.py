"""The lake view in Airflow's UI (docs/lake-view.md): a FastAPI app that Airflow's own API server serves
(``plugins/kafka_segments_plugin.py`` declares it), behind Airflow's login, read-only.

It renders ``kafka_segments.views.lake_view``'s page for the lake the DAGs maintain (the Variables
``kafka_segments_lake`` and ``kafka_segments_config``, with the ``aws_default`` connection: docs/airflow.md,
"Settings") at the time of the request. A lake that cannot be read shows its error on the page. A lake URI
is never shown with its secret (``s3://KEY:***@bucket``: ``redaction.redact_uri``), on a page or in a row.

With more lakes (the Variable ``kafka_segments_lakes``: ``orchestration.lake_view_lakes``), ``GET /`` lists
them, one row each (``kafka_segments.views.lake_list``), and ``GET /lakes/<name>`` is a lake's page.
``GET /lakes/<name>/runs/<run id>/<path>`` serves a run's report, validation page and Data Docs
(``orchestration.lake_run_files``: the DAGs' lake is named ``default``), which the page's commits and dry
runs link to, with the Airflow run each came from. ``POST /lakes/default/preview`` (the page's **Preview
now**) triggers the maintenance DAG's dry run through the REST API as the user
(``orchestration.lake_view_preview``) and redirects to that DAG run: the one request that is not a GET."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_segments.errors import KafkaSegmentsError
from kafka_segments.redaction import redact_uri

if TYPE_CHECKING:
    from fastapi import FastAPI
    from kafka_segments.views.lake_list import LakeSummary
    from kafka_segments.views.lake_view import LakeView
    from starlette.types import Receive, Scope, Send

    from orchestration.lake_run_files import RunFile
    from orchestration.lake_view_lakes import ConfiguredLake

URL_PREFIX = "/kafka-segments"
"""Where the API server mounts the app (the navigation link opens it)."""
TITLE = "Kafka segments: lake view"


class LakeViewApp:
    """The ASGI app the plugin declares: it builds ``create_app``'s FastAPI app on its first request.

    Every Airflow component imports plugin files (the scheduler, the DAG processor, task processes), and
    importing FastAPI and the API server's security module costs seconds there; only the API server ever
    calls this."""

    def __init__(self) -> None:
        self._app: FastAPI | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None:
            self._app = create_app()
        await self._app(scope, receive, send)


def create_app() -> FastAPI:
    """The app: ``GET /`` is the page (the list of lakes when there are several), ``GET /lakes/<name>`` a
    lake's page (404 for a name not configured); a request without Airflow's session or token gets 401.
    Read-only: only GETs."""
    from airflow.api_fastapi.core_api.security import get_user
    from fastapi import Depends, FastAPI
    from fastapi.responses import HTMLResponse, Response

    app = FastAPI(title=TITLE, docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/", response_class=HTMLResponse, dependencies=[Depends(get_user)])
    def lake_page() -> HTMLResponse:
        return HTMLResponse(render_configured_lakes())

    @app.get("/lakes/{name}", response_class=HTMLResponse, dependencies=[Depends(get_user)])
    def one_lake_page(name: str) -> HTMLResponse:
        page = render_named_lake(name)
        return HTMLResponse(page, status_code=200) if page else HTMLResponse(_unknown(name), status_code=404)

    @app.get("/lakes/{name}/runs/{run_id}/{path:path}", dependencies=[Depends(get_user)])
    def run_file(name: str, run_id: str, path: str) -> Response:
        from orchestration.lake_run_files import SANDBOX

        found = read_named_run_file(name, run_id, path)
        if found is None:
            missing = _problem(f"No file {path!r} of run {run_id!r} in lake {name!r}.")
            return HTMLResponse(missing, status_code=404)
        headers = {"Content-Security-Policy": SANDBOX, "X-Content-Type-Options": "nosniff"}
        return Response(found.body, media_type=found.media_type, headers=headers)

    from orchestration.lake_view_preview import preview_endpoint

    app.post("/lakes/{name}/preview", dependencies=[Depends(get_user)])(
        preview_endpoint(_problem, URL_PREFIX)
    )

    return app


def render_configured_lakes() -> str:
    """The page for the configured lake, the list of lakes when there are several, or a page saying what is
    missing or what went wrong."""
    from kafka_segments.views.lake_view_html import render_lake_list, render_problem

    from orchestration.settings import LAKE_VARIABLE

    try:
        lakes = read_configured_lakes()
    except KafkaSegmentsError as error:
        return render_problem(TITLE, str(error))
    if not lakes:
        return render_problem(TITLE, f"No lake configured: set the Airflow Variable {LAKE_VARIABLE}.")
    if len(lakes) == 1:
        return _lake_page(lakes[0], title=TITLE)
    summaries = [lake_summary(lake) for lake in lakes]
    return render_lake_list(summaries, title=TITLE, href=lake_href)


def render_named_lake(name: str) -> str | None:
    """The page of the configured lake named ``name`` (``None``: no such lake)."""
    from kafka_segments.views.lake_view_html import render_problem

    try:
        lakes = read_configured_lakes()
    except KafkaSegmentsError as error:
        return render_problem(TITLE, str(error))
    found = next((lake for lake in lakes if lake.name == name), None)
    return None if found is None else _lake_page(found, title=f"{TITLE}: {name}", back="../")


def lake_href(name: str) -> str:
    """A lake's page, relative to the list's (``/kafka-segments/``)."""
    from urllib.parse import quote

    return "lakes/" + quote(name, safe="")


def read_named_run_file(name: str, run_id: str, path: str) -> RunFile | None:
    """The file ``path`` of run ``run_id`` in the configured lake ``name`` (``None``: no such lake, or the
    file may not be served or is not there: ``lake_run_files.read_run_file``)."""
    from orchestration.lake_run_files import read_run_file
    from orchestration.settings import lake_store

    try:
        found = next((lake for lake in read_configured_lakes() if lake.name == name), None)
        if found is None:
            return None
        with lake_store(found.lake) as store:
            return read_run_file(store, run_id, path)
    except (KafkaSegmentsError, OSError):
        return None


def _unknown(name: str) -> str:
    return _problem(f"No lake named {name!r} is configured.")


def _problem(text: str) -> str:
    from kafka_segments.views.lake_view_html import render_problem

    return render_problem(TITLE, text)


def _lake_page(lake: ConfiguredLake, *, title: str, back: str | None = None) -> str:
    """The lake's page; its links are relative to it: ``/kafka-segments/`` (``back`` is ``None``) or
    ``/kafka-segments/lakes/<name>``."""
    from urllib.parse import quote

    from kafka_segments.views.lake_view_html import render_html, render_problem

    from orchestration.lake_view_lakes import DEFAULT_LAKE_NAME

    files = ("lakes/" if back is None else "") + quote(lake.name, safe="") + "/runs/"
    airflow = "../" if back is None else "../../"
    try:
        view = lake_view(
            lake.lake, lake.config_path, offsets_source=configured_offsets_source(), links=(files, airflow)
        )
        preview = files.removesuffix("runs/") + "preview" if lake.name == DEFAULT_LAKE_NAME else None
        return render_html([view], title=title, back=back, preview=preview)
    except (KafkaSegmentsError, OSError) as error:
        return render_problem(title, f"{redact_uri(lake.lake)}: {redact_uri(str(error))}")


def read_configured_lakes() -> list[ConfiguredLake]:
    """The lakes of the Variables ``kafka_segments_lake`` (+ ``kafka_segments_config``) and
    ``kafka_segments_lakes``, read now.

    Raises:
        LakeListError: ``kafka_segments_lakes`` is not a JSON object of lakes.
    """
    from airflow.models import Variable

    from orchestration.lake_view_lakes import LAKES_VARIABLE, configured_lakes
    from orchestration.settings import CONFIG_VARIABLE, LAKE_VARIABLE

    return configured_lakes(
        Variable.get(LAKE_VARIABLE, default_var=None),
        Variable.get(CONFIG_VARIABLE, default_var=None),
        Variable.get(LAKES_VARIABLE, default_var=None),
    )


def configured_offsets_source() -> str | None:
    """The Variable ``kafka_segments_offsets_source``, read now: the source the DAG's runs use, so the page
    shows the offsets the next run would use (``None``: unset)."""
    from airflow.models import Variable

    from orchestration.settings import OFFSETS_SOURCE_VARIABLE

    value = Variable.get(OFFSETS_SOURCE_VARIABLE, default_var=None)
    return (value.strip() or None) if isinstance(value, str) else None


def lake_summary(lake: ConfiguredLake) -> LakeSummary:
    """``lake``'s row on the list (its head manifest and run report only)."""
    from kafka_segments.views.lake_list import LakeSummary, summarize_lake

    from orchestration.settings import lake_store

    try:
        with lake_store(lake.lake) as store:
            return summarize_lake(store, name=lake.name)
    except (KafkaSegmentsError, OSError) as error:  # the store cannot even be opened
        return LakeSummary(lake.name, redact_uri(lake.lake), None, None, None, problem=redact_uri(str(error)))


def lake_view(
    lake: str,
    config_path: str | None,
    *,
    offsets_source: str | None = None,
    links: tuple[str, str] | None = None,
) -> LakeView:
    """The view of ``lake`` now, with the configuration at ``config_path`` (Kafka's defaults if ``None``)
    and the offsets a run now with ``offsets_source`` would use (``pipeline.stages.next_run_offsets``: the
    DAG's dry run's rule; a live cluster is not asked, and the page says so); ``links``: the bases of the
    run files' and the Airflow runs' links (``lake_run_files.run_links``), none when ``None``.

    Raises:
        KafkaSegmentsError, OSError: the lake or the configuration cannot be read.
    """
    from kafka_segments.clock import wall_clock_ms
    from kafka_segments.pipeline.compaction.stage import compaction_budget
    from kafka_segments.pipeline.stages import next_run_offsets
    from kafka_segments.views.describe_compaction import CompactionContext
    from kafka_segments.views.lake_view import build_lake_view

    from orchestration.settings import lake_store, load_run_config

    config = load_run_config(config_path)
    now_ms = wall_clock_ms()
    context = CompactionContext(config=config, now_ms=now_ms, budget=compaction_budget(config))
    with lake_store(lake) as store:
        offsets = next_run_offsets(store, now_ms=now_ms, source=offsets_source)
        view = build_lake_view(store, now_ms=now_ms, offsets=offsets, compaction=context)
        if links is None:
            return view
        from dataclasses import replace

        from orchestration.lake_run_files import run_links

        runs = [c.run_id for c in view.history.commits] + [r.run_id for r in view.history.dry_runs]
        return replace(view, run_links=run_links(store, runs, files=links[0], airflow=links[1]))
