"""The lake view (``views.lake_view``): built from manifests, reports and the pinned snapshot only, its
numbers are ``describe --json``'s; history has one point per version; and it stays a few reads on 4,000
partitions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from forwarding_store import ForwardingStore
from kafka_segments.config import load_config
from kafka_segments.lake.codec import manifest_to_json
from kafka_segments.lake.history import read_manifest
from kafka_segments.lake.layout import manifest_key
from kafka_segments.pipeline.compaction.stage import compaction_budget
from kafka_segments.pipeline.stages import next_run_offsets
from kafka_segments.state import PartitionState
from kafka_segments.storage import LocalStore
from kafka_segments.topic_partition import TopicPartition
from kafka_segments.views.describe import describe_lake
from kafka_segments.views.describe_compaction import CompactionContext
from kafka_segments.views.lake_view import LakeView, build_lake_view
from kafka_segments.views.lake_view_history import summary_of, version_summary
from kafka_segments.views.lake_view_html import render_html

from views.lake_view_helpers import BILLING_OFFSET, ViewLake, build_view_lake, expected_numbers, page_numbers

pytestmark = pytest.mark.lake

PAYMENTS_0 = TopicPartition("payments", 0)


def moved(state: PartitionState, tp: TopicPartition) -> PartitionState:
    """``state`` as partition ``tp`` (its segments' keys in ``tp``'s folder; the objects need not exist)."""
    segments = tuple(
        dataclasses.replace(s, key=f"{tp.dir_name}/{s.key.rsplit('/', 1)[1]}") for s in state.segments
    )
    return dataclasses.replace(state, topic_partition=tp, segments=segments)


class CountingStore(ForwardingStore):
    """Counts the GETs and refuses to read a segment (the view reads none)."""

    def __init__(self, inner: LocalStore) -> None:
        super().__init__(inner)
        self.gets: list[str] = []

    def get(self, key: str) -> bytes:
        if not key.startswith("_kafka_segments/"):
            raise AssertionError(f"the lake view read {key}")
        self.gets.append(key)
        return super().get(key)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> ViewLake:
    return build_view_lake(tmp_path_factory.mktemp("lake-view") / "lake")


def view_of(lake: ViewLake, store: LocalStore | CountingStore | None = None) -> LakeView:
    config = load_config(lake.config)
    context = CompactionContext(config=config, now_ms=lake.now_ms, budget=compaction_budget(config))
    store = store or LocalStore(lake.root)
    offsets = next_run_offsets(store, now_ms=lake.now_ms)
    return build_lake_view(store, now_ms=lake.now_ms, offsets=offsets, compaction=context)


def test_the_partitions_are_describes(lake: ViewLake) -> None:
    store = LocalStore(lake.root)
    view = view_of(lake)
    config = load_config(lake.config)
    context = CompactionContext(config=config, now_ms=lake.now_ms, budget=compaction_budget(config))
    assert view.description == describe_lake(store, compaction=context)
    assert view.max_compaction_lag_ms == {"orders": 3_600_000}


def test_history_has_one_point_per_version_with_each_commits_passes(lake: ViewLake) -> None:
    history = view_of(lake).history
    assert [c.version for c in history.commits] == [1, 2]
    assert [c.operation for c in history.commits] == ["adopt", "test"]
    assert [c.outcome for c in history.commits] == ["committed", "committed"]
    first = read_manifest(LocalStore(lake.root), 1)
    gone = first.partitions[2].segments[0]
    assert history.commits[1].deleted[0].name == "log-start-offset"
    assert (history.commits[1].deleted[0].segments, history.commits[1].deleted[0].size_bytes) == (
        1,
        gone.size,
    )
    assert history.commits[1].cleaner == {"max-dirty-percent": 100, "uncleanable-partitions-count": 1}
    assert history.commits[0].cleaner == {}  # adopt leaves no report
    payments = history.topics["payments"]
    assert [p.version for p in payments] == [1, 2]
    assert [p.log_start_offsets for p in payments] == [(3, 40), (6, 40)]
    assert payments[0].size_bytes - payments[1].size_bytes == gone.size


def test_uncleanable_partitions_come_from_the_heads_report(lake: ViewLake) -> None:
    (found,) = view_of(lake).uncleanable
    assert (found.topic, found.partition, found.reason) == ("orders", 1, "uncleanable: bad batch")


def test_groups_lag_expiry_and_the_holder(lake: ViewLake) -> None:
    view = view_of(lake)
    head = lake.head.partitions[2]
    billing, audit = (next(g for g in view.groups if g.group_id == name) for name in ("billing", "audit"))
    (row,) = billing.partitions
    assert row.lag_records == head.log_end_offset - BILLING_OFFSET
    assert row.lag_bytes == sum(s.size for s in head.segments if s.next_offset > BILLING_OFFSET)
    assert row.expires_at_ms is None  # Stable and subscribed: never
    (audit_row,) = audit.partitions
    assert audit_row.expires_at_ms == lake.now_ms - 1000 + 60 * 60_000  # Empty since + offsets.retention
    holder = view.retention[PAYMENTS_0].holder
    assert holder == "audit"  # the lowest committed offset holds consumed retention back
    assert audit_row.holds_back
    assert not row.holds_back


def test_a_versions_summary_is_the_manifests(lake: ViewLake) -> None:
    """The light read of an older version gives what the strict reader's manifest gives."""
    store = LocalStore(lake.root)
    for version in (1, 2):
        assert version_summary(store, version) == summary_of(read_manifest(store, version))


def test_the_page_shows_describes_numbers(lake: ViewLake) -> None:
    store = LocalStore(lake.root)
    view = view_of(lake)
    numbers = page_numbers(render_html([view]))
    document = view.description.to_dict()
    shown = {
        tp: {k: row[k] for k in expected_numbers(document)[tp]} for tp, row in numbers.partitions.items()
    }
    assert shown == expected_numbers(document)
    assert numbers.points["payments"] == {
        v: (
            sum(
                p.size_bytes
                for p in read_manifest(store, v).partitions
                if p.topic_partition.topic == "payments"
            ),
            sum(
                p.log_start_offset
                for p in read_manifest(store, v).partitions
                if p.topic_partition.topic == "payments"
            ),
        )
        for v in (1, 2)
    }
    assert sorted(set(numbers.groups)) == ["audit", "billing"]
    assert "max-dirty-percent 100, uncleanable-partitions-count 1" in render_html([view])


def test_the_page_is_self_contained(lake: ViewLake) -> None:
    page = render_html([view_of(lake)])
    assert "http://" not in page
    assert "https://" not in page
    assert "<link" not in page
    assert "<script src" not in page
    assert "1970-01-01T" not in page
    assert "<svg" in page


def test_four_thousand_partitions_are_a_few_reads(tmp_path: Path) -> None:
    """Per version: one manifest and one report read, whatever the partitions; no segment read (the
    manifests are written directly: the segments they list need not exist)."""
    source = build_view_lake(tmp_path / "small")
    template = source.head.partitions[0]
    partitions = sorted(TopicPartition(f"t{i % 40}", i // 40) for i in range(4000))
    states = [moved(template, tp) for tp in partitions]
    store = LocalStore(tmp_path / "big")
    for version in (1, 2, 3):
        manifest = dataclasses.replace(source.head, version=version, parent_version=version - 1 or None)
        store.put(
            manifest_key(version), manifest_to_json(dataclasses.replace(manifest, partitions=tuple(states)))
        )
    counting = CountingStore(store)
    view = build_lake_view(
        counting, now_ms=source.now_ms, offsets=next_run_offsets(counting, now_ms=source.now_ms)
    )
    page = render_html([view])
    assert page.count("<tr data-topic=") == 4000
    assert len(view.description.partitions) == 4000
    assert len(view.history.commits) == 3
    manifests = [k for k in counting.gets if k.startswith("_kafka_segments/manifests/")]
    assert len(manifests) == 3  # the head once, not twice
    assert len(counting.gets) <= 3 + 3 + 2, counting.gets  # manifests, reports, a pin and its snapshot


def test_a_later_view_uses_the_newest_earlier_pin(lake: ViewLake) -> None:
    """A day later nothing is pinned for that time: the offsets last seen are the view's (and audit's,
    Empty for over offsets.retention, have expired: the page says so)."""
    later = lake.now_ms + 86_400_000
    config = load_config(lake.config)
    context = CompactionContext(config=config, now_ms=later, budget=compaction_budget(config))
    view = build_lake_view(
        LocalStore(lake.root),
        now_ms=later,
        offsets=next_run_offsets(LocalStore(lake.root), now_ms=later),
        compaction=context,
    )
    assert view.offsets is not None
    assert view.offsets.origin == "pinned-earlier"
    assert view.offsets.snapshot.taken_at_ms == lake.now_ms
    assert sorted(g.group_id for g in view.groups) == ["audit", "billing"]
    assert "expired " in render_html([view])
