"""Triggers through Airflow's REST API as the UI sends them, by users of SimpleAuthManager with an ADMIN, a
USER and a VIEWER account (``USERS``), and what the delete-records DAG's entitlement check must do for them:
the SQLite stack of ``test_rest_api_safety.py`` and the PostgreSQL stack of ``test_postgres_stack.py`` make
the same claims through ``assert_only_allowed_users_commit_deletions`` and
``assert_an_admin_commits_deletions``."""

from __future__ import annotations

import json
import urllib.error
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from kafka_segments.lake.history import head_version
from kafka_segments.storage import ObjectStore
from orchestration.demo_stack import log_tail, wait_until
from orchestration.rest_api import api_request, api_token

DELETE_RECORDS = "kafka_segments_delete_records"
PASSWORDS = {"admin": "admin-secret", "alice": "alice-secret", "victor": "victor-secret"}
USERS = "admin:ADMIN,alice:USER,victor:VIEWER"
RUN_TIMEOUT_S = 420


@dataclass(frozen=True, slots=True)
class Stack:
    api: str
    log: Path
    lake: ObjectStore
    tokens: dict[str, str]

    def request(self, user: str, path: str, **kwargs: Any) -> Any:
        return api_request(self.api, path, token=self.tokens[user], **kwargs)


def users_settings(home: Path) -> dict[str, str]:
    """Airflow settings for the three accounts (their passwords in a file written in ``home``)."""
    passwords = home / "passwords.json"
    passwords.write_text(json.dumps(PASSWORDS))
    return {
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": USERS,
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
    }


def user_tokens(api: str) -> dict[str, str]:
    """A REST API token of each account."""
    return {user: api_token(api, user, password) for user, password in PASSWORDS.items()}


def form_defaults(stack: Stack, dag_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The trigger form's Params as the UI reads them (``/details``), and the conf it sends unchanged."""
    params: dict[str, Any] = stack.request("admin", f"/api/v2/dags/{dag_id}/details")["params"]
    return params, {name: param["value"] for name, param in params.items()}


def trigger(
    stack: Stack, user: str, dag_id: str, conf: dict[str, Any], *, logical_date: str | None = None
) -> str:
    """A run triggered as ``user`` the way the UI does (the form's Logical Date, empty by default); returns
    its run id."""
    body = {"logical_date": logical_date, "conf": conf}
    run = stack.request(user, f"/api/v2/dags/{dag_id}/dagRuns", method="POST", body=body)
    return str(run["dag_run_id"])


def wait_for_run(stack: Stack, dag_id: str, run_id: str) -> dict[str, Any]:
    path = f"/api/v2/dags/{dag_id}/dagRuns/{quote(run_id, safe='')}"
    found: dict[str, Any] = {}

    def finished() -> bool:
        found.update(stack.request("admin", path))
        return found["state"] in {"success", "failed"}

    try:
        wait_until(f"run {run_id}", finished, timeout_s=RUN_TIMEOUT_S, interval_s=2)
    except Exception:
        pytest.fail(f"run {run_id} did not finish\n{log_tail(stack.log)}")
    return found


def xcom(stack: Stack, dag_id: str, run_id: str, task_id: str) -> dict[str, Any]:
    entry = stack.request(
        "admin",
        f"/api/v2/dags/{dag_id}/dagRuns/{quote(run_id, safe='')}/taskInstances/{task_id}"
        "/xcomEntries/return_value?deserialize=true",
    )
    value = entry["value"]
    parsed: dict[str, Any] = json.loads(value) if isinstance(value, str) else value
    return parsed


def task_log(stack: Stack, dag_id: str, run_id: str, task_id: str) -> str:
    document = stack.request(
        "admin",
        f"/api/v2/dags/{dag_id}/dagRuns/{quote(run_id, safe='')}/taskInstances/{task_id}/logs/1"
        "?full_content=true",
    )
    return json.dumps(document)


def assert_only_allowed_users_commit_deletions(stack: Stack, request: dict[str, Any]) -> None:
    """A USER's committing delete-records run (``request``) fails, naming the Variable, and changes nothing;
    the same USER's dry run works; a VIEWER cannot trigger at all."""
    params, defaults = form_defaults(stack, DELETE_RECORDS)
    assert params["dry_run"]["schema"]["type"] == "boolean"
    assert params["dry_run"]["value"] is True
    assert stack.request("admin", f"/api/v2/dags/{DELETE_RECORDS}")["is_paused"] is False
    before = head_version(stack.lake)

    refused = trigger(stack, "alice", DELETE_RECORDS, {**defaults, "request": request, "dry_run": False})
    assert wait_for_run(stack, DELETE_RECORDS, refused)["state"] == "failed"
    message = task_log(stack, DELETE_RECORDS, refused, "delete_records")
    assert "kafka_segments_delete_records_allowed" in message
    assert "'alice' (role USER) may not commit" in message
    assert head_version(stack.lake) == before

    preview = trigger(stack, "alice", DELETE_RECORDS, {**defaults, "request": request})
    assert wait_for_run(stack, DELETE_RECORDS, preview)["state"] == "success"
    report = xcom(stack, DELETE_RECORDS, preview, "delete_records")
    assert report["outcome"] == "dry run"
    assert report["labels"]["airflow_triggered_by"] == "alice"
    assert head_version(stack.lake) == before

    with pytest.raises(urllib.error.HTTPError) as forbidden:
        trigger(stack, "victor", DELETE_RECORDS, {**defaults, "request": request})
    forbidden.value.close()
    assert forbidden.value.code == 403


def assert_an_admin_commits_deletions(stack: Stack, request: dict[str, Any]) -> None:
    _params, defaults = form_defaults(stack, DELETE_RECORDS)
    before = head_version(stack.lake)

    run_id = trigger(stack, "admin", DELETE_RECORDS, {**defaults, "request": request, "dry_run": False})

    assert wait_for_run(stack, DELETE_RECORDS, run_id)["state"] == "success", log_tail(stack.log)
    report = xcom(stack, DELETE_RECORDS, run_id, "delete_records")
    assert report["outcome"] == "committed"
    assert report["labels"]["airflow_triggered_by"] == "admin"
    assert report["committed_version"] == head_version(stack.lake) == (before or 0) + 1
