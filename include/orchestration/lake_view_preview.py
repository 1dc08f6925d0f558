"""The lake view's **Preview now** (docs/airflow.md, "The lake view"): a dry run of the maintenance DAG,
triggered through Airflow's own REST API as the logged-in user, so Airflow decides whether that user may
trigger it (a VIEWER may not) and the run is the one the trigger form's defaults start (``dry_run`` on).

CSRF-safe: the button posts a form, and the request is refused unless its ``Origin`` (else ``Referer``) is
the page's own host, so no other site can make a logged-in browser trigger a run. Only the API server
imports this module (``lake_view_app.create_app``): the endpoint's ``Request`` is resolved here."""

from __future__ import annotations

import json
import urllib.error
from collections.abc import Callable, Mapping
from urllib.parse import quote, urlsplit

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from kafka_segments.errors import KafkaSegmentsError

MAINTENANCE_DAG_ID = "kafka_segments_maintenance"
PREVIEW_CONF = {"dry_run": True}


class PreviewError(KafkaSegmentsError):
    """The preview could not be triggered: what Airflow answered (``status``: the HTTP status to show)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


def preview_endpoint(problem: Callable[[str], str], url_prefix: str) -> Callable[[str, Request], Response]:
    """``POST /lakes/<name>/preview``: 404 for a lake other than the DAGs', 403 from another origin, Airflow's
    refusal as it answered, else a 303 to the new DAG run's page (``problem`` renders a one-line page)."""

    def preview(name: str, request: Request) -> Response:
        from orchestration.lake_view_lakes import DEFAULT_LAKE_NAME

        if name != DEFAULT_LAKE_NAME:
            return HTMLResponse(problem(f"Only the DAGs' lake ({DEFAULT_LAKE_NAME}) has a dry run."), 404)
        headers = request.headers
        if not same_origin(headers.get("host"), headers.get("origin"), headers.get("referer")):
            return HTMLResponse(problem("Refused: start the preview from the lake view's page."), 403)
        ui_root = str(request.base_url).rstrip("/").removesuffix(url_prefix)
        try:
            run_id = trigger_preview(ui_root, _token(headers.get("authorization"), request.cookies))
        except PreviewError as error:
            return HTMLResponse(problem(str(error)), status_code=error.status)
        return RedirectResponse(f"{ui_root}/{dag_run_path(run_id)}", status_code=303)

    return preview


def _token(authorization: str | None, cookies: Mapping[str, str]) -> str | None:
    """The user's token: the request's bearer token, else the UI's session cookie."""
    from airflow.api_fastapi.auth.managers.base_auth_manager import COOKIE_NAME_JWT_TOKEN

    scheme, _, value = (authorization or "").partition(" ")
    return value if scheme.lower() == "bearer" and value else cookies.get(COOKIE_NAME_JWT_TOKEN)


def same_origin(host: str | None, origin: str | None, referer: str | None) -> bool:
    """Whether the request comes from a page of ``host`` (its ``Origin``, else its ``Referer``)."""
    source = origin if origin and origin != "null" else referer
    return bool(host) and bool(source) and urlsplit(source).netloc == host


def trigger_preview(api_root: str, token: str | None) -> str:
    """Trigger a dry run of the maintenance DAG through the REST API at ``api_root`` as the user of
    ``token``; return its DAG run id.

    Raises:
        PreviewError: no token, or Airflow refused or failed (its status and detail).
    """
    from orchestration.rest_api import api_request

    if not token:
        raise PreviewError("no Airflow session: log in again", status=401)
    path = f"/api/v2/dags/{MAINTENANCE_DAG_ID}/dagRuns"
    body = {"logical_date": None, "conf": PREVIEW_CONF}
    try:
        run = api_request(api_root, path, method="POST", body=body, token=token)
    except urllib.error.HTTPError as error:
        raise PreviewError(f"Airflow refused the dry run: {_detail(error)}", status=error.code) from None
    except urllib.error.URLError as error:
        raise PreviewError(f"Airflow's REST API is not reachable: {error.reason}", status=502) from None
    return str(run["dag_run_id"])


def dag_run_path(run_id: str) -> str:
    """The DAG run's page in Airflow's UI, relative to the UI's root."""
    return f"dags/{MAINTENANCE_DAG_ID}/runs/{quote(run_id, safe='')}"


def _detail(error: urllib.error.HTTPError) -> str:
    try:
        detail = json.loads(error.read() or b"{}").get("detail")
    except (ValueError, AttributeError):
        detail = None
    return f"{error.code} {detail if isinstance(detail, str) else error.reason}"
