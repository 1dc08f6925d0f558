"""The Airflow plugin's lake view app (``orchestration.lake_view_app``) over HTTP, without a browser or an
API server: FastAPI's test client on the app the plugin declares, Airflow's login dependency stood in for
(refusing anonymous requests is ``test_lake_view_ui``'s), the Variables from the environment as a
deployment may set them (``AIRFLOW_VAR_*``). On the lakes of issue 38: a lake whose head run report is
tampered with, a lake URI with a secret in it, and consumer group ids meant to break the page; and issue 37's
run files (report, validation page, Data Docs) served and linked, never a key outside a run's folder."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kafka_segments.lake.layout import run_prefix
from kafka_segments.lake.run_folder import register_run, write_run_bytes
from kafka_segments.lake.runs import RunRecord, RunRequest
from kafka_segments.offsets.snapshot_store import pin_snapshot, store_snapshot
from kafka_segments.state import CommittedOffset, GroupOffsets, OffsetSnapshot
from kafka_segments.storage import LocalStore
from views.lake_view_helpers import build_view_lake

pytestmark = pytest.mark.airflow

SECRET = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"
SECRET_URI = f"s3://AKIAIOSFODNN7EXAMPLE:{SECRET}@bucket/prefix"
PROBLEM = "field &#x27;compaction.partitions[0].segments_replaced&#x27;: expected a list of strings, found 5"
HOSTILE_GROUPS = (
    '<script>alert("g")</script>',
    "g" * 100_000,
    "a\x00b\x1b[31mc\u202ed\u2028e",
    "グループ-😀",
)


AIRFLOW_RUN = "af-manual-2026-12-07T03-00-00-0123456789ab"


@dataclass(frozen=True, slots=True)
class Lakes:
    default: Path
    tampered: Path


@pytest.fixture(scope="module")
def lakes(tmp_path_factory: pytest.TempPathFactory) -> Lakes:
    """``default``: the view's lake with a snapshot of hostile group ids pinned after its own; ``tampered``:
    a copy whose head run report has ``segments_replaced: 5`` in a cleaned partition (HTTP 500 for the list of
    lakes and the lake's page before issue 38)."""
    home = tmp_path_factory.mktemp("lake-view-app")
    lake = build_view_lake(home / "default")
    store = LocalStore(lake.root)
    now_ms = lake.now_ms + 1
    groups = tuple(
        GroupOffsets(group_id, "Stable", "consumer", None, ("payments",),
                     (CommittedOffset("payments", 0, 6, now_ms),))
        for group_id in HOSTILE_GROUPS
    )  # fmt: skip
    stored = store_snapshot(store, OffsetSnapshot(taken_at_ms=now_ms, source="file", groups=groups))
    pin_snapshot(store, now_ms=now_ms, snapshot_id=stored.snapshot_id, source="file")
    write_run_bytes(store, lake.head.run_id, "validation.html", b"<html>validation page</html>")
    write_run_bytes(store, lake.head.run_id, "data-docs/index.html", b"<html>data docs</html>")
    write_run_bytes(store, lake.head.run_id, "data-docs/static/styles/site.css", b"body {}")
    labels = {"airflow_dag_id": "kafka_segments_maintenance", "airflow_run_id": "manual__2026-12-07T03:00:00"}
    register_run(store, RunRecord(AIRFLOW_RUN, "run", 2, now_ms, now_ms, request=RunRequest(labels=labels)))
    tampered = home / "tampered"
    shutil.copytree(lake.root, tampered)
    key = run_prefix(lake.head.run_id) + "report.json"
    report = json.loads(LocalStore(tampered).get(key))
    report["compaction"]["totals"]["cleaned"] = 1
    report["compaction"]["partitions"][0]["segments_replaced"] = 5
    LocalStore(tampered).put(key, json.dumps(report).encode())
    return Lakes(lake.root, tampered)


@pytest.fixture
def client(lakes: Lakes, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from airflow.api_fastapi.core_api.security import get_user
    from fastapi.testclient import TestClient
    from orchestration.lake_view_app import create_app

    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_SEGMENTS_LAKE", str(lakes.default))
    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_SEGMENTS_CONFIG", "")
    others = {"tampered": str(lakes.tampered), "secret": SECRET_URI}
    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_SEGMENTS_LAKES", json.dumps(others))
    app = create_app()
    app.dependency_overrides[get_user] = lambda: None
    with TestClient(app) as test_client:
        yield test_client


def row_of(page: str, name: str) -> str:
    start = page.index(f'<tr data-lake="{name}"')
    return page[start : page.index("</tr>", start)]


def test_the_list_shows_a_tampered_lake_as_bad_and_renders_the_others(client: Any) -> None:
    response = client.get("/")

    assert response.status_code == 200
    page = response.text
    assert 'data-key="version" data-value="2"' in row_of(page, "default")
    tampered = row_of(page, "tampered")
    assert "data-problem" in tampered
    assert f"report.json: {PROBLEM}" in tampered
    assert "data-problem" in row_of(page, "secret")


def test_no_page_shows_a_lake_uris_secret(client: Any) -> None:
    pages = [client.get(path) for path in ("/", "/lakes/secret", "/lakes/tampered", "/lakes/default")]

    assert [page.status_code for page in pages] == [200] * 4
    for page in pages:
        assert SECRET not in page.text
    assert "s3://AKIAIOSFODNN7EXAMPLE:***@bucket/prefix" in row_of(pages[0].text, "secret")
    assert "s3://AKIAIOSFODNN7EXAMPLE:***@bucket/prefix" in pages[1].text


def test_a_tampered_lakes_page_says_what_is_wrong(client: Any) -> None:
    response = client.get("/lakes/tampered")

    assert response.status_code == 200
    assert PROBLEM in response.text


def test_hostile_group_ids_are_escaped_and_bounded_on_the_page(client: Any) -> None:
    response = client.get("/lakes/default")

    assert response.status_code == 200
    page = response.text
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&quot;g&quot;)&lt;/script&gt;" in page
    assert "g" * 201 not in page
    assert "… (100000 characters)" in page
    assert len(page) < 100_000
    assert not any(hidden in page for hidden in ("\x00", "\x1b", "\u202e", "\u2028"))
    assert "a\\u0000b\\u001b[31mc\\u202ed\\u2028e" in page
    assert "グループ-😀" in page


def test_a_commit_links_to_its_run_files_which_are_served_sandboxed(client: Any, lakes: Lakes) -> None:
    run_id = page_run_id(lakes)
    page = client.get("/lakes/default").text
    for label, name in (
        ("report", "report.json"),
        ("validation", "validation.html"),
        ("Data Docs", "data-docs/index.html"),
    ):
        assert f'<a href="default/runs/{run_id}/{name}">{label}</a>' in page

    report = client.get(f"/lakes/default/runs/{run_id}/report.json")
    assert report.status_code == 200
    assert report.json()["run_id"] == run_id
    assert report.headers["content-security-policy"].startswith("sandbox")
    assert report.headers["x-content-type-options"] == "nosniff"
    docs = client.get(f"/lakes/default/runs/{run_id}/data-docs/static/styles/site.css")
    assert (docs.status_code, docs.headers["content-type"], docs.text) == (
        200,
        "text/css; charset=utf-8",
        "body {}",
    )
    page_response = client.get(f"/lakes/default/runs/{run_id}/validation.html")
    assert page_response.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize(
    "path",
    [
        "run.json",
        "offsets.json",
        "data-docs/../run.json",
        "data-docs/%2e%2e/run.json",
        "data-docs/",
        "data-docs//index.html",
        "data-docs/.hidden",
        "..%2f..%2fmanifests%2f00000000000000000001.json",
        "data-docs/missing.html",
    ],
)
def test_only_the_run_files_inside_a_run_folder_are_served(client: Any, lakes: Lakes, path: str) -> None:
    run_id = page_run_id(lakes)
    assert client.get(f"/lakes/default/runs/{run_id}/{path}").status_code == 404
    assert client.get(f"/lakes/default/runs/..%2f{run_id}/report.json").status_code == 404
    assert client.get(f"/lakes/nowhere/runs/{run_id}/report.json").status_code == 404


def test_an_airflow_run_links_to_its_dag_run(lakes: Lakes) -> None:
    from orchestration.lake_run_files import run_links

    links = run_links(LocalStore(lakes.default), [AIRFLOW_RUN, page_run_id(lakes)], files="f/", airflow="../")
    assert links[AIRFLOW_RUN] == (
        ("Airflow run", "../dags/kafka_segments_maintenance/runs/manual__2026-12-07T03%3A00%3A00"),
    )
    assert [label for label, _ in links[page_run_id(lakes)]] == ["report", "validation", "Data Docs"]


def test_the_page_names_the_next_runs_snapshot_and_does_not_ask_a_live_cluster(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_SEGMENTS_OFFSETS_SOURCE", "kafka://broker.invalid:9092")
    page = client.get("/lakes/default").text

    assert "a view does not ask the live cluster kafka://broker.invalid:9092" in page
    assert "(pinned-earlier, source file)" in page
    assert " old); a view does not ask" in page


def page_run_id(lakes: Lakes) -> str:
    from kafka_segments.lake.history import read_head

    head = read_head(LocalStore(lakes.default))
    assert head is not None
    return head.run_id


def test_the_served_names_are_the_run_folders() -> None:
    from kafka_segments.lake.run_folder import REPORT, VALIDATION
    from orchestration.lake_run_files import DATA_DOCS, SERVED
    from segment_quality import docs, page

    assert (SERVED, DATA_DOCS) == ((REPORT, page.PAGE, VALIDATION), docs.DATA_DOCS)


def test_preview_now_is_on_the_dags_lake_only_and_refused_from_another_origin(client: Any) -> None:
    assert '<form method="post" action="default/preview">' in client.get("/lakes/default").text
    assert "preview" not in client.get("/lakes/tampered").text
    for origin in ("https://elsewhere.example", "null", None):
        headers = {} if origin is None else {"Origin": origin}
        assert client.post("/lakes/default/preview", headers=headers).status_code == 403
    assert client.post("/lakes/tampered/preview", headers={"Origin": "http://testserver"}).status_code == 404
