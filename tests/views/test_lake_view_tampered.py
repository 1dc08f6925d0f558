"""The lake view on tampered and hostile lake data (issue 38): a head run's ``report.json`` with a field of
the wrong type is refused as a bad manifest is (one ``ManifestFormatError`` naming the report and the field),
and on the list of lakes only that lake's row says so; a lake URI's secret is never on a page; hostile
consumer group ids are shown escaped, without their control characters and bounded."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kafka_segments.errors import ManifestFormatError
from kafka_segments.lake.layout import run_prefix
from kafka_segments.offsets.snapshot_store import pin_snapshot, store_snapshot
from kafka_segments.pipeline.stages import next_run_offsets
from kafka_segments.state import CommittedOffset, GroupOffsets, OffsetSnapshot
from kafka_segments.storage import LocalStore
from kafka_segments.views.display_text import MAX_SHOWN, shown_text
from kafka_segments.views.lake_list import LakeSummary, summarize_lake
from kafka_segments.views.lake_view import build_lake_view
from kafka_segments.views.lake_view_html import render_html, render_lake_list, render_problem

from views.lake_view_helpers import ViewLake, build_view_lake

pytestmark = pytest.mark.lake

Change = Callable[[dict[str, Any]], None]


def _set(path: str, value: object) -> Change:
    """A change of the report setting the field at ``path`` (dots; ``[0]`` a list item) to ``value``."""

    def change(report: dict[str, Any]) -> None:
        *parents, last = path.replace("[0]", ".0").split(".")
        node: Any = report
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value

    return change


def _both(*changes: Change) -> Change:
    def change(report: dict[str, Any]) -> None:
        for one in changes:
            one(report)

    return change


TAMPERED = [
    pytest.param(_set("compaction.totals.cleaned", [1]), "compaction.totals.cleaned", id="cleaned-a-list"),
    pytest.param(
        _both(_set("compaction.totals.cleaned", 1), _set("compaction.partitions[0].segments_replaced", 5)),
        "compaction.partitions[0].segments_replaced",
        id="segments_replaced-5",
    ),
    pytest.param(_set("adoption.quarantined", 7), "adoption.quarantined", id="quarantined-7"),
    pytest.param(
        _set("compaction.partitions[0].partition", [1]),
        "compaction.partitions[0].partition",
        id="partition-[1]",
    ),
    pytest.param(
        _set("compaction.partitions[0].partition", "abc"),
        "compaction.partitions[0].partition",
        id="partition-abc",
    ),
    pytest.param(_set("compaction", "x"), "compaction", id="compaction-a-string"),
    pytest.param(
        _set("metrics.log_cleaner", {"max-dirty-percent": "x"}),
        "metrics.log_cleaner.max-dirty-percent",
        id="gauge-a-string",
    ),
    pytest.param(
        _set("plan.totals.by_reason", {"log-start-offset": {"bytes": "7"}}),
        "plan.totals.by_reason.log-start-offset.bytes",
        id="bytes-a-string",
    ),
    pytest.param(_set("outcome", 3), "outcome", id="outcome-a-number"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> ViewLake:
    return build_view_lake(tmp_path_factory.mktemp("lake-view-tampered") / "lake")


@pytest.fixture
def lake(built: ViewLake, tmp_path: Path) -> ViewLake:
    """A copy of the view's lake this test may tamper with."""
    root = tmp_path / "lake"
    shutil.copytree(built.root, root)
    return ViewLake(root=root, config=built.config, now_ms=built.now_ms, head=built.head)


def tamper_report(lake: ViewLake, change: Change) -> str:
    """Apply ``change`` to the head run's report; the report's key."""
    store = LocalStore(lake.root)
    key = run_prefix(lake.head.run_id) + "report.json"
    report = json.loads(store.get(key))
    change(report)
    store.put(key, json.dumps(report).encode())
    return key


@pytest.mark.parametrize(("change", "field"), TAMPERED)
def test_a_tampered_report_is_refused_naming_the_report_and_the_field(
    lake: ViewLake, change: Change, field: str
) -> None:
    key = tamper_report(lake, change)

    with pytest.raises(ManifestFormatError) as refused:
        build_lake_view(
            LocalStore(lake.root),
            now_ms=lake.now_ms,
            offsets=next_run_offsets(LocalStore(lake.root), now_ms=lake.now_ms),
        )

    assert refused.value.location == f"{lake.root}/{key}"
    assert f"field {field!r}" in str(refused.value)


@pytest.mark.parametrize(("change", "field"), TAMPERED[:5])
def test_on_the_list_only_the_tampered_lake_is_bad(
    lake: ViewLake, built: ViewLake, change: Change, field: str
) -> None:
    tamper_report(lake, change)

    rows = [
        summarize_lake(LocalStore(built.root), name="good"),
        summarize_lake(LocalStore(lake.root), name="bad"),
    ]
    page = render_lake_list(rows, title="lakes", href=lambda name: name)

    assert rows[0].problem is None
    assert rows[0].commit is not None
    assert rows[1].commit is None
    assert rows[1].problem is not None
    assert "report.json" in rows[1].problem
    assert f"field {field!r}" in rows[1].problem
    assert '<tr data-lake="good"><td>' in page
    assert '<tr data-lake="bad" data-problem="">' in page


def test_a_report_that_is_not_json_or_too_deep_is_refused(lake: ViewLake) -> None:
    store = LocalStore(lake.root)
    key = run_prefix(lake.head.run_id) + "report.json"
    for data, problem in ((b"{", "run report is not valid JSON"), (b"[" * 100_000, "nested deeper than 100")):
        store.put(key, data)
        with pytest.raises(ManifestFormatError, match=problem):
            build_lake_view(store, now_ms=lake.now_ms, offsets=next_run_offsets(store, now_ms=lake.now_ms))
        assert summarize_lake(store, name="x").problem is not None


def test_a_report_of_an_older_run_with_fewer_fields_still_reads(lake: ViewLake) -> None:
    tamper_report(lake, lambda report: report.clear())

    view = build_lake_view(
        LocalStore(lake.root),
        now_ms=lake.now_ms,
        offsets=next_run_offsets(LocalStore(lake.root), now_ms=lake.now_ms),
    )

    assert view.uncleanable == ()
    assert view.history.commits[-1].outcome == "committed"


SECRET = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"


def test_a_uris_secret_is_not_on_the_list_or_a_problem_page() -> None:
    uri = f"s3://AKIAIOSFODNN7EXAMPLE:{SECRET}@bucket/prefix"
    row = LakeSummary("secret", uri, None, None, None, problem=f"{uri}: cannot be opened")

    pages = [render_lake_list([row], title="lakes", href=lambda name: name), render_problem("t", f"{uri}: x")]

    for page in pages:
        assert SECRET not in page
        assert "s3://AKIAIOSFODNN7EXAMPLE:***@bucket/prefix" in page


HOSTILE = {
    "script": '<script>alert("g")</script>"\'&',
    "long": "g" * 100_000,
    "controls": "a\x00b\x1b[31mc\x7fd\u202eevil\u200b\u2028e",
    "unicode": "グループ-😀-ü",
}


def test_hostile_group_ids_are_escaped_bounded_and_visible(lake: ViewLake) -> None:
    store = LocalStore(lake.root)
    now_ms = lake.now_ms + 10
    groups = tuple(
        GroupOffsets(group_id, "Stable", "consumer", None, ("payments",),
                     (CommittedOffset("payments", 0, 6, now_ms),))
        for group_id in HOSTILE.values()
    )  # fmt: skip
    stored = store_snapshot(store, OffsetSnapshot(taken_at_ms=now_ms, source="file", groups=groups))
    pin_snapshot(store, now_ms=now_ms, snapshot_id=stored.snapshot_id, source="file")

    page = render_html(
        [build_lake_view(store, now_ms=now_ms, offsets=next_run_offsets(store, now_ms=now_ms))]
    )

    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&quot;g&quot;)&lt;/script&gt;&quot;&#x27;&amp;" in page
    assert "g" * (MAX_SHOWN + 1) not in page
    assert f"{'g' * MAX_SHOWN}… (100000 characters)" in page
    assert len(page) < 100_000
    for hidden in ("\x00", "\x1b", "\x7f", "\u202e", "\u200b", "\u2028"):
        assert hidden not in page
    assert "a\\u0000b\\u001b[31mc\\u007fd\\u202eevil\\u200b\\u2028e" in page
    assert HOSTILE["unicode"] in page


def test_shown_text_keeps_ordinary_text() -> None:
    assert shown_text("billing-2024.eu_west") == "billing-2024.eu_west"
    assert shown_text("x" * 5, limit=3) == "xxx… (5 characters)"
    assert shown_text("\U000e0041") == "\\U000e0041"  # a tag character (format, beyond the BMP)
