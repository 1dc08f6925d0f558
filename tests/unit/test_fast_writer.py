"""The columnar segment writer (``segment.fast_writer``) against the per-batch reference (``write_segment``).

The property: for any sequence of v2 batches (plain, idempotent, transactional data, COMMIT/ABORT markers,
other and empty control batches, empty batches, every codec, timestamps up and down and -1, LogAppendTime)
and any ``index.interval.bytes``, ``write_segment_columns`` of the joined ``.log`` gives the reference's
``SegmentFiles`` field for field, or raises the same error with the same message. Then one scenario per
append rule (``LogSegment.append``, ``ensureOffsetInRange``, ``updateProducerState``), the fallbacks, and a
real cleaning round.
"""

from __future__ import annotations

import struct
from dataclasses import fields, replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.compaction.output import cleaned_segment_files
from kafka_segments.compaction.results import CleanedSegment
from kafka_segments.compaction.rewrite import clean_round
from kafka_segments.errors import SegmentFullError, SegmentWriteError
from kafka_segments.records import CompressionType, ControlRecordType, EndTransactionMarker, Record
from kafka_segments.records.fast import scan_header_table
from kafka_segments.segment import fast_writer
from kafka_segments.segment.fast_writer import index_entries, write_segment_columns
from kafka_segments.segment.index_sizes import index_sizes
from kafka_segments.segment.transactions import AbortedTxnTracker
from kafka_segments.segment.txn_index import AbortedTxn, build_txn_index
from kafka_segments.segment.writer import SegmentFiles, write_segment
from unit.compaction_helpers import NOW, LogBuilder, legacy_message
from unit.retention_helpers import topic_config
from unit.strategies import ALL_CODECS, BatchSpec, batch_specs, timestamps

pytestmark = pytest.mark.unit

NAME = "seg-under-test"
PRODUCERS = (7, 8, 9)
INT32_MAX = 2**31 - 1


# --- the reference and the comparison ------------------------------------------------------------------


def reference(
    batches: list[bytes], *, base_offset: int, interval: int, ongoing: dict[int, int] | None = None
) -> SegmentFiles:
    return write_segment(
        batches,
        base_offset=base_offset,
        index_interval_bytes=interval,
        segment_index_bytes=None,
        ongoing_txns=ongoing,
        segment=NAME,
        verify_crc=False,
    )


def columns(
    batches: list[bytes], *, base_offset: int, interval: int, ongoing: dict[int, int] | None = None
) -> SegmentFiles:
    return write_segment_columns(
        b"".join(batches),
        base_offset=base_offset,
        index_interval_bytes=interval,
        ongoing_txns=ongoing,
        segment=NAME,
    )


def as_fields(files: SegmentFiles) -> dict[str, Any]:
    """Every field, the open transactions as a plain dict."""
    out = {f.name: getattr(files, f.name) for f in fields(files)}
    out["ongoing_txns"] = dict(files.ongoing_txns)
    return out


def outcome(run: Any, *args: Any, **kwargs: Any) -> dict[str, Any] | tuple[type[BaseException], str]:
    try:
        return as_fields(run(*args, **kwargs))
    except (SegmentWriteError, ValueError) as exc:
        return type(exc), str(exc)


def assert_same(batches: list[bytes], **options: Any) -> dict[str, Any] | tuple[type[BaseException], str]:
    expected = outcome(reference, batches, **options)
    assert outcome(columns, batches, **options) == expected
    return expected


# --- strategies ----------------------------------------------------------------------------------------


def marker_spec(kind: ControlRecordType, producer_id: int, timestamp: int) -> BatchSpec:
    """A COMMIT/ABORT marker batch at offset 0 (``MemoryRecords.writeEndTransactionalMarker``)."""
    marker = EndTransactionMarker(kind, 0)
    record = Record(0, timestamp, marker.key_bytes(), marker.value_bytes())
    return BatchSpec(
        records=(record,),
        base_offset=0,
        last_offset=0,
        producer_id=producer_id,
        producer_epoch=0,
        is_transactional=True,
        is_control=True,
    )


@st.composite
def any_batch(draw: st.DrawFn) -> BatchSpec:
    """One batch of any kind the round can write, producers drawn from a small pool so transactions meet."""
    kind = draw(st.sampled_from(["plain", "idempotent", "transactional", "marker", "control"]))
    producer = draw(st.sampled_from(PRODUCERS))
    if kind == "marker":
        marker = draw(st.sampled_from([ControlRecordType.COMMIT, ControlRecordType.ABORT]))
        return marker_spec(marker, producer, draw(timestamps))
    spec = draw(batch_specs(codecs=ALL_CODECS, min_records=0, max_records=4, control=kind == "control"))
    if kind == "plain":
        return replace(spec, producer_id=-1, producer_epoch=-1, base_sequence=-1, is_transactional=False)
    sequence = -1 if kind == "control" else draw(st.integers(0, 1000))
    return replace(
        spec,
        producer_id=producer,
        producer_epoch=0,
        base_sequence=sequence,
        is_transactional=kind != "idempotent",
    )


@st.composite
def segments(draw: st.DrawFn, *, misplaced: bool | None = None) -> tuple[list[bytes], int]:
    """(batches in offset order, the segment's base offset), sometimes (``misplaced``: always, never) with
    one batch moved, mostly to the edges of the offset rules."""
    first = draw(st.just(0) | st.integers(0, 2**40) | st.integers(2**62, 2**62 + 2**40))
    base_offset = max(0, first - draw(st.just(0) | st.integers(0, 50)))
    specs: list[BatchSpec] = []
    next_offset = first
    for _ in range(draw(st.integers(0, 12))):
        gap = draw(st.just(0) | st.integers(0, 1000))
        spec = draw(any_batch()).shifted(next_offset + gap)
        specs.append(spec)
        next_offset = spec.last_offset + 1
    if misplaced is None:
        misplaced = draw(st.integers(0, 4)) == 0
    if specs and misplaced:  # one batch moved: overlapping, below the base, overflowing, or just fitting
        index = draw(st.integers(0, len(specs) - 1))
        previous_last = specs[index - 1].last_offset if index else base_offset - 1
        highest = base_offset + INT32_MAX - (specs[index].last_offset - specs[index].base_offset)
        edges = [previous_last - 1, previous_last, previous_last + 1, base_offset - 1, highest, highest + 1]
        to = draw(
            st.sampled_from(edges)
            | st.sampled_from(edges)
            | st.integers(base_offset - 3, next_offset)
            | st.integers(highest - 100, highest + 100)
        )
        specs[index] = specs[index].shifted(max(0, to))
    return [spec.build() for spec in specs], base_offset


intervals = st.integers(0, 300) | st.integers(0, 5000) | st.just(2**70)


# --- the property --------------------------------------------------------------------------------------


@given(segment=segments(), interval=intervals, open_producers=st.sets(st.sampled_from(PRODUCERS)))
def test_columnar_writer_equals_the_per_batch_writer(
    segment: tuple[list[bytes], int], interval: int, open_producers: set[int]
) -> None:
    batches, base_offset = segment
    ongoing = {pid: max(0, base_offset - 10 * pid) for pid in sorted(open_producers)}
    assert_same(batches, base_offset=base_offset, interval=interval, ongoing=ongoing)


@given(segment=segments(misplaced=True), interval=st.just(0) | intervals)
def test_offset_rule_errors_equal_the_per_batch_writers(
    segment: tuple[list[bytes], int], interval: int
) -> None:
    batches, base_offset = segment
    assert_same(batches, base_offset=base_offset, interval=interval)


@given(segment=segments(misplaced=False), interval=intervals)
def test_index_entries_count_what_index_sizes_counts(segment: tuple[list[bytes], int], interval: int) -> None:
    data = b"".join(segment[0])
    entries = index_entries(scan_header_table(data), index_interval_bytes=interval)
    sizes = index_sizes(data, index_interval_bytes=interval)
    assert (len(entries.offset_rows) * 8, len(entries.time_rows) * 12) == (
        sizes.offset_index_bytes,
        sizes.time_index_bytes,
    )


# --- scenarios: the append rules ------------------------------------------------------------------------


def batch(offset: int, *stamps: int, count: int = 1, codec: CompressionType = CompressionType.NONE) -> bytes:
    return BatchSpec(
        records=tuple(Record(offset + i, ts, b"k", b"v") for i, ts in enumerate(stamps or (NOW,) * count)),
        base_offset=offset,
        last_offset=offset + max(len(stamps), count) - 1,
        compression=codec,
    ).build()


def txn(offset: int, producer_id: int) -> bytes:
    spec = BatchSpec(
        records=(Record(offset, NOW, b"k", b"v"),),
        base_offset=offset,
        last_offset=offset,
        producer_id=producer_id,
        producer_epoch=0,
        base_sequence=0,
        is_transactional=True,
    )
    return spec.build()


def end(offset: int, producer_id: int, kind: ControlRecordType) -> bytes:
    return marker_spec(kind, producer_id, NOW).shifted(offset).build()


def test_empty_log_gives_empty_indexes_and_the_base_offset_defaults() -> None:
    files = columns([], base_offset=42, interval=0)
    assert (files.log, files.offset_index, files.time_index, files.txn_index) == (b"", b"", b"", b"")
    assert (files.batch_count, files.next_offset, files.largest_timestamp) == (0, 42, -1)
    assert files.offset_of_largest_timestamp == 42
    assert_same([], base_offset=42, interval=0)


def test_index_entries_follow_bytes_since_last_entry_and_the_closing_time_entry() -> None:
    batches = [batch(i, NOW + (i % 3)) for i in range(10)]  # 70 bytes each
    files = columns(batches, base_offset=0, interval=139)
    # entries before batches 2 (140 > 139 after two batches), 4, 6, 8; the counter restarts at each entry
    assert [struct.unpack_from(">ii", files.offset_index, i) for i in range(0, 32, 8)] == [
        (2, 140),
        (4, 280),
        (6, 420),
        (8, 560),
    ]
    # (max so far, last offset of the batch carrying it), appended only when above the last entry
    assert [struct.unpack_from(">qi", files.time_index, i) for i in range(0, len(files.time_index), 12)] == [
        (NOW + 2, 2)
    ]
    assert_same(batches, base_offset=0, interval=139)


def test_largest_timestamp_keeps_the_first_batch_that_reached_it() -> None:
    batches = [batch(0, NOW), batch(1, NOW + 5), batch(2, NOW + 5), batch(3, NOW - 1), batch(4, -1)]
    files = columns(batches, base_offset=0, interval=0)
    assert (files.largest_timestamp, files.offset_of_largest_timestamp) == (NOW + 5, 1)
    assert_same(batches, base_offset=0, interval=0)


def test_no_timestamp_batches_leave_the_time_index_empty() -> None:
    batches = [batch(0, -1), batch(1, -1, -1), batch(3, -1)]
    files = columns(batches, base_offset=0, interval=0)
    assert (files.time_index, files.largest_timestamp, files.offset_of_largest_timestamp) == (b"", -1, 0)
    assert len(files.offset_index) == 16
    assert_same(batches, base_offset=0, interval=0)


def test_batch_below_the_segment_base_offset_is_refused() -> None:
    expected = assert_same([batch(5), batch(6)], base_offset=6, interval=0)
    assert expected == (
        SegmentWriteError,
        f"{NAME}: batch 0 (offsets 5..5): below the segment base offset 6",
    )


def test_batch_not_above_the_previous_last_offset_is_refused() -> None:
    expected = assert_same([batch(0, count=3), batch(3), batch(3)], base_offset=0, interval=0)
    assert expected == (
        SegmentWriteError,
        f"{NAME}: batch 2 (offsets 3..3): not above the previous batch's last offset 3",
    )


def test_last_offset_beyond_the_int32_relative_offset_needs_a_new_segment() -> None:
    expected = assert_same([batch(10), batch(10 + INT32_MAX, count=2)], base_offset=10, interval=0)
    assert expected[0] is SegmentFullError
    assert "batch 1" in expected[1]
    assert "overflows the int32 relative offset of base offset 10" in expected[1]
    # the largest relative offset itself fits
    assert isinstance(assert_same([batch(10), batch(10 + INT32_MAX)], base_offset=10, interval=0), dict)


def test_base_offset_beyond_int64_reports_the_first_batch_below_it() -> None:
    expected = assert_same([batch(0)], base_offset=2**63, interval=0)
    assert expected[0] is SegmentWriteError


def test_negative_options_are_refused_as_the_writer_refuses_them() -> None:
    assert assert_same([batch(0)], base_offset=-1, interval=0)[0] is ValueError
    assert assert_same([batch(0)], base_offset=0, interval=-1)[0] is ValueError


# --- scenarios: transactions ----------------------------------------------------------------------------


def test_aborted_transaction_is_indexed_with_the_lso_of_the_other_open_transaction() -> None:
    batches = [txn(0, 1), txn(1, 2), txn(2, 1), end(3, 1, ControlRecordType.ABORT), txn(4, 1)]
    files = columns(batches, base_offset=0, interval=0)
    assert files.aborted_txns == (AbortedTxn(1, 0, 3, 1),)
    assert files.txn_index == build_txn_index(files.aborted_txns, base_offset=0)
    assert dict(files.ongoing_txns) == {2: 1, 1: 4}
    assert_same(batches, base_offset=0, interval=0)


def test_transaction_open_before_the_segment_is_aborted_in_it() -> None:
    batches = [txn(10, 1), end(11, 2, ControlRecordType.ABORT), end(12, 1, ControlRecordType.COMMIT)]
    files = columns(batches, base_offset=10, interval=0, ongoing={2: 3})
    assert files.aborted_txns == (AbortedTxn(2, 3, 11, 10),)
    assert dict(files.ongoing_txns) == {}
    assert_same(batches, base_offset=10, interval=0, ongoing={2: 3})


def test_invalid_marker_key_is_reported_for_its_batch() -> None:
    bad = replace(marker_spec(ControlRecordType.ABORT, 1, NOW), records=(Record(0, NOW, b"x", b""),))
    batches = [txn(0, 1), bad.shifted(1).build()]
    expected = assert_same(batches, base_offset=0, interval=0)
    assert expected[0] is SegmentWriteError
    assert expected[1].startswith(f"{NAME}: batch 1: control batch has an invalid control record key")


def test_the_first_broken_rule_wins_between_offsets_and_markers() -> None:
    bad = replace(marker_spec(ControlRecordType.ABORT, 1, NOW), records=(Record(0, NOW, b"x", b""),))
    marker_first = [txn(0, 1), bad.shifted(1).build(), batch(1)]
    assert "batch 1: control batch" in assert_same(marker_first, base_offset=0, interval=0)[1]
    offsets_first = [txn(0, 1), batch(0), bad.shifted(2).build()]
    assert "batch 1 (offsets 0..0): not above" in assert_same(offsets_first, base_offset=0, interval=0)[1]


def test_only_batches_that_can_change_producer_state_reach_python(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    observe = AbortedTxnTracker.observe

    def counting(self: AbortedTxnTracker, entry: Any) -> AbortedTxn | None:
        seen.append(entry.header.base_offset)
        return observe(self, entry)

    monkeypatch.setattr(AbortedTxnTracker, "observe", counting)
    plain = [batch(i) for i in range(50)]
    columns(plain, base_offset=0, interval=0)
    assert seen == []
    # two producers, ten data batches each per transaction, interleaved; then their markers
    batches = [txn(i, 1 + i % 2) for i in range(20)]
    batches += [end(20, 1, ControlRecordType.ABORT), end(21, 2, ControlRecordType.COMMIT), txn(22, 1)]
    files = columns(batches, base_offset=0, interval=0)
    assert seen == [0, 1, 20, 21, 22]  # each producer's first data batch, the markers, the next transaction
    assert files.aborted_txns == (AbortedTxn(1, 0, 20, 1),)
    monkeypatch.setattr(AbortedTxnTracker, "observe", observe)
    assert_same(batches, base_offset=0, interval=0)


# --- fallbacks -----------------------------------------------------------------------------------------


def test_damaged_log_reports_what_the_writer_reports_for_the_damaged_batch() -> None:
    batches = [batch(0), batch(1, codec=CompressionType.LZ4), batch(2)[:-5]]
    expected = assert_same(batches, base_offset=0, interval=0)
    assert expected[0] is SegmentWriteError
    position = len(batches[0]) + len(batches[1])
    assert expected[1].startswith(f"{NAME}: batch 2 (at byte {position}) is not a valid entry")


def test_offset_error_before_the_damage_is_reported_first() -> None:
    batches = [batch(5), batch(5), batch(6)[:-1]]
    assert "batch 1 (offsets 5..5): not above" in assert_same(batches, base_offset=0, interval=0)[1]


def test_legacy_entries_are_written_by_the_per_batch_writer() -> None:
    batches = [legacy_message(1, 0, b"k", b"v"), legacy_message(0, 1, b"k", b"w"), batch(2)]
    assert isinstance(assert_same(batches, base_offset=0, interval=0), dict)


def test_index_position_beyond_int32_is_refused() -> None:
    relative = np.array([1], dtype=np.int64)
    with pytest.raises(SegmentWriteError, match=r"seg: an index entry's position 2147483648"):
        fast_writer._offset_index_bytes(relative, np.array([2**31], dtype=np.int64), "seg")
    assert fast_writer._offset_index_bytes(relative, np.array([INT32_MAX], dtype=np.int64), "seg") == (
        struct.pack(">ii", 1, INT32_MAX)
    )


# --- the cleaned segment of a round ----------------------------------------------------------------------


def old_cleaned_segment_files(cleaned: CleanedSegment, interval: int) -> SegmentFiles:
    """``cleaned_segment_files`` as it was: the per-batch writer, then the round's aborts."""
    files = write_segment(
        cleaned.batches,
        base_offset=cleaned.base_offset,
        index_interval_bytes=interval,
        segment_index_bytes=None,
        segment=f"cleaned {cleaned.base_offset}",
        verify_crc=False,
    )
    txn_index = build_txn_index(cleaned.aborted, base_offset=cleaned.base_offset)
    return replace(files, txn_index=txn_index, aborted_txns=cleaned.aborted)


@pytest.mark.parametrize("interval", [0, 100, 4096])
def test_cleaned_segment_files_of_a_round_equal_the_per_batch_writers(interval: int) -> None:
    log = LogBuilder()
    for round_ in range(3):
        for key in range(30):
            codec = (CompressionType.NONE, CompressionType.LZ4, CompressionType.ZSTD)[key % 3]
            log.rec(key % 7, round_ * 100 + key, codec=codec, timestamp=NOW + (key * 37) % 11)
        log.txn(1, [1, 2, 3])
        log.txn(2, [4, 5])
        log.txn(1, [6])
        log.abort(1)
        log.tomb(3)
        log.commit(2)
        log.roll()
    log.rec(99, 99)
    config = topic_config(cleanup_policy="compact", producer_id_expiration_ms=2**63 - 1)
    config = replace(config, index_interval_bytes=interval)
    segments = log.segments()
    result = clean_round(
        segments, first_dirty=0, end_offset=segments[-1].base_offset, config=config, now_ms=NOW
    )
    assert result.segments
    for cleaned in result.segments:
        expected = as_fields(old_cleaned_segment_files(cleaned, interval))
        assert as_fields(cleaned_segment_files(cleaned, config)) == expected
    assert any(cleaned.aborted for cleaned in result.segments)


def test_cleaned_segment_item_holding_two_batches_is_refused_as_before() -> None:
    cleaned = CleanedSegment(
        base_offset=0, batches=(batch(0) + batch(1),), aborted=(), last_modified_ms=NOW, sources=()
    )
    config = topic_config(cleanup_policy="compact")
    with pytest.raises(SegmentWriteError, match="batch 0 holds 140 bytes but its entry declares 70"):
        cleaned_segment_files(cleaned, config)
