"""The Airflow plugin's lake view app (``orchestration.lake_view_app``) over HTTP, without a browser or an
API server: FastAPI's test client on the app the plugin declares, Airflow's login dependency stood in for
(refusing anonymous requests is ``test_lake_view_ui``'s), the Variables from the environment as a
deployment may set them (``AIRFLOW_VAR_*``). On the lakes of issue 38: a lake whose head run report is
tampered with, a lake URI with a secret in it, and consumer group ids meant to break the page."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kafka_segments.lake.layout import run_prefix
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
