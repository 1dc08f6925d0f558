"""Airflow's REST API as the demo, the standalone and the tests use it: one JSON request
(``api_request``), a SimpleAuthManager token (``api_token``), the API server's health (``api_healthy``)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def api_request(
    base_url: str, path: str, *, method: str = "GET", body: object = None, token: str | None = None
) -> Any:
    """One JSON request to Airflow's REST API, as the user of ``token`` (from ``api_token``), or with no
    token (enough under ``SIMPLE_AUTH_MANAGER_ALL_ADMINS``).

    Raises:
        urllib.error.URLError: not reachable; ``HTTPError`` for an error status.
    """
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        f"{base_url.rstrip('/')}{path}", data=data, method=method, headers=headers
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        payload = response.read()
    return json.loads(payload) if payload else None


def api_token(base_url: str, username: str, password: str) -> str:
    """A SimpleAuthManager access token for the REST API (``POST /auth/token``).

    Raises:
        urllib.error.URLError: not reachable; ``HTTPError`` for wrong credentials.
    """
    document = api_request(
        base_url, "/auth/token", method="POST", body={"username": username, "password": password}
    )
    return str(document["access_token"])


def api_healthy(base_url: str) -> bool:
    """Whether the API server answers and reports its metadatabase healthy."""
    try:
        health = api_request(base_url, "/api/v2/monitor/health")
    except urllib.error.URLError:
        return False
    return bool(health) and health.get("metadatabase", {}).get("status") == "healthy"
