"""Adoption rule 7 (bootstrap from a copied Kafka log directory) and rule 9 (scale), the sample topic, and a
lake copied between backends."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from kafka_segments.checkpoint import format_offset_checkpoint
from kafka_segments.demo import sample_topic
from kafka_segments.errors import CheckpointFileError
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.adoption import adopt_objects
from kafka_segments.lake.history import read_head
from kafka_segments.lake.layout import CLEANER_OFFSET_CHECKPOINT_KEY, LOG_START_OFFSET_CHECKPOINT_KEY
from kafka_segments.lake.run_folder import read_outcome
from kafka_segments.lake.runs import Outcome, RunRecord
from kafka_segments.lake.staging import begin_run
from kafka_segments.records.log import scan_headers
from kafka_segments.state import (
    Manifest,
    PartitionState,
    SegmentEntry,
    SegmentOrigin,
    sort_partitions,
)
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.storage.base import ObjectMeta
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment, upload_segment

from lake.adoption_helpers import CountingStore

pytestmark = pytest.mark.lake


def test_sample_topic_bootstrap_matches_an_independent_scan(store: ObjectStore, clock: FakeClock) -> None:
    segments = sample_topic()
    for segment in segments:
        for key, data in segment.objects().items():
            store.put(key, data)

    report = adopt(store, now_ms=clock(), clock=clock)

    assert (report.base_version, report.committed_version) == (None, 1)
    head = read_head(store)
    assert head is not None
    assert (head.version, head.operation, head.run_id) == (1, "adopt", report.run_id)
    assert len(head.partitions) == 2
    for segment in segments:
        headers = list(scan_headers(segment.files.log, verify_crc=True))
        state = head.partition(TopicPartition(segment.topic, segment.partition))
        assert state is not None
        entry = state.segment(f"{segment.directory}/{segment.files.base_offset:020d}.log")
        assert entry is not None
        assert entry.last_offset == headers[-1].last_offset
        assert entry.record_count == sum(h.records_count for h in headers)
        assert entry.batch_count == len(headers)
        assert entry.max_timestamp_ms == max(h.max_timestamp for h in headers)
        assert entry.first_batch_max_timestamp_ms == headers[0].max_timestamp
        assert entry.size == segment.files.size
    for partition in (0, 1):
        state = head.partition(TopicPartition("orders", partition))
        assert state is not None
        last = [s for s in segments if s.partition == partition][-1].files
        assert (state.log_start_offset, state.log_end_offset) == (0, last.next_offset)
        assert state.open_transactions == ()  # one committed, one aborted: both closed by their markers
        assert state.cleaner_checkpoint is None


def test_rule7_bootstrap_takes_both_checkpoint_files_of_a_copied_log_dir(
    store: ObjectStore, clock: FakeClock
) -> None:
    a, b, c = (TopicPartition("orders", p) for p in range(3))
    upload_segment(store, a, make_segment(0))
    upload_segment(store, a, make_segment(6))
    upload_segment(store, b, make_segment(100))  # its first segments were deleted by the broker
    upload_segment(store, c, make_segment(0))
    store.put(
        LOG_START_OFFSET_CHECKPOINT_KEY, format_offset_checkpoint({a: 8, b: 3, TopicPartition("gone", 0): 9})
    )
    store.put(CLEANER_OFFSET_CHECKPOINT_KEY, format_offset_checkpoint({a: 6, c: 2}))
    store.put("recovery-point-offset-checkpoint", format_offset_checkpoint({a: 12}))

    report = adopt(store, now_ms=clock(), clock=clock)

    head = read_head(store)
    assert head is not None
    states = head.partition_map()
    assert (states[a].log_start_offset, states[a].log_end_offset, states[a].cleaner_checkpoint) == (8, 12, 6)
    assert (states[b].log_start_offset, states[b].cleaner_checkpoint) == (100, None)  # max(3, 100)
    assert (states[c].log_start_offset, states[c].cleaner_checkpoint) == (0, 2)
    ignored = {item.key: item.reason for item in report.result.ignored}
    assert ignored["recovery-point-offset-checkpoint"].startswith("an unknown file at the lake root")
    assert ignored[LOG_START_OFFSET_CHECKPOINT_KEY].startswith(
        "entry gone-0 9 not applied: the partition has no"
    )
    # the first commit rewrote the checkpoint files from the manifest
    assert store.get(LOG_START_OFFSET_CHECKPOINT_KEY) == format_offset_checkpoint({a: 8})
    assert store.get(CLEANER_OFFSET_CHECKPOINT_KEY) == format_offset_checkpoint({a: 6, c: 2})


def test_rule7_a_checkpoint_above_the_log_end_quarantines_the_partition(
    store: ObjectStore, clock: FakeClock
) -> None:
    a, b = TopicPartition("orders", 0), TopicPartition("orders", 1)
    upload_segment(store, a, make_segment(0))  # 0..5: log end 6
    upload_segment(store, b, make_segment(0))
    store.put(LOG_START_OFFSET_CHECKPOINT_KEY, format_offset_checkpoint({a: 7, b: 6}))

    report = adopt(store, now_ms=clock(), clock=clock)

    (item,) = report.result.quarantined
    assert (item.topic_partition, item.key, item.error) == (
        a,
        LOG_START_OFFSET_CHECKPOINT_KEY,
        "OffsetOutOfRangeError",
    )
    assert "log start offset 7" in item.reason
    assert "log end offset 6" in item.reason
    head = read_head(store)
    assert head is not None
    assert [state.topic_partition for state in head.partitions] == [b]
    assert (head.partitions[0].log_start_offset, head.partitions[0].log_end_offset) == (6, 6)  # equal is fine
    ignored = [i.reason for i in report.result.ignored if i.key == LOG_START_OFFSET_CHECKPOINT_KEY]
    assert ignored == [
        "entry orders-0 7 not applied: the partition is quarantined; the first commit rewrites this file "
        "from the manifest, so apply the offset later (delete-records for a log start offset)"
    ]


def test_rule7_a_malformed_checkpoint_file_fails_the_bootstrap(store: ObjectStore, clock: FakeClock) -> None:
    upload_segment(store, TopicPartition("orders", 0), make_segment(0))
    store.put(LOG_START_OFFSET_CHECKPOINT_KEY, b"0\n1\norders 0\n")
    run, base = begin_run(store, now_ms=clock(), operation="adopt", clock=clock)

    with pytest.raises(CheckpointFileError, match=r"log-start-offset-checkpoint line 3: .*Malformed"):
        adopt_objects(store, base=base, run=run)
    with pytest.raises(CheckpointFileError) as caught:
        adopt(store, now_ms=clock(), clock=clock)

    assert read_head(store) is None
    runs = sorted({key.split("/")[2] for key in (m.key for m in store.list("_kafka_segments/runs/"))})
    outcomes = [read_outcome(store, run_id) for run_id in runs]
    assert [o.outcome for o in outcomes if o is not None] == [Outcome.ABORTED]
    assert str(caught.value) in next(o.reason for o in outcomes if o is not None)


def test_a_lake_copied_to_another_backend_is_unchanged(
    store: ObjectStore, clock: FakeClock, tmp_path: Path
) -> None:
    source = LocalStore(tmp_path / "source")
    for tp in (TopicPartition("orders", 0), TopicPartition("orders", 1)):
        upload_segment(source, tp, make_segment(0))
    adopt(source, now_ms=clock(), clock=clock)
    for meta in source.list():
        store.put(meta.key, source.get(meta.key))
    counting = CountingStore(store)

    report = adopt(counting, now_ms=clock(), clock=clock)

    assert report.committed_version is None
    assert report.result.quarantined == ()
    assert read_head(store) == read_head(source)


def test_rule9_adoption_is_linear_in_partitions(tmp_path: Path) -> None:
    """Tens of thousands of partitions and segments that did not change: settled from dicts, without reading
    anything and without scans per partition (a quadratic pass would take minutes here)."""
    count, per_partition = 20_000, 3
    states: list[PartitionState] = []
    listing: list[ObjectMeta] = []
    for partition in range(count):
        tp = TopicPartition("wide", partition)
        entries = tuple(_entry(tp, 10 * i) for i in range(per_partition))
        states.append(PartitionState(tp, 0, 10 * per_partition, entries, run_id="r1"))
        listing.extend(ObjectMeta(entry.key, entry.size, entry.etag, 0) for entry in entries)
    base = Manifest(1, None, "r1", "adopt", 0, 0, partitions=sort_partitions(states))
    run = RunRecord("r2", "adopt", 1, 0, 0)
    store = CountingStore(LocalStore(tmp_path / "empty"))

    started = time.perf_counter()
    result = adopt_objects(store, base=base, run=run, listing=listing)
    elapsed = time.perf_counter() - started

    assert not result.changed
    assert result.partitions == base.partitions
    assert store.reads == {}
    assert elapsed < 15, f"{count} unchanged partitions took {elapsed:.1f} s"


def _entry(tp: TopicPartition, base_offset: int) -> SegmentEntry:
    return SegmentEntry(
        key=f"{tp.dir_name}/{base_offset:020d}.log",
        base_offset=base_offset,
        last_offset=base_offset + 9,
        size=100,
        sha256="0" * 64,
        etag=f"e{base_offset}",
        record_count=10,
        batch_count=1,
        max_timestamp_ms=0,
        first_batch_max_timestamp_ms=0,
        last_modified_ms=0,
        origin=SegmentOrigin.ADOPTED,
        run_id="r1",
    )
