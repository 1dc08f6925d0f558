"""The lake view in Airflow's UI, in a real browser (headless Chromium driven by Playwright): a VIEWER logs
in to a test Airflow (SQLite, SimpleAuthManager), opens the view from the navigation (Browse), and the
numbers shown — log start / end offsets, live bytes, dirty ratio, a history point — are ``describe --json``'s
for the same lake and time. A request without Airflow's login is refused. With a second lake configured
(the Variable ``kafka_segments_lakes``), the view lists both lakes with ``describe --json``'s version and live
bytes, and each name opens that lake's page.

Only the API server runs (the plugin is served by it; no DAG runs here), on a copy of the session's migrated
database; an ADMIN account sets the Variable through the REST API. The page is screenshotted to the
test's folder, or to ``$KAFKA_SEGMENTS_LAKE_VIEW_SCREENSHOT`` (how docs/images/lake-view.png is made); the
list of lakes to ``$KAFKA_SEGMENTS_LAKE_LIST_SCREENSHOT`` (docs/images/lake-view-lakes.png)."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_harness import cli
from kafka_segments.storage import LocalStore
from kit import FakeClock
from lake.read_helpers import rich_lake
from migrated_db import install_migrated_database
from orchestration.demo_stack import (
    Component,
    StackSettings,
    airflow_environment,
    free_port,
    log_tail,
    wait_until,
)
from orchestration.lake_view_app import URL_PREFIX
from orchestration.lake_view_lakes import LAKES_VARIABLE
from orchestration.rest_api import api_healthy, api_request, api_token
from views.lake_view_helpers import ViewLake, build_view_lake, expected_numbers, page_numbers

pytestmark = pytest.mark.airflow

ROOT = Path(__file__).resolve().parents[2]
VIEWER, PASSWORD = "victor", "victor-secret"
ADMIN, ADMIN_PASSWORD = "admin", "admin-secret"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",  # without these Chromium hangs on a closed network
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
NAV_LINK = "Kafka segments lake"


def chromium() -> str:
    """Debian's Chromium (``scripts/setup-browser``), or ``$KAFKA_SEGMENTS_CHROMIUM``; skips without one."""
    found = os.environ.get("KAFKA_SEGMENTS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(found).is_file():
        pytest.skip(f"no Chromium at {found}: run scripts/setup-browser or set KAFKA_SEGMENTS_CHROMIUM")
    return found


@dataclass(frozen=True, slots=True)
class Stack:
    api: str
    lake: ViewLake
    log: Path
    admin_token: str


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, migrated_database: Path) -> Iterator[Stack]:
    """The view's test lake; Airflow's API server (with the plugins folder), a VIEWER and an ADMIN account."""
    home = tmp_path_factory.mktemp("lake-view-ui")
    lake = build_view_lake(home / "lake")
    passwords = home / "passwords.json"
    passwords.write_text(json.dumps({VIEWER: PASSWORD, ADMIN: ADMIN_PASSWORD}))
    port = free_port()
    settings = StackSettings(
        project=ROOT,
        airflow_home=home / "airflow-home",
        lake_uri=str(lake.root),
        s3_endpoint=None,
        config=lake.config,
        offsets_source=None,
        api_port=port,
        extra={
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{VIEWER}:VIEWER,{ADMIN}:ADMIN",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
        },
    )
    env = airflow_environment(settings)
    log = home / "airflow.log"
    install_migrated_database(migrated_database, settings.airflow_home)
    api_server = Component("api-server", ["airflow", "api-server", "--port", str(port)], env=env, log=log)
    try:
        api = f"http://127.0.0.1:{port}"
        healthy = functools.partial(api_healthy, api)
        wait_until("api-server health", healthy, timeout_s=180, interval_s=0.25, alive=api_server.running)
        yield Stack(api, lake, log, api_token(api, ADMIN, ADMIN_PASSWORD))
    finally:
        api_server.stop(timeout_s=0)  # a throwaway stack: killed, not waited for


def test_importing_the_plugin_is_cheap() -> None:
    """Every Airflow component imports plugin files: the plugin's app is built on its first request, so
    neither FastAPI nor the API server's security module (seconds of imports) loads with it."""
    probe = (
        "import sys; import kafka_segments_plugin as p; "
        "assert p.KafkaSegmentsPlugin.fastapi_apps[0]['url_prefix'] == '/kafka-segments'; "
        "print(sorted(m for m in ('fastapi', 'airflow.api_fastapi.core_api.security') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT / "plugins",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"  # after Airflow's own log lines


def test_an_anonymous_request_is_refused(stack: Stack) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{stack.api}{URL_PREFIX}/", timeout=30)
    refused.value.close()
    assert refused.value.code == 401


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the file's browser tests (a launch is seconds of CPU); each test opens a
    page of its own, in a context of its own (no cookies of another test's login)."""
    from playwright.sync_api import sync_playwright

    executable = chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def test_a_viewer_sees_describes_numbers_from_the_navigation(
    stack: Stack, browser: Any, tmp_path: Path
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1700})
    try:
        view = open_view(page, stack)
        view.locator("tr[data-topic]").first.wait_for(timeout=60_000)
        html = view.locator("html").evaluate("element => element.outerHTML")
        shown = view.locator('tr[data-topic="orders"][data-partition="1"] td[data-key="dirty_ratio"]')
        dirty_text = shown.inner_text()
        page.screenshot(path=os.environ.get("KAFKA_SEGMENTS_LAKE_VIEW_SCREENSHOT", tmp_path / "view.png"))
    finally:
        page.context.close()
    numbers = page_numbers(html)
    now_ms = int(html.split('data-now-ms="', 1)[1].split('"', 1)[0])
    document = describe_json(stack, now_ms)
    expected = expected_numbers(document)
    assert {tp: {k: row[k] for k in expected[tp]} for tp, row in numbers.partitions.items()} == expected
    assert dirty_text == f"{document_partition(document, 'orders', 1)['dirty_ratio']:.4f}"
    payments = [p for p in document["partitions"] if p["topic"] == "payments"]
    head_point = (sum(p["size_bytes"] for p in payments), sum(p["log_start_offset"] for p in payments))
    assert numbers.points["payments"][document["version"]] == head_point, log_tail(stack.log)


def test_a_viewer_sees_every_configured_lake_and_opens_each(
    stack: Stack, browser: Any, tmp_path: Path
) -> None:
    """Two lakes: the DAGs' (``kafka_segments_lake``) and one more in ``kafka_segments_lakes``. The list
    shows each with ``describe --json``'s version and live bytes; a lake's name opens its page."""
    second = tmp_path / "second-lake"
    rich_lake(LocalStore(second), FakeClock())
    lakes = json.dumps({"second": str(second)})
    variables = "/api/v2/variables"
    body = {"key": LAKES_VARIABLE, "value": lakes}
    api_request(stack.api, variables, method="POST", body=body, token=stack.admin_token)
    try:
        page = browser.new_page(viewport={"width": 1400, "height": 500})
        try:
            view = open_view(page, stack)
            view.locator("tr[data-lake]").nth(1).wait_for(timeout=60_000)
            rows = {
                name: {
                    key: view.locator(f'tr[data-lake="{name}"] td[data-key="{key}"]').get_attribute(
                        "data-value"
                    )
                    for key in ("version", "size_bytes")
                }
                for name in ("default", "second")
            }
            shot = os.environ.get("KAFKA_SEGMENTS_LAKE_LIST_SCREENSHOT", tmp_path / "lakes.png")
            page.screenshot(path=shot)
            view.get_by_role("link", name="second").click()
            view.locator("tr[data-topic]").first.wait_for(timeout=60_000)
            opened = view.locator("section.lake").get_attribute("data-lake")
        finally:
            page.context.close()
    finally:
        api_request(stack.api, f"{variables}/{LAKES_VARIABLE}", method="DELETE", token=stack.admin_token)
    expected = {
        name: {
            "version": str(doc["version"]),
            "size_bytes": str(sum(p["size_bytes"] for p in doc["partitions"])),
        }
        for name, doc in (
            ("default", describe_lake_json(stack.lake.root)),
            ("second", describe_lake_json(second)),
        )
    }
    assert rows == expected, log_tail(stack.log)
    assert opened == str(second)


def open_view(page: Any, stack: Stack) -> Any:
    """Log the viewer in and open the view from the navigation (Browse); the view's frame."""
    page.goto(stack.api + "/")
    page.fill("input[name=username]", VIEWER)
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: "/auth/login" not in url)
    page.get_by_role("button", name="Browse").click()
    page.get_by_role("menuitem", name=NAV_LINK).click()
    return page.frame_locator("iframe").first


def describe_lake_json(lake: Path, *options: str) -> dict[str, Any]:
    result = cli("describe", "--lake", str(lake), *options, "--json")
    result.check_returncode()
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def describe_json(stack: Stack, now_ms: int) -> dict[str, Any]:
    return describe_lake_json(stack.lake.root, "--config", str(stack.lake.config), "--now", str(now_ms))


def document_partition(document: dict[str, Any], topic: str, partition: int) -> dict[str, Any]:
    found: dict[str, Any] = next(
        p for p in document["partitions"] if (p["topic"], p["partition"]) == (topic, partition)
    )
    return found
