"""Adoption rules 2-6 and 8 on both backends: candidates, entries, placing, damage, live objects, no reads
when nothing changed."""

from __future__ import annotations

import dataclasses

import pytest
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.adoption import adopt_objects
from kafka_segments.lake.adoption_report import AdoptionReport
from kafka_segments.lake.commit import commit_run
from kafka_segments.lake.history import read_head
from kafka_segments.lake.run_folder import read_outcome
from kafka_segments.lake.runs import Outcome
from kafka_segments.lake.staging import begin_run, build_manifest, retire, stage_manifest
from kafka_segments.state import PartitionState, SegmentOrigin
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment, upload_segment

from lake.adoption_helpers import (
    CountingStore,
    batch_position,
    commit_marker,
    flip_byte,
    plain_batch,
    prefix_bytes,
    segment_of,
    txn_batch,
)

pytestmark = pytest.mark.lake

TP = TopicPartition("orders", 0)
OTHER = TopicPartition("orders", 1)


def _adopt(store: ObjectStore, clock: FakeClock) -> AdoptionReport:
    clock.advance(1000)
    return adopt(store, now_ms=clock(), clock=clock)


def _state(store: ObjectStore, tp: TopicPartition = TP) -> PartitionState:
    head = read_head(store)
    state = None if head is None else head.partition(tp)
    if state is None:
        raise AssertionError(f"{tp} is not in the head manifest")
    return state


def _head_partitions(store: ObjectStore) -> tuple[PartitionState, ...]:
    head = read_head(store)
    return () if head is None else head.partitions


# ------------------------------------------------------------------------------------------ rules 2 and 3


def test_rule2_unknown_plain_logs_are_adopted_and_known_ones_are_not_read(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_segment(store, TP, make_segment(0))
    first = _adopt(store, clock)
    assert first.committed_version == 1
    second_key = upload_segment(store, TP, make_segment(6))
    counting = CountingStore(store)

    report = _adopt(counting, clock)

    assert [entry.key for entry in report.result.adopted] == [second_key]
    assert counting.body_reads() == {second_key: 1}
    assert report.result.bytes_read == make_segment(6).size
    assert [s.base_offset for s in _state(store).segments] == [0, 6]


def test_rule2_retired_objects_are_known_and_not_adopted_again(store: ObjectStore, clock: FakeClock) -> None:
    upload_segment(store, TP, make_segment(0))
    upload_segment(store, TP, make_segment(6))
    _adopt(store, clock)
    run, base = begin_run(store, now_ms=clock(), operation="retention", clock=clock)
    assert base is not None
    state = _state(store)
    gone = state.segments[0]
    kept = dataclasses.replace(state, log_start_offset=6, segments=state.segments[1:], run_id=run.run_id)
    retired = retire(gone, TP, run, reason="retention.ms", delete_delay_ms=60_000)
    stage_manifest(store, run, build_manifest(run, base=base, partitions=[kept], newly_retired=[retired]))
    commit_run(store, run.run_id, clock=clock)
    counting = CountingStore(store)

    report = _adopt(counting, clock)

    assert report.committed_version is None
    assert counting.body_reads() == {}
    assert report.result.ignored == ()


def test_rule3_entry_metadata_comes_from_the_listing_and_the_scan(
    store: ObjectStore, clock: FakeClock
) -> None:
    files = make_segment(10, batches=4, records_per_batch=3)
    key = upload_segment(store, TP, files)
    meta = store.head(key)

    report = _adopt(store, clock)

    (entry,) = report.result.adopted
    assert entry.key == key
    assert (entry.base_offset, entry.last_offset, entry.next_offset) == (10, 21, 22)
    assert (entry.size, entry.etag, entry.last_modified_ms) == (files.size, meta.etag, meta.last_modified_ms)
    assert (entry.record_count, entry.batch_count) == (12, 4)
    assert entry.origin is SegmentOrigin.ADOPTED
    assert entry.run_id == report.run_id
    state = _state(store)
    assert (state.log_start_offset, state.log_end_offset, state.run_id) == (10, 22, report.run_id)


def test_rule3_an_empty_log_is_a_valid_segment(store: ObjectStore, clock: FakeClock) -> None:
    upload_segment(store, TP, make_segment(0))
    empty = segment_of([], base_offset=6)
    upload_segment(store, TP, empty)

    report = _adopt(store, clock)

    assert [entry.last_offset for entry in report.result.adopted] == [5, None]
    state = _state(store)
    assert state.log_end_offset == 6
    assert state.active_segment is not None
    assert state.active_segment.is_empty
    assert state.active_segment.max_timestamp_ms == -1


# ------------------------------------------------------------------------------------------------- rule 4


def test_rule4_candidates_append_at_or_after_the_log_end_gaps_allowed(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_segment(store, TP, make_segment(0))
    _adopt(store, clock)
    upload_segment(store, TP, make_segment(100))  # a gap 6..99, as compaction leaves
    upload_segment(store, TP, segment_of([], base_offset=200))  # an empty active segment after a gap

    report = _adopt(store, clock)

    assert [entry.base_offset for entry in report.result.adopted] == [100, 200]
    state = _state(store)
    assert (state.log_start_offset, state.log_end_offset) == (0, 200)


def test_rule4_a_candidate_below_the_log_start_offset_is_ignored(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_segment(store, TP, make_segment(0))
    upload_segment(store, TP, make_segment(6))
    _adopt(store, clock)
    run, base = begin_run(store, now_ms=clock(), operation="retention", clock=clock)
    state = _state(store)
    gone = state.segments[0]
    kept = dataclasses.replace(state, log_start_offset=6, segments=state.segments[1:], run_id=run.run_id)
    stage_manifest(store, run, build_manifest(run, base=base, partitions=[kept], present_keys=set()))
    commit_run(store, run.run_id, clock=clock)  # retired and already collected: the object is unknown again

    report = _adopt(store, clock)

    assert report.committed_version is None
    assert [(item.key, item.reason.split(":")[0]) for item in report.result.ignored] == [
        (gone.key, "below the log start offset 6 (offsets [0, 5])")
    ]
    assert report.result.quarantined == ()


def test_rule4_an_overlap_with_live_offsets_quarantines_only_that_partition(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_segment(store, TP, make_segment(0, batches=5))  # offsets 0..9
    _adopt(store, clock)
    overlapping = upload_segment(store, TP, make_segment(4))  # 4..9
    after = upload_segment(store, TP, make_segment(10))
    other = upload_segment(store, OTHER, make_segment(0))

    report = _adopt(store, clock)

    (item,) = report.result.quarantined
    assert (item.topic_partition, item.key, item.error) == (TP, overlapping, "SegmentOverlapError")
    assert "overlaps live offsets [0, 9] of orders-0/00000000000000000000.log" in item.reason
    assert [entry.key for entry in report.result.adopted] == [other]
    assert [s.base_offset for s in _state(store).segments] == [0]  # `after` is not adopted either
    assert after not in {s.key for s in _state(store).segments}


def test_rule4_an_overlap_between_two_candidates_quarantines(store: ObjectStore, clock: FakeClock) -> None:
    upload_segment(store, TP, make_segment(0, batches=5))  # 0..9
    second = upload_segment(store, TP, make_segment(8))  # 8..13

    report = _adopt(store, clock)

    (item,) = report.result.quarantined
    assert item.key == second
    assert (
        "overlaps live offsets [0, 9] of orders-0/00000000000000000000.log (also new in this run)"
        in item.reason
    )
    assert report.committed_version is None
    assert read_head(store) is None


def test_rule4_open_transactions_advance_through_adopted_segments(
    store: ObjectStore, clock: FakeClock
) -> None:
    producer = 77
    first = segment_of([plain_batch(0), txn_batch(2, 3, producer_id=producer), plain_batch(5)])
    upload_segment(store, TP, first)
    _adopt(store, clock)
    state = _state(store)
    assert [(t.producer_id, t.first_offset) for t in state.open_transactions] == [(producer, 2)]
    assert (state.last_stable_offset, state.log_end_offset) == (2, 7)
    upload_segment(store, TP, segment_of([commit_marker(7, producer_id=producer), plain_batch(8)]))

    _adopt(store, clock)

    state = _state(store)
    assert state.open_transactions == ()
    assert state.last_stable_offset == state.log_end_offset == 10


# ------------------------------------------------------------------------------------------------- rule 5


def test_rule5_a_corrupt_candidate_quarantines_its_partition_with_key_and_position(
    store: ObjectStore, clock: FakeClock
) -> None:
    files = make_segment(0, batches=3)
    position = batch_position(files.log, 1)
    key = f"{TP.dir_name}/00000000000000000000.log"
    store.put(key, flip_byte(files.log, position + 40))  # inside batch 1's CRC-covered bytes
    healthy = upload_segment(store, OTHER, make_segment(0))

    report = _adopt(store, clock)

    (item,) = report.result.quarantined
    assert (item.topic_partition, item.key, item.position, item.error) == (
        TP,
        key,
        position,
        "InvalidCrcError",
    )
    assert f"at byte {position}" in item.reason
    assert [entry.key for entry in report.result.adopted] == [healthy]
    assert store.get(key) == flip_byte(files.log, position + 40)  # never rewritten
    text = report.to_text()
    assert f"{key} at byte {position}: InvalidCrcError" in text


def test_rule5_a_truncated_candidate_quarantines_with_the_position_of_the_cut_entry(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_segment(store, TP, make_segment(0))
    _adopt(store, clock)
    files = make_segment(6, batches=3)
    cut = batch_position(files.log, 2)
    key = f"{TP.dir_name}/00000000000000000006.log"
    store.put(key, files.log[: cut + 20])
    upload_segment(store, TP, make_segment(12))  # healthy, but its partition is quarantined

    report = _adopt(store, clock)

    (item,) = report.result.quarantined
    assert (item.key, item.position, item.error) == (key, cut, "TruncatedSegmentError")
    assert report.committed_version is None
    assert report.result.adopted == ()
    assert _state(store).log_end_offset == 6


def test_rule5_offsets_below_the_name_quarantine_as_a_layout_error(
    store: ObjectStore, clock: FakeClock
) -> None:
    key = f"{TP.dir_name}/00000000000000000005.log"
    store.put(key, make_segment(0).log)  # named 5, first batch at 0

    report = _adopt(store, clock)

    (item,) = report.result.quarantined
    assert (item.key, item.position, item.error) == (key, 0, "SegmentLayoutError")


def test_rule5_a_candidate_that_disappeared_is_ignored(store: ObjectStore, clock: FakeClock) -> None:
    kept = upload_segment(store, TP, make_segment(0))
    gone = upload_segment(store, OTHER, make_segment(0))
    listing = list(store.list())
    store.delete(gone)
    run, base = begin_run(store, now_ms=clock(), operation="adopt", clock=clock)

    result = adopt_objects(store, base=base, run=run, listing=listing)

    assert [entry.key for entry in result.adopted] == [kept]
    assert [(item.key, item.reason.split(" (")[0]) for item in result.ignored] == [
        (gone, "disappeared during the run")
    ]
    assert result.quarantined == ()


def test_rule5_an_object_changing_while_read_quarantines_for_this_run(
    store: ObjectStore, clock: FakeClock
) -> None:
    key = upload_segment(store, TP, make_segment(0))
    listing = [dataclasses.replace(m, size=m.size - 10) if m.key == key else m for m in store.list()]
    run, base = begin_run(store, now_ms=clock(), operation="adopt", clock=clock)

    result = adopt_objects(store, base=base, run=run, listing=listing)

    (item,) = result.quarantined
    assert (item.key, item.error) == (key, "SegmentObjectMismatchError")
    assert item.reason.startswith("changed while this run read it")
    assert not result.changed


def test_reads_run_in_parallel_and_need_a_worker(store: ObjectStore, clock: FakeClock) -> None:
    keys = [
        upload_segment(store, TopicPartition("many", p), make_segment(0), with_indexes=False)
        for p in range(9)
    ]
    run, base = begin_run(store, now_ms=clock(), operation="adopt", clock=clock)

    parallel = adopt_objects(store, base=base, run=run, max_workers=4)
    serial = adopt_objects(store, base=base, run=run, max_workers=1)

    assert [entry.key for entry in parallel.adopted] == keys
    assert parallel == serial
    assert parallel.bytes_read == 9 * make_segment(0).size
    with pytest.raises(ValueError, match="max_workers must be at least 1"):
        adopt_objects(store, base=base, run=run, max_workers=0)


# ------------------------------------------------------------------------------------------------- rule 6


def test_rule6_an_active_segment_that_grew_is_regrown(store: ObjectStore, clock: FakeClock) -> None:
    producer = 9
    full = segment_of(
        [plain_batch(0), txn_batch(2, 2, producer_id=producer), commit_marker(4, producer_id=producer)]
    )
    key = f"{TP.dir_name}/00000000000000000000.log"
    store.put(key, prefix_bytes(full.log, 2))  # the broker's active segment while the transaction is open
    _adopt(store, clock)
    before = _state(store)
    assert (before.log_end_offset, before.last_stable_offset) == (4, 2)
    original = before.segments[0]
    store.put(key, full.log)  # the sync uploads it again, grown; and the segment rolled since
    rolled = upload_segment(store, TP, make_segment(5))

    report = _adopt(store, clock)

    (regrown,) = report.result.regrown
    assert [entry.key for entry in report.result.adopted] == [rolled]
    assert (regrown.key, regrown.size, regrown.last_offset) == (key, full.size, 4)
    assert regrown.last_modified_ms == original.last_modified_ms
    assert regrown.etag == store.head(key).etag
    assert regrown.origin is SegmentOrigin.ADOPTED
    assert regrown.run_id == report.run_id
    state = _state(store)
    assert state.open_transactions == ()
    assert (state.log_end_offset, state.last_stable_offset) == (11, 11)
    assert "~ orders-0/00000000000000000000.log" in report.to_text()


def test_rule6_an_empty_active_segment_that_filled_up_is_regrown(
    store: ObjectStore, clock: FakeClock
) -> None:
    upload_segment(store, TP, make_segment(0))
    key = upload_segment(store, TP, segment_of([], base_offset=6))
    _adopt(store, clock)
    store.put(key, make_segment(6).log)

    report = _adopt(store, clock)

    (regrown,) = report.result.regrown
    assert (regrown.key, regrown.base_offset, regrown.last_offset) == (key, 6, 11)
    assert report.result.adopted == ()
    assert _state(store).log_end_offset == 12


def test_rule6_a_regrown_segment_with_a_damaged_tail_quarantines(
    store: ObjectStore, clock: FakeClock
) -> None:
    full = make_segment(0, batches=3)
    key = f"{TP.dir_name}/00000000000000000000.log"
    store.put(key, prefix_bytes(full.log, 1))
    _adopt(store, clock)
    position = batch_position(full.log, 2)
    store.put(key, flip_byte(full.log, position + 40))

    report = _adopt(store, clock)

    (item,) = report.result.quarantined
    assert (item.key, item.position, item.error) == (key, position, "InvalidCrcError")
    assert "restore them, or upload an intact longer copy" in item.reason
    assert _state(store).log_end_offset == 2


def test_rule6_same_bytes_under_another_etag_are_unchanged(store: ObjectStore, clock: FakeClock) -> None:
    key = upload_segment(store, TP, make_segment(0))
    _adopt(store, clock)
    listing = [dataclasses.replace(m, etag="copied-elsewhere") if m.key == key else m for m in store.list()]
    run, base = begin_run(store, now_ms=clock(), operation="adopt", clock=clock)
    counting = CountingStore(store)

    result = adopt_objects(counting, base=base, run=run, listing=listing)

    assert not result.changed
    assert result.quarantined == ()
    assert counting.body_reads() == {key: 1}  # compared by sha256
    assert result.partitions == _head_partitions(store)


@pytest.mark.parametrize(
    "how", ["non-last segment grew", "same size, other bytes", "shrank", "prefix differs"]
)
def test_rule6_a_changed_live_segment_quarantines(store: ObjectStore, clock: FakeClock, how: str) -> None:
    first = make_segment(0)
    second = make_segment(6)
    upload_segment(store, TP, first)
    upload_segment(store, TP, second)
    other = upload_segment(store, OTHER, make_segment(0))
    _adopt(store, clock)
    key, data = {
        "non-last segment grew": (first, first.log + make_segment(6).log),
        "same size, other bytes": (first, flip_byte(first.log, 30)),
        "shrank": (second, prefix_bytes(second.log, 1)),
        "prefix differs": (second, make_segment(6, key_prefix="x").log + plain_batch(12)),
    }[how]
    log_key = f"{TP.dir_name}/{key.base_offset:020d}.log"
    store.put(log_key, data)
    more = upload_segment(store, OTHER, make_segment(6))

    report = _adopt(store, clock)

    (item,) = report.result.quarantined
    assert (item.topic_partition, item.key, item.error) == (TP, log_key, "SegmentObjectMismatchError")
    assert item.reason.startswith("changed after adoption")
    assert [entry.key for entry in report.result.adopted] == [more]
    assert [s.key for s in _state(store, OTHER).segments] == [other, more]
    assert _state(store).log_end_offset == 12


def test_rule6_a_missing_live_object_quarantines(store: ObjectStore, clock: FakeClock) -> None:
    key = upload_segment(store, TP, make_segment(0))
    _adopt(store, clock)
    store.delete(key)
    upload_segment(store, TP, make_segment(6))
    counting = CountingStore(store)

    report = _adopt(counting, clock)

    (item,) = report.result.quarantined
    assert (item.key, item.position, item.error) == (key, None, "SegmentObjectMismatchError")
    assert item.reason.startswith("live segment object missing")
    assert counting.body_reads() == {}  # a quarantined partition reads nothing more
    assert report.committed_version is None


# ------------------------------------------------------------------------------------------------- rule 8


def test_rule8_a_second_adopt_with_nothing_new_commits_nothing_and_reads_no_bodies(
    store: ObjectStore, clock: FakeClock
) -> None:
    for tp in (TP, OTHER):
        upload_segment(store, tp, make_segment(0))
        upload_segment(store, tp, make_segment(6))
    first = _adopt(store, clock)
    counting = CountingStore(store)

    second = _adopt(counting, clock)

    assert (first.committed_version, second.committed_version) == (1, None)
    assert counting.body_reads() == {}
    assert counting.body_reads(suffix=".index") == {}
    assert second.result.bytes_read == 0
    assert second.result.partitions == _head_partitions(store)
    outcome = read_outcome(store, second.run_id)
    assert outcome is not None
    assert (outcome.outcome, outcome.reason) == (Outcome.ABORTED, "nothing to adopt")
