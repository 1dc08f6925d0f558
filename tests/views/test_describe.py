"""``describe_lake``: per-partition summaries of a committed manifest, as a table and as JSON."""

from __future__ import annotations

import dataclasses

import pytest
from kafka_segments.errors import PartitionNotFoundError
from kafka_segments.lake.reader import partition_state
from kafka_segments.lake.roots import read_root
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kafka_segments.views.describe import COLUMNS, describe_lake, iso_utc
from kafka_segments.views.describe_compaction import COMPACTION_KEYS
from kit import T0, FakeClock
from lake.read_helpers import (
    EMPTY_PARTITION_LEO,
    PAYMENTS_0,
    PAYMENTS_LOG_START,
    PartitionSpec,
    Seg,
    commit_lake,
    commit_states,
    rich_lake,
)

pytestmark = pytest.mark.lake

PARTITION_KEYS = {
    "topic",
    "partition",
    "log_start_offset",
    "log_end_offset",
    "segment_count",
    "size_bytes",
    "record_count",
    "largest_timestamp_min_ms",
    "largest_timestamp_min",
    "largest_timestamp_max_ms",
    "largest_timestamp_max",
    "cleaner_checkpoint",
    "last_stable_offset",
    "open_transactions",
    "run_id",
    *COMPACTION_KEYS,  # added by the compaction view; null without a configuration
}


def test_text_is_an_aligned_table_with_a_summary(store: ObjectStore, clock: FakeClock) -> None:
    manifest = rich_lake(store, clock)

    text = describe_lake(store).to_text()

    lines = text.splitlines()
    assert len(lines) == 1 + 4 + 1
    assert lines[0].split() == [column.header for column in COLUMNS]
    rows = {tuple(line.split()[:2]): line.split() for line in lines[1:5]}
    assert list(rows) == [("orders", "0"), ("orders", "1"), ("payments", "0"), ("payments", "1")]
    assert rows["payments", "0"] == [
        "payments",
        "0",
        "3",
        "13",
        "3",
        str(manifest.partitions[2].size_bytes),
        "13",
        "2025-11-21T04:40:00.002Z",
        "2025-11-21T04:40:00.012Z",
        "-",
        "11",
        "1",
        manifest.run_id,
    ]
    assert rows["payments", "1"][2:10] == [str(EMPTY_PARTITION_LEO)] * 2 + ["0", "0", "0", "-", "-", "-"]
    assert rows["orders", "0"][9] == "20"
    # aligned: every column starts at the same position on every row
    bytes_end = lines[0].index("BYTES") + len("BYTES")
    assert all(line[bytes_end - 1] != " " for line in lines[1:5])
    assert lines[-1].startswith("4 partition(s) of 2 topic(s), 7 segment(s), ")
    assert f"at version 1 (adopt, run {manifest.run_id}, committed 2025-11-21T04:40:00.000Z)" in lines[-1]


def test_json_has_stable_keys_and_values(local_store: LocalStore, clock: FakeClock) -> None:
    manifest = rich_lake(local_store, clock)

    document = describe_lake(local_store).to_dict()

    assert set(document) == {
        "lake",
        "version",
        "run_id",
        "operation",
        "committed_at_ms",
        "committed_at",
        "partitions",
        "totals",
    }
    assert document["version"] == 1
    assert document["operation"] == "adopt"
    assert document["committed_at_ms"] == T0
    assert document["committed_at"] == "2025-11-21T04:40:00.000Z"
    assert all(set(p) == PARTITION_KEYS for p in document["partitions"])
    payments = document["partitions"][2]
    assert payments == {
        "topic": "payments",
        "partition": 0,
        "log_start_offset": PAYMENTS_LOG_START,
        "log_end_offset": 13,
        "segment_count": 3,
        "size_bytes": manifest.partitions[2].size_bytes,
        "record_count": 13,
        "largest_timestamp_min_ms": T0 + 2,
        "largest_timestamp_min": "2025-11-21T04:40:00.002Z",
        "largest_timestamp_max_ms": T0 + 12,
        "largest_timestamp_max": "2025-11-21T04:40:00.012Z",
        "cleaner_checkpoint": None,
        "last_stable_offset": 11,
        "open_transactions": 1,
        "run_id": manifest.run_id,
        **dict.fromkeys(COMPACTION_KEYS),
    }
    empty = document["partitions"][3]
    assert (empty["log_start_offset"], empty["log_end_offset"], empty["segment_count"]) == (40, 40, 0)
    assert empty["largest_timestamp_min_ms"] is None
    assert empty["largest_timestamp_max"] is None
    assert document["partitions"][0]["cleaner_checkpoint"] == 20
    assert document["totals"] == {
        "topics": 2,
        "partitions": 4,
        "segments": 7,
        "size_bytes": sum(p.size_bytes for p in manifest.partitions),
        "record_count": 29 + 29 + 13,
    }


def test_as_of_an_older_version(local_store: LocalStore, clock: FakeClock) -> None:
    first = rich_lake(local_store, clock)
    clock.advance(60_000)
    state = partition_state(local_store, read_root(local_store, first.version), PAYMENTS_0)
    commit_states(
        local_store,
        [dataclasses.replace(state, log_start_offset=6, segments=state.segments[1:])],
        clock=clock,
    )

    head = describe_lake(local_store).to_dict()
    old = describe_lake(local_store, version=1).to_dict()

    assert (head["version"], old["version"]) == (2, 1)
    assert [p["topic"] for p in head["partitions"]] == ["payments"]
    assert (head["partitions"][0]["log_start_offset"], head["partitions"][0]["segment_count"]) == (6, 2)
    assert (old["partitions"][2]["log_start_offset"], old["partitions"][2]["segment_count"]) == (3, 3)
    assert head["committed_at_ms"] == T0 + 60_000


def test_topics_filter_and_unknown_topics(local_store: LocalStore, clock: FakeClock) -> None:
    rich_lake(local_store, clock)

    described = describe_lake(local_store, topics=["payments"])

    assert [(p.topic, p.partition) for p in described.partitions] == [("payments", 0), ("payments", 1)]
    assert described.to_dict()["totals"]["partitions"] == 2
    with pytest.raises(PartitionNotFoundError, match=r"topic\(s\) nope not in manifest version 1"):
        describe_lake(local_store, topics=["payments", "nope"])


def test_an_empty_segment_falls_back_to_its_adoption_time(local_store: LocalStore, clock: FakeClock) -> None:
    tp = TopicPartition("rolled", 0)
    commit_lake(local_store, {tp: PartitionSpec([Seg(b"", 25, adopted=True)])}, clock=clock)

    (partition,) = describe_lake(local_store).partitions

    assert (partition.log_start_offset, partition.log_end_offset, partition.segment_count) == (25, 25, 1)
    assert partition.largest_timestamp_min_ms == partition.largest_timestamp_max_ms == T0
    assert partition.record_count == 0


def test_iso_utc() -> None:
    assert iso_utc(T0) == "2025-11-21T04:40:00.000Z"
    assert iso_utc(T0 + 7) == "2025-11-21T04:40:00.007Z"
    assert iso_utc(0) == "1970-01-01T00:00:00.000Z"
    assert iso_utc(-1) is None
    assert iso_utc(None) is None
    assert iso_utc(2**62) is None
