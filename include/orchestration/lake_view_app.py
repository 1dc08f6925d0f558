"""The lake view in Airflow's UI (docs/lake-view.md): a FastAPI app that Airflow's own API server serves
(``plugins/kafka_segments_plugin.py`` declares it), behind Airflow's login, read-only.

It renders ``kafka_segments.views.lake_view``'s page for the lake the DAGs maintain (the Variables
``kafka_segments_lake`` and ``kafka_segments_config``, with the ``aws_default`` connection: docs/airflow.md,
"Settings") at the time of the request. A lake that cannot be read shows its error on the page."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_segments.errors import KafkaSegmentsError

if TYPE_CHECKING:
    from fastapi import FastAPI
    from kafka_segments.views.lake_view import LakeView
    from starlette.types import Receive, Scope, Send

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
    """The app: ``GET /`` is the page; a request without Airflow's session or token gets 401."""
    from airflow.api_fastapi.core_api.security import get_user
    from fastapi import Depends, FastAPI
    from fastapi.responses import HTMLResponse

    app = FastAPI(title=TITLE, docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/", response_class=HTMLResponse, dependencies=[Depends(get_user)])
    def lake_page() -> HTMLResponse:
        return HTMLResponse(render_configured_lakes())

    return app


def render_configured_lakes() -> str:
    """The page for the configured lake, or one saying what is missing or what went wrong."""
    from airflow.models import Variable
    from kafka_segments.views.lake_view_html import render_html, render_problem

    from orchestration.settings import CONFIG_VARIABLE, LAKE_VARIABLE

    lake = (Variable.get(LAKE_VARIABLE, default_var=None) or "").strip()
    if not lake:
        return render_problem(TITLE, f"No lake configured: set the Airflow Variable {LAKE_VARIABLE}.")
    config_path = (Variable.get(CONFIG_VARIABLE, default_var=None) or "").strip() or None
    try:
        return render_html([lake_view(lake, config_path)], title=TITLE)
    except (KafkaSegmentsError, OSError) as error:
        return render_problem(TITLE, f"{lake}: {error}")


def lake_view(lake: str, config_path: str | None) -> LakeView:
    """The view of ``lake`` now, with the configuration at ``config_path`` (Kafka's defaults if ``None``).

    Raises:
        KafkaSegmentsError, OSError: the lake or the configuration cannot be read.
    """
    from kafka_segments.lake.runs import wall_clock_ms
    from kafka_segments.pipeline.compaction.stage import compaction_budget
    from kafka_segments.views.describe_compaction import CompactionContext
    from kafka_segments.views.lake_view import build_lake_view

    from orchestration.settings import lake_store, load_run_config

    config = load_run_config(config_path)
    now_ms = wall_clock_ms()
    context = CompactionContext(config=config, now_ms=now_ms, budget=compaction_budget(config))
    with lake_store(lake) as store:
        return build_lake_view(store, now_ms=now_ms, compaction=context)
