"""Readers of a format 2 lake read the partitions they are asked about and no others (issue 33, point 5):
``describe`` of a topic, ``dump`` of a partition, a read of one partition or topic, time travel by timestamp,
the lake list and the lake view's history. Counted through ``CountingStore`` on both backends: a test fails
when a reader opens a piece of a partition it was not asked about.

A root's summaries are checked against the partition manifest whenever a partition is read, so a root whose
numbers were changed is refused naming the object and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from counting_store import PARTITIONS, Call, CountingStore, counting_store
from kafka_segments.errors import ManifestFormatError
from kafka_segments.lake.export import export_lake
from kafka_segments.lake.format2 import PIECES_PREFIX
from kafka_segments.lake.history import read_manifest
from kafka_segments.lake.layout import manifest_key
from kafka_segments.lake.reader import partition_state, resolve_root
from kafka_segments.lake.upgrade import upgrade
from kafka_segments.reading.plan import plan_read
from kafka_segments.storage import ObjectStore, Overwrite
from kafka_segments.topic_partition import TopicPartition
from kafka_segments.views.describe import describe_lake
from kafka_segments.views.lake_list import summarize_lake
from kafka_segments.views.lake_view_history import read_history, root_summary, summary_of
from kit import FakeClock
from manifest_files import format_1_commits

from lake.retention_helpers import config, run, topic_yaml, upload_fifteen_records

pytestmark = pytest.mark.lake

NOW = 1_000_000
TOPICS = {"a": 2, "b": 3}


def _lake(store: ObjectStore, clock: FakeClock) -> None:
    """Topics ``a`` (2 partitions) and ``b`` (3) adopted in format 1, then upgraded: version 2 is format 2."""
    for topic, count in TOPICS.items():
        for partition in range(count):
            upload_fifteen_records(store, tp=TopicPartition(topic, partition), segment_ts=[10, 20, 30])
    with format_1_commits():
        run(store, config(topic_yaml(retention_ms=-1)), now_ms=NOW, clock=clock)
    clock.advance(1_000)
    upgrade(store, clock=clock)


def _piece_partitions(calls: tuple[Call, ...]) -> set[str]:
    """The partitions whose pieces were read."""
    return {
        call.key[len(PIECES_PREFIX) :].split("/")[0]
        for call in calls
        if call.area == PARTITIONS and call.kind == "get"
    }


@pytest.fixture
def lake(store: ObjectStore, clock: FakeClock) -> CountingStore:
    _lake(store, clock)
    return counting_store(store)


def test_describe_reads_no_piece_and_says_what_the_format_1_version_says(lake: CountingStore) -> None:
    whole = describe_lake(lake)
    topic = describe_lake(lake, topics=["a"])

    assert _piece_partitions(lake.calls) == set()
    assert [p.partition for p in topic.partitions] == [0, 1]
    before = describe_lake(lake, version=1)  # the same state, in format 1, before the upgrade
    assert [p.to_dict() for p in whole.partitions] == [p.to_dict() for p in before.partitions]
    assert len(whole.partitions) == 5


def test_dump_of_a_partition_reads_its_pieces_only(lake: CountingStore) -> None:
    state = partition_state(lake, resolve_root(lake), TopicPartition("b", 2))

    assert state.log_end_offset == 15
    assert _piece_partitions(lake.calls) == {"b-2"}


def test_a_read_of_one_partition_plans_from_its_pieces_only(lake: CountingStore) -> None:
    plan = plan_read(lake, {"assign": json.dumps({"b": [1]})})

    assert [r.topic_partition for r in plan.ranges] == [TopicPartition("b", 1)]
    assert _piece_partitions(lake.calls) == {"b-1"}


def test_a_read_of_a_topic_reads_that_topics_pieces_only(lake: CountingStore) -> None:
    plan = plan_read(lake, {"subscribe": "a", "versionAsOf": 2})

    assert {r.topic_partition.topic for r in plan.ranges} == {"a"}
    assert _piece_partitions(lake.calls) == {"a-0", "a-1"}


def test_time_travel_by_timestamp_picks_the_version_from_roots(lake: CountingStore) -> None:
    committed = read_manifest(lake, 2).committed_at_ms
    lake.reset()
    plan = plan_read(lake, {"subscribe": "a", "timestampAsOf": committed})

    assert plan.version == 2
    assert _piece_partitions(lake.calls) == {"a-0", "a-1"}


def test_the_lake_list_and_the_history_read_no_piece(lake: CountingStore) -> None:
    row = summarize_lake(lake, name="lake")
    history = read_history(lake)

    assert _piece_partitions(lake.calls) == set()
    head = read_manifest(lake, 2)
    assert row.partitions == 5
    assert row.size_bytes == sum(state.size_bytes for state in head.partitions)
    assert [commit.version for commit in history.commits] == [1, 2]
    assert root_summary(resolve_root(lake)) == summary_of(head)  # the summaries say what the pieces say


def test_a_root_whose_summary_was_changed_is_refused_when_its_partition_is_read(
    store: ObjectStore, clock: FakeClock
) -> None:
    _lake(store, clock)
    root = json.loads(store.get(manifest_key(2)))
    root["partitions"][1]["summary"]["bytes"] += 1
    store.put(manifest_key(2), json.dumps(root).encode(), mode=Overwrite())

    root = resolve_root(store)
    with pytest.raises(ManifestFormatError, match=r"field 'summary' of a-1 does not match"):
        partition_state(store, root, TopicPartition("a", 1))
    with pytest.raises(ManifestFormatError, match=r"field 'summary' of a-1 does not match"):
        plan_read(store, {"subscribe": "a"})
    partition_state(store, root, TopicPartition("b", 0))  # another partition is read as it is


def test_export_of_a_format_2_version_is_the_format_1_versions(
    store: ObjectStore, clock: FakeClock, tmp_path: Path
) -> None:
    """Export reads a format 2 version partition by partition; the log directory is the one the same
    state gives in format 1 (version 1, before the upgrade)."""
    _lake(store, clock)
    export_lake(store, tmp_path / "v1", version=1)
    export_lake(store, tmp_path / "v2", version=2)

    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    assert files(tmp_path / "v2") == files(tmp_path / "v1")
    assert len(files(tmp_path / "v2")) > 5 * 3
