"""Header-only segment summaries: offsets, counts and timestamps from real segments, refusals of damaged or
impossible segments, and the open transactions carried from segment to segment."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.demo import SAMPLE_START_MS, sample_topic
from kafka_segments.errors import CorruptRecordError, InvalidCrcError, TruncatedSegmentError
from kafka_segments.lake.scan import SegmentLayoutError, advance_open_transactions, summarize_segment
from kafka_segments.records.builder import build_batch
from kafka_segments.records.control import (
    ControlRecordError,
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker,
)
from kafka_segments.records.crc import crc32c
from kafka_segments.records.fast import HeaderTable
from kafka_segments.records.log import read_entry
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import write_segments
from kafka_segments.state import OpenTransaction, SegmentOrigin
from kit import T0, make_segment
from unit.strategies import BatchSpec, segment_bytes, segment_specs

pytestmark = pytest.mark.unit

LEGACY = Path(__file__).resolve().parents[1] / "data" / "legacy"
KEY = "s3://lake/orders-0/00000000000000000000.log"


# -------------------------------------------------------------------------------------------------- summaries


def test_summary_of_the_sample_topics_first_segment() -> None:
    """Five batches of four records, one per codec, record timestamps one second apart."""
    first = sample_topic()[0].files
    summary = summarize_segment(first.log, key=KEY, base_offset=0)
    assert (summary.last_offset, summary.record_count, summary.batch_count) == (19, 20, 5)
    assert summary.max_timestamp_ms == SAMPLE_START_MS + 19_000
    assert summary.first_batch_max_timestamp_ms == SAMPLE_START_MS + 3_000
    assert summary.size == len(first.log)
    assert summary.sha256 == hashlib.sha256(first.log).hexdigest()


def test_summary_of_a_segment_with_transactions_and_log_append_time() -> None:
    """Committed data, a COMMIT marker, aborted data, an ABORT marker, then a LogAppendTime batch whose
    records carry timestamp 0: the batch's maxTimestamp is the append time."""
    second = sample_topic()[1].files
    summary = summarize_segment(second.log, key=KEY, base_offset=20)
    assert (summary.last_offset, summary.record_count, summary.batch_count) == (28, 9, 5)
    assert summary.max_timestamp_ms == SAMPLE_START_MS + 100_020 == second.largest_timestamp
    assert summary.first_batch_max_timestamp_ms == SAMPLE_START_MS + 100_002
    assert advance_open_transactions((), summary.table) == ()


def test_summary_agrees_with_the_segment_writer() -> None:
    for sample in sample_topic(partitions=1):
        files = sample.files
        summary = summarize_segment(files.log, key=KEY, base_offset=files.base_offset)
        assert summary.last_offset == files.last_offset
        assert (summary.record_count, summary.batch_count) == (files.record_count, files.batch_count)
        assert summary.max_timestamp_ms == files.largest_timestamp


def test_summary_becomes_a_manifest_entry() -> None:
    files = make_segment(100, batches=2, records_per_batch=3)
    summary = summarize_segment(files.log, key=KEY, base_offset=100)
    entry = summary.entry(
        key="orders-0/00000000000000000100-run-1.log",
        base_offset=100,
        etag='"abc"',
        last_modified_ms=T0 + 5,
        origin=SegmentOrigin.WRITTEN,
        run_id="run-1",
    )
    assert (entry.base_offset, entry.last_offset, entry.next_offset) == (100, 105, 106)
    assert (entry.record_count, entry.batch_count, entry.size) == (6, 2, len(files.log))
    assert (entry.max_timestamp_ms, entry.first_batch_max_timestamp_ms) == (T0 + 1, T0)
    assert entry.largest_timestamp_ms == T0 + 1
    assert (entry.etag, entry.sha256, entry.origin, entry.run_id) == (
        '"abc"',
        summary.sha256,
        SegmentOrigin.WRITTEN,
        "run-1",
    )


def test_summary_of_an_empty_segment() -> None:
    summary = summarize_segment(b"", key=KEY, base_offset=42)
    assert (summary.last_offset, summary.record_count, summary.batch_count, summary.size) == (None, 0, 0, 0)
    assert (summary.max_timestamp_ms, summary.first_batch_max_timestamp_ms) == (-1, -1)
    assert summary.sha256 == hashlib.sha256(b"").hexdigest()
    entry = summary.entry(
        key="k", base_offset=42, etag="", last_modified_ms=T0, origin=SegmentOrigin.ADOPTED, run_id="r"
    )
    assert (entry.is_empty, entry.next_offset, entry.largest_timestamp_ms) == (True, 42, T0)


def test_a_segment_may_start_above_its_base_offset() -> None:
    """Compaction output and retention leave a segment's first batch above the offset in its name."""
    files = make_segment(10)
    assert summarize_segment(files.log, key=KEY, base_offset=3).last_offset == 15


@pytest.mark.parametrize(
    ("name", "base_offset", "last_offset", "records", "batches", "max_timestamp", "first_batch_max_ts"),
    [
        pytest.param("v0", 0, 9, 10, 6, -1, -1, id="v0: no timestamps"),
        pytest.param(
            "v1", 100, 109, 10, 6, 1_700_000_777_000, 1_700_000_000_000, id="v1: LogAppendTime wrapper"
        ),
        pytest.param("mixed", 997, 1001, 5, 4, 1_700_000_000_101, -1, id="v0, v1 and v2"),
    ],
)
def test_summary_of_legacy_segments(
    name: str,
    base_offset: int,
    last_offset: int,
    records: int,
    batches: int,
    max_timestamp: int,
    first_batch_max_ts: int,
) -> None:
    data = (LEGACY / f"{name}.log").read_bytes()
    summary = summarize_segment(data, key=KEY, base_offset=base_offset)
    assert (summary.last_offset, summary.record_count, summary.batch_count) == (last_offset, records, batches)
    assert (summary.max_timestamp_ms, summary.first_batch_max_timestamp_ms) == (
        max_timestamp,
        first_batch_max_ts,
    )
    assert advance_open_transactions((), summary.table) == ()


@given(segment_specs(max_batches=4, max_records=4))
def test_summary_of_any_segment(specs: list[BatchSpec]) -> None:
    """Any segment Kafka's log loading takes; one with a producer's control batch that is no transaction
    marker is refused, as Kafka's loading refuses it (``EndTransactionMarker.deserialize``)."""
    data = segment_bytes(specs)
    if any(_not_a_marker(spec) for spec in specs):
        with pytest.raises(SegmentLayoutError, match="holds no transaction marker"):
            summarize_segment(data, key=KEY, base_offset=specs[0].base_offset)
        return
    summary = summarize_segment(data, key=KEY, base_offset=specs[0].base_offset)
    assert summary.last_offset == specs[-1].last_offset
    assert summary.batch_count == len(specs)
    assert summary.record_count == sum(len(spec.records) for spec in specs)
    assert summary.max_timestamp_ms == max(*(spec.expected_max_timestamp for spec in specs), -1)
    assert summary.first_batch_max_timestamp_ms == max(specs[0].expected_max_timestamp, -1)


def _not_a_marker(spec: BatchSpec) -> bool:
    if not spec.is_control or spec.producer_id < 0 or not spec.records:
        return False
    try:
        EndTransactionMarker.parse(spec.records[0])
    except ControlRecordError:
        return True
    return False


# --------------------------------------------------------------------------------------------------- refusals


def test_a_flipped_byte_is_a_crc_error_at_the_damaged_batch() -> None:
    files = sample_topic()[0].files
    positions = [int(p) for p in summarize_segment(files.log, key=KEY, base_offset=0).table.position]
    damaged = bytearray(files.log)
    damaged[positions[2] + 70] ^= 0x01  # inside the third batch's records
    with pytest.raises(InvalidCrcError, match=f"{KEY} at byte {positions[2]}") as caught:
        summarize_segment(bytes(damaged), key=KEY, base_offset=0)
    assert (caught.value.segment, caught.value.position, caught.value.offset) == (KEY, positions[2], 8)


def test_a_truncated_segment_is_refused_at_the_cut_batch() -> None:
    files = sample_topic()[0].files
    positions = [int(p) for p in summarize_segment(files.log, key=KEY, base_offset=0).table.position]
    with pytest.raises(TruncatedSegmentError, match=f"at byte {positions[-1]}") as caught:
        summarize_segment(files.log[:-5], key=KEY, base_offset=0)
    assert caught.value.position == positions[-1]
    with pytest.raises(TruncatedSegmentError):
        summarize_segment(files.log[: positions[1] + 7], key=KEY, base_offset=0)  # inside the log overhead


def test_a_first_batch_below_the_base_offset_is_a_layout_error() -> None:
    files = make_segment(0)
    with pytest.raises(
        SegmentLayoutError, match="first batch offset 0 is below the segment's base offset 5"
    ) as caught:
        summarize_segment(files.log, key=KEY, base_offset=5)
    assert (caught.value.segment, caught.value.position, caught.value.offset) == (KEY, 0, 0)
    assert isinstance(caught.value, CorruptRecordError)


def _batch(first: int, count: int) -> bytes:
    return build_batch([Record(first + i, T0, b"k", b"v") for i in range(count)], base_offset=first)


@pytest.mark.parametrize(
    "second_base",
    [
        pytest.param(11, id="overlapping"),
        pytest.param(10, id="same base offset"),
        pytest.param(5, id="backwards"),
    ],
)
def test_offsets_that_do_not_increase_are_a_layout_error(second_base: int) -> None:
    first = _batch(10, 2)  # 10..11
    data = first + _batch(second_base, 2)
    with pytest.raises(
        SegmentLayoutError,
        match=f"batch offset {second_base} does not follow the previous batch's last offset 11",
    ) as caught:
        summarize_segment(data, key=KEY, base_offset=0)
    assert (caught.value.position, caught.value.offset) == (len(first), second_base)


def test_an_offset_gap_between_batches_is_fine() -> None:
    """Compaction leaves gaps."""
    assert summarize_segment(_batch(10, 2) + _batch(50, 1), key=KEY, base_offset=10).last_offset == 50


# ----------------------------------------------------------------------------------------------- transactions


def _txn_data(first: int, producer_id: int, count: int = 2, epoch: int = 1) -> bytes:
    records = [Record(first + i, T0 + first + i, b"k", b"v") for i in range(count)]
    return build_batch(
        records, producer_id=producer_id, producer_epoch=epoch, base_sequence=first, is_transactional=True
    )


def _marker(offset: int, producer_id: int, kind: ControlRecordType = ControlRecordType.COMMIT) -> bytes:
    return build_end_transaction_marker(
        EndTransactionMarker(kind, coordinator_epoch=0),
        offset=offset,
        timestamp=T0 + offset,
        producer_id=producer_id,
        producer_epoch=1,
    )


def _idempotent(first: int, producer_id: int) -> bytes:
    records = [Record(first, T0, b"k", b"v")]
    return build_batch(records, producer_id=producer_id, producer_epoch=0, base_sequence=0)


def _table(*batches: bytes) -> HeaderTable:
    return summarize_segment(b"".join(batches), key=KEY, base_offset=0).table


def test_transactional_data_opens_a_transaction_at_its_first_offset() -> None:
    table = _table(_txn_data(0, producer_id=7), _txn_data(2, producer_id=7), _idempotent(4, producer_id=9))
    assert advance_open_transactions((), table) == (OpenTransaction(7, 1, 0),)


@pytest.mark.parametrize("kind", [ControlRecordType.COMMIT, ControlRecordType.ABORT])
def test_a_marker_closes_the_transaction(kind: ControlRecordType) -> None:
    table = _table(
        _txn_data(0, producer_id=7), _txn_data(2, producer_id=8), _marker(4, producer_id=7, kind=kind)
    )
    assert advance_open_transactions((), table) == (OpenTransaction(8, 1, 2),)


def test_open_transactions_carry_across_segments() -> None:
    """Producer 7 opens in the first segment and commits in the second; producer 8 opens in the second and
    stays open; the result is sorted by first offset."""
    first = _table(_txn_data(0, producer_id=107), _marker(2, producer_id=107), _txn_data(3, producer_id=7))
    after_first = advance_open_transactions((), first)
    assert after_first == (OpenTransaction(7, 1, 3),)

    second = _table(_txn_data(5, producer_id=7), _txn_data(7, producer_id=8), _marker(9, producer_id=7))
    after_second = advance_open_transactions(after_first, second)
    assert after_second == (OpenTransaction(8, 1, 7),)

    third = _table(_txn_data(10, producer_id=3), _txn_data(12, producer_id=8))
    assert advance_open_transactions(after_second, third) == (
        OpenTransaction(8, 1, 7),
        OpenTransaction(3, 1, 10),
    )


def test_open_transactions_agree_with_the_segment_writer() -> None:
    """The segment writer tracks ongoing transactions on its own (for the .txnindex); both must agree."""
    batches = [
        _txn_data(0, producer_id=1),
        _txn_data(2, producer_id=2),
        _marker(4, producer_id=1, kind=ControlRecordType.ABORT),
        _txn_data(5, producer_id=3),
        _txn_data(7, producer_id=2),
        _marker(9, producer_id=2),
        _txn_data(10, producer_id=4),
    ]
    segments = write_segments(batches, segment_bytes=300)
    assert len(segments) > 1
    open_transactions: tuple[OpenTransaction, ...] = ()
    for files in segments:
        table = summarize_segment(files.log, key=KEY, base_offset=files.base_offset).table
        open_transactions = advance_open_transactions(open_transactions, table)
        assert {t.producer_id: t.first_offset for t in open_transactions} == dict(files.ongoing_txns)
    assert open_transactions == (OpenTransaction(3, 1, 5), OpenTransaction(4, 1, 10))


def test_a_marker_without_open_data_changes_nothing() -> None:
    table = _table(_marker(0, producer_id=5), _idempotent(1, producer_id=5))
    assert advance_open_transactions((), table) == ()


def test_an_open_transaction_records_the_last_offset_of_its_last_data_batch() -> None:
    """Kafka's log loading forgets it when that batch's segment ends at or below the log start offset
    (docs/compaction.md, "The last stable offset"); an older manifest's transaction (unknown) learns it."""
    first = advance_open_transactions((), _table(_txn_data(0, producer_id=7), _txn_data(2, producer_id=8)))
    assert [(t.producer_id, t.last_offset) for t in first] == [(7, 1), (8, 3)]
    older = tuple(replace(t, last_offset=None) for t in first)
    second = advance_open_transactions(older, _table(_txn_data(4, producer_id=7, count=3), _marker(7, 8)))
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in second] == [(7, 0, 6)]


def test_a_transactional_batch_without_a_producer_id_opens_no_transaction() -> None:
    """Kafka's producer state skips a batch without a producer id (``RecordBatch.hasProducerId``), and so
    does the segment writer's tracker: adoption once recorded producer -1's "transaction", which the
    manifest's reader then refused (producer ids are >= 0)."""
    batches = [_txn_data(0, producer_id=-1), _txn_data(2, producer_id=7)]
    assert advance_open_transactions((), _table(*batches)) == (OpenTransaction(7, 1, 2),)
    (files,) = write_segments(batches, segment_bytes=1 << 20)
    assert dict(files.ongoing_txns) == {7: 2}


@given(
    kind=st.sampled_from([ControlRecordType.COMMIT, ControlRecordType.ABORT]),
    changes=st.lists(st.tuples(st.integers(0, 16), st.integers(0, 255)), max_size=3),
)
def test_markers_read_over_columns_are_the_markers_decoding_takes(
    kind: ControlRecordType, changes: list[tuple[int, int]]
) -> None:
    """A marker batch laid out as Kafka writes it is checked over columns, any other is decoded: whatever
    its record's bytes, adoption refuses it exactly when decoding its record gives no marker."""
    batch = bytearray(_marker(5, producer_id=7, kind=kind))
    assert len(batch) == 78
    for at, byte in changes:
        batch[61 + at] = byte
    batch[17:21] = crc32c(bytes(batch[21:])).to_bytes(4, "big")
    segment = _txn_data(0, producer_id=7, count=5) + bytes(batch)
    try:
        records = read_entry(segment, len(segment) - 78).records
        EndTransactionMarker.parse(records[0])
    except (CorruptRecordError, ControlRecordError, IndexError):
        with pytest.raises(CorruptRecordError):
            summarize_segment(segment, key=KEY, base_offset=0)
    else:
        summarize_segment(segment, key=KEY, base_offset=0)
