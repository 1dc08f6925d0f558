"""The lake view's details (issue 37, point 8): ``max.compaction.lag.ms`` at Kafka's default shows one way,
``empty-log`` says what Kafka means by it, each chart labels its scales' minimum and maximum (and draws a
series that never changes mid-height, labelled once), and dry runs, which commit no version, are marked
on the version they built on."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kafka_segments.config import load_config
from kafka_segments.config.catalogue import LONG_MAX
from kafka_segments.lake.layout import run_prefix
from kafka_segments.pipeline.compaction.stage import compaction_budget
from kafka_segments.pipeline.stages import next_run_offsets
from kafka_segments.storage import LocalStore
from kafka_segments.views.describe_compaction import CompactionContext
from kafka_segments.views.lake_view import LakeView, build_lake_view
from kafka_segments.views.lake_view_history import DryRun, TopicPoint, history_of, summary_of
from kafka_segments.views.lake_view_html import render_html
from kafka_segments.views.lake_view_svg import BOTTOM, TOP, topic_chart
from kafka_segments.views.run_report import report_from_document

from views.lake_view_helpers import ViewLake, build_view_lake

pytestmark = pytest.mark.lake

NO_LAG_CONFIG = """\
topics:
  orders:
    cleanup.policy: compact
"""


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> ViewLake:
    return build_view_lake(tmp_path_factory.mktemp("lake-view-details") / "lake")


def view_at(lake: ViewLake, config: Path) -> LakeView:
    loaded = load_config(config)
    context = CompactionContext(config=loaded, now_ms=lake.now_ms, budget=compaction_budget(loaded))
    return build_lake_view(
        LocalStore(lake.root),
        now_ms=lake.now_ms,
        offsets=next_run_offsets(LocalStore(lake.root), now_ms=lake.now_ms),
        compaction=context,
    )


def lag_cells(page: str) -> list[str]:
    return re.findall(r'<td class="n" data-key="max_compaction_lag_ms"[^>]*>(.*?)</td>', page)


def test_kafkas_default_max_compaction_lag_shows_once_as_no_deadline(lake: ViewLake, tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(NO_LAG_CONFIG)
    page = render_html([view_at(lake, config)])
    assert lag_cells(page) == ["none (Long.MAX_VALUE)"] * 2 + ["-"] * 2  # orders (compacted), payments
    assert f'data-value="{LONG_MAX}"' in page  # the raw value stays for a reader of the page
    assert f">{LONG_MAX}" not in page


def test_a_set_max_compaction_lag_shows_its_value_and_duration(lake: ViewLake) -> None:
    assert lag_cells(render_html([view_at(lake, lake.config)]))[0] == "3600000 <small>1.0 h</small>"


def test_empty_log_says_what_kafka_means(lake: ViewLake, tmp_path: Path) -> None:
    """orders' partitions hold records, but none is older than min.compaction.lag.ms, so Kafka's cleaner
    sees no clean and no cleanable bytes: ``skip (empty-log)`` carries Kafka's meaning as a tooltip and in
    a legend below the table."""
    config = tmp_path / "config.yaml"
    config.write_text(NO_LAG_CONFIG + "    min.compaction.lag.ms: 31536000000000\n")
    page = render_html([view_at(lake, config)])
    cell = re.search(r'<td data-eligibility="empty-log" title="([^"]*)">skip \(empty-log\)</td>', page)
    assert cell is not None, page
    assert "totalBytes == 0" in cell.group(1)
    assert "may hold records" in cell.group(1)
    assert (
        "<li><code>empty-log</code>: Kafka&#x27;s cleaner skips a log with no clean and no cleanable" in page
    )


def labels(svg: str) -> dict[str, list[tuple[str, float]]]:
    """The scale labels by role (``max``, ``min``, ``value``): their text and height."""
    found: dict[str, list[tuple[str, float]]] = {}
    for y, role, text in re.findall(
        r'<text x="[^"]*" y="([^"]*)" class="scale" data-scale="(\w+)"[^>]*>([^<]*)<', svg
    ):
        found.setdefault(role, []).append((text, float(y)))
    return found


def point(version: int, size: int, starts: int) -> TopicPoint:
    return TopicPoint(version, 0, size, (starts,))


def test_each_scale_is_labelled_with_its_minimum_and_maximum() -> None:
    svg = topic_chart("t", [point(1, 5000, 10), point(2, 3000, 40), point(3, 1000, 70)])
    found = labels(svg)
    assert [text for text, _y in found["max"]] == ["5000", "70"]
    assert [text for text, _y in found["min"]] == ["1000", "10"]
    assert all(y < BOTTOM / 2 for _t, y in found["max"])
    assert all(y == BOTTOM for _t, y in found["min"])
    blue, red = re.findall(r'<polyline[^>]*points="([^"]*)"', svg)
    assert [float(xy.split(",")[1]) for xy in blue.split()] == [TOP, (TOP + BOTTOM) / 2, BOTTOM]
    assert [float(xy.split(",")[1]) for xy in red.split()] == [BOTTOM, (TOP + BOTTOM) / 2, TOP]


def test_a_series_that_never_changes_is_drawn_mid_height_with_its_value_beside_it() -> None:
    """Log start offsets all 0 (nothing deleted yet): not a red "0" at the top of a line at the bottom."""
    svg = topic_chart("t", [point(1, 5000, 0), point(2, 3000, 0)])
    found = labels(svg)
    assert found["value"] == [("0", (TOP + BOTTOM) / 2 + 4)]
    assert [text for text, _y in found["max"]] == ["5000"]
    red = re.findall(r'<polyline[^>]*points="([^"]*)"', svg)[1]
    assert {float(xy.split(",")[1]) for xy in red.split()} == {(TOP + BOTTOM) / 2}


def test_a_dry_run_is_a_hollow_mark_on_the_version_it_built_on(lake: ViewLake) -> None:
    """A dry run's report in its run folder (it commits no version) is shown: a hollow mark under its base
    version in each chart and a row in the Dry runs table with what it would delete."""
    store = LocalStore(lake.root)
    report = {
        "run_id": "20261206T220000Z-0000dry0",
        "dry_run": True,
        "now_ms": lake.now_ms,
        "base_version": lake.head.version,
        "outcome": "dry run",
        "plan": {"totals": {"by_reason": {"consumed": {"segments": 1, "bytes": 2233}}}},
    }
    run_id = str(report["run_id"])
    store.put(run_prefix(run_id) + "report.json", json.dumps(report).encode())
    try:
        view = view_at(lake, lake.config)
        page = render_html([view])
    finally:
        store.delete(run_prefix(run_id) + "report.json")
    assert view.history.dry_runs == (
        DryRun(run_id, lake.head.version, lake.now_ms, view.history.dry_runs[0].deleted),
    )
    marks = re.findall(
        r'<g class="dry-run" data-run-id="([^"]*)" data-base-version="(\d+)">.*?fill="none"', page
    )
    assert marks == [(run_id, str(lake.head.version))] * len(view.history.topics)
    assert "would delete consumed: 1 segment(s), 2233 B" in page
    assert f'<tr data-run-id="{run_id}">' in page
    assert "&#9675; a dry run on that version" in page


def test_without_dry_runs_the_page_says_where_they_would_be(lake: ViewLake) -> None:
    page = render_html([view_at(lake, lake.config)])
    assert "<h3>Dry runs</h3><p>No dry run's report on these versions" in page


def test_a_negative_time_since_last_run_of_an_older_report_is_not_shown(lake: ViewLake) -> None:
    """Runs before issue 37 reported ``now - base now`` even when negative (a run for 22:00 on a lake
    committed at 22:10): the view leaves such a value out; the report's other gauges stay."""
    document = {"metrics": {"log_cleaner": {"time-since-last-run-ms": -600_000, "max-dirty-percent": 7}}}
    report = report_from_document(document, location="report.json")
    (commit,) = history_of([summary_of(lake.head)], {lake.head.run_id: report}).commits
    assert commit.cleaner == {"max-dirty-percent": 7}
    document["metrics"]["log_cleaner"]["time-since-last-run-ms"] = 600_000
    report = report_from_document(document, location="report.json")
    (commit,) = history_of([summary_of(lake.head)], {lake.head.run_id: report}).commits
    assert commit.cleaner == {"time-since-last-run-ms": 600_000, "max-dirty-percent": 7}
