"""The list of lakes (``views.lake_list``, ``render_lake_list``) and which lakes the Airflow view shows
(``orchestration.lake_view_lakes``): one row per lake from its head manifest and run report only, the
numbers ``describe --json``'s; a lake that cannot be read gets a row saying why."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest
from kafka_segments.storage import LocalStore
from kafka_segments.views.describe import describe_lake
from kafka_segments.views.lake_list import summarize_lake
from kafka_segments.views.lake_view_html import render_lake_list
from orchestration.lake_view_lakes import ConfiguredLake, LakeListError, configured_lakes

from views.lake_view_helpers import ViewLake, build_view_lake
from views.test_lake_view import CountingStore

pytestmark = pytest.mark.lake


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> ViewLake:
    return build_view_lake(tmp_path_factory.mktemp("lake-list") / "lake")


def test_a_lakes_row_is_its_head_commit_and_describes_live_bytes(lake: ViewLake) -> None:
    store = CountingStore(LocalStore(lake.root))

    row = summarize_lake(store, name="main")

    totals = describe_lake(LocalStore(lake.root)).totals()
    assert row.problem is None
    assert row.commit is not None
    assert (row.commit.version, row.commit.run_id, row.commit.outcome) == (2, lake.head.run_id, "committed")
    assert row.commit.committed_at_ms == lake.head.committed_at_ms
    assert (row.size_bytes, row.partitions) == (totals["size_bytes"], totals["partitions"])
    assert all(key.startswith("_kafka_segments/") for key in store.gets)  # no segment read
    assert len(store.gets) <= 3


def test_a_lake_without_commits_gets_a_row_saying_so(tmp_path: Path) -> None:
    row = summarize_lake(LocalStore(tmp_path / "empty"), name="empty")

    assert row.commit is None
    assert row.problem


class _Rows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, dict[str, str]] = {}
        self.links: dict[str, str] = {}
        self._lake: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and found.get("data-lake"):
            self._lake = found["data-lake"]
            self.rows[str(self._lake)] = {}
        elif self._lake and tag == "td" and found.get("data-key"):
            self.rows[self._lake][str(found["data-key"])] = str(found.get("data-value"))
        elif self._lake and tag == "a":
            self.links[self._lake] = str(found.get("href"))


def test_the_list_page_links_each_lake_and_shows_its_numbers(lake: ViewLake, tmp_path: Path) -> None:
    rows = [
        summarize_lake(LocalStore(lake.root), name="main"),
        summarize_lake(LocalStore(tmp_path / "none"), name="a <b>"),
    ]

    page = render_lake_list(rows, title="lakes", href=lambda name: f"lakes/{name}")

    parsed = _Rows()
    parsed.feed(page)
    assert parsed.rows["main"] == {"version": "2", "size_bytes": str(rows[0].size_bytes)}
    assert parsed.links == {"main": "lakes/main", "a <b>": "lakes/a <b>"}
    assert "a &lt;b&gt;" in page
    assert 'class="bad"' in page


def test_the_configured_lakes_are_the_dags_lake_then_the_others() -> None:
    more = '{"eu": "s3://eu/lake", "us": {"lake": "s3://us/lake", "config": "/etc/us.yaml"}, "again": "/l"}'

    assert configured_lakes(" /l ", "/etc/k.yaml", more) == [
        ConfiguredLake("default", "/l", "/etc/k.yaml"),
        ConfiguredLake("eu", "s3://eu/lake"),
        ConfiguredLake("us", "s3://us/lake", "/etc/us.yaml"),
    ]
    assert configured_lakes("/l", None, None) == [ConfiguredLake("default", "/l")]
    assert configured_lakes(None, None, "  ") == []
    assert configured_lakes("", None, '{"eu": "s3://eu/lake"}') == [ConfiguredLake("eu", "s3://eu/lake")]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[1]", "must be a JSON object"),
        ("{", "not JSON"),
        ('{"eu": 3}', "lake 'eu': must be a URI"),
        ('{"eu": {"lake": "s3://b/p", "config": 1}}', "config must be a path"),
        ("[" * 100_000, "not JSON: nested deeper than 100 levels"),  # was a RecursionError: HTTP 500
    ],
)
def test_a_lake_list_that_is_not_one_says_where(text: str, why: str) -> None:
    with pytest.raises(LakeListError, match=why) as raised:
        configured_lakes("/l", None, text)
    assert raised.value.location.startswith("Airflow Variable kafka_segments_lakes")
