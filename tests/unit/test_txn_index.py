"""The transaction index ``.txnindex``: its format, its search, and which aborts a segment indexes."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import CorruptIndexError, CorruptRecordError, SegmentWriteError
from kafka_segments.records import (
    ControlRecordType,
    EndTransactionMarker,
    Entry,
    Record,
    RecordBatch,
    build_batch,
    build_end_transaction_marker,
    empty_batch_header,
    iter_batches,
)
from kafka_segments.segment import (
    AbortedTxn,
    AbortedTxnTracker,
    build_txn_index,
    check_txn_index,
    collect_aborted_transactions,
    collect_aborted_txns,
    collect_aborted_txns_from_segments,
    parse_txn_index,
    write_segment,
    write_segments,
)

pytestmark = pytest.mark.unit

SEGMENTS = Path(__file__).resolve().parents[1] / "data" / "segments"
GOLDEN = (AbortedTxn(4000, 90, 110, 111), AbortedTxn(4001, 105, 150, 120))
ABORT, COMMIT = ControlRecordType.ABORT, ControlRecordType.COMMIT


def data(offset: int, producer_id: int, *, count: int = 1, transactional: bool = True) -> bytes:
    records = [Record(offset + i, 1000 + offset + i, b"k", b"v") for i in range(count)]
    return build_batch(
        records, producer_id=producer_id, producer_epoch=0, base_sequence=0, is_transactional=transactional
    )


def marker(offset: int, producer_id: int, kind: ControlRecordType) -> bytes:
    return build_end_transaction_marker(
        EndTransactionMarker(kind, 0),
        offset=offset,
        timestamp=5000,
        producer_id=producer_id,
        producer_epoch=0,
    )


def entries(*batches: bytes) -> list[Entry]:
    return list(iter_batches(b"".join(batches)))


def aborted(*batches: bytes, ongoing: dict[int, int] | None = None) -> tuple[AbortedTxn, ...]:
    return collect_aborted_transactions(entries(*batches), ongoing=ongoing).aborted


# --- the file format ---------------------------------------------------------------------------------


def test_golden_file_parses_to_the_hand_derived_entries() -> None:
    raw = (SEGMENTS / "index-base-100" / "00000000000000000100.txnindex").read_bytes()
    assert parse_txn_index(raw, base_offset=100) == GOLDEN


def test_building_the_golden_entries_gives_the_golden_bytes() -> None:
    raw = (SEGMENTS / "index-base-100" / "00000000000000000100.txnindex").read_bytes()
    assert build_txn_index(GOLDEN, base_offset=100) == raw
    assert len(raw) == 2 * 34


def _raw(version: int, producer_id: int, first: int, last: int, lso: int) -> bytes:
    return struct.pack(">hqqqq", version, producer_id, first, last, lso)


@pytest.mark.parametrize(
    ("raw", "position", "message"),
    [
        (b"\x00" * 35, 34, "not a multiple of the 34-byte entry size"),
        (_raw(1, 1, 100, 105, 106), 0, "unexpected version 1"),
        (_raw(0, 1, 106, 105, 106), 0, "first offset 106 is above the marker offset 105"),
        (
            _raw(0, 1, 0, 105, 106) + _raw(0, 2, 0, 105, 106),
            34,
            "marker offset 105 is not above the previous entry's 105",
        ),
        (_raw(0, 1, 0, 99, 100), 0, "marker offset 99 is below the segment base offset 100"),
    ],
)
def test_corrupt_files_name_the_path_and_byte_position(raw: bytes, position: int, message: str) -> None:
    with pytest.raises(CorruptIndexError, match=message) as caught:
        parse_txn_index(raw, base_offset=100, path="t-0/00000000000000000100.txnindex")
    assert caught.value.position == position
    assert "t-0/00000000000000000100.txnindex at byte" in str(caught.value)


def test_building_refuses_markers_out_of_order() -> None:
    with pytest.raises(SegmentWriteError, match="transaction index entry 1"):
        build_txn_index([AbortedTxn(1, 0, 9, 10), AbortedTxn(2, 0, 8, 10)])


@given(
    st.lists(
        st.tuples(st.integers(-1, 2**62), st.integers(0, 1000), st.integers(0, 1000), st.integers(-1, 2**62)),
        max_size=20,
    )
)
def test_bytes_round_trip(raw_entries: list[tuple[int, int, int, int]]) -> None:
    txns, last = [], 0
    for producer_id, span, gap, lso in raw_entries:
        last += gap + 1
        txns.append(AbortedTxn(producer_id, last - span, last, lso))
    assert parse_txn_index(build_txn_index(txns)) == tuple(txns)


# --- the search (TransactionIndex.collectAbortedTxns) ------------------------------------------------


def test_search_returns_overlapping_aborts() -> None:
    txns = [AbortedTxn(1, 0, 10, 11), AbortedTxn(2, 5, 20, 21), AbortedTxn(3, 30, 40, 41)]
    result = collect_aborted_txns(txns, 11, 30)
    assert result.aborted == (AbortedTxn(2, 5, 20, 21),)
    assert result.is_complete  # the third entry's LSO 41 reaches 30
    beyond = collect_aborted_txns(txns, 11, 50)
    assert beyond.aborted == (AbortedTxn(2, 5, 20, 21), AbortedTxn(3, 30, 40, 41))
    assert not beyond.is_complete


def test_search_is_complete_once_an_lso_reaches_the_upper_bound() -> None:
    txns = [AbortedTxn(1, 0, 10, 11), AbortedTxn(2, 5, 20, 25), AbortedTxn(3, 21, 40, 41)]
    result = collect_aborted_txns(txns, 0, 25)
    assert result.aborted == (AbortedTxn(1, 0, 10, 11), AbortedTxn(2, 5, 20, 25))
    assert result.is_complete


def test_search_across_segments_stops_at_the_first_complete_one() -> None:
    first = [AbortedTxn(1, 0, 10, 11)]
    second = [AbortedTxn(2, 12, 20, 30)]
    third = [AbortedTxn(3, 15, 40, 41)]
    assert collect_aborted_txns_from_segments([first, second, third], 5, 18) == (first[0], second[0])


# --- which transactions a segment indexes ------------------------------------------------------------


def test_aborted_transaction_gets_its_first_offset_marker_offset_and_lso() -> None:
    assert aborted(data(0, 1, count=2), marker(2, 1, ABORT)) == (AbortedTxn(1, 0, 2, 3),)


def test_committed_transaction_is_not_indexed() -> None:
    scan = collect_aborted_transactions(entries(data(0, 1), marker(1, 1, COMMIT)))
    assert scan.aborted == ()
    assert dict(scan.ongoing) == {}


def test_empty_aborted_transaction_emits_nothing() -> None:
    assert aborted(marker(0, 1, ABORT)) == ()
    assert aborted(data(0, 1), marker(1, 1, COMMIT), marker(2, 1, ABORT)) == ()


def test_lso_is_the_first_offset_of_the_earliest_other_open_transaction() -> None:
    log = (data(0, 1), data(1, 2), marker(2, 1, ABORT), marker(3, 2, ABORT))
    assert aborted(*log) == (AbortedTxn(1, 0, 2, 1), AbortedTxn(2, 1, 3, 4))


def test_lso_can_be_below_the_aborted_transactions_own_first_offset() -> None:
    log = (data(0, 2), data(1, 1), marker(2, 1, ABORT))
    assert aborted(*log) == (AbortedTxn(1, 1, 2, 0),)


def test_lso_takes_the_smallest_first_offset_of_several_other_producers() -> None:
    log = (data(0, 1), data(1, 3), data(2, 2), data(3, 3), marker(4, 1, ABORT))
    assert aborted(*log) == (AbortedTxn(1, 0, 4, 1),)


def test_lso_ignores_a_committed_other_transaction() -> None:
    log = (data(0, 1), data(1, 2), marker(2, 2, COMMIT), marker(3, 1, ABORT))
    assert aborted(*log) == (AbortedTxn(1, 0, 3, 4),)


def test_next_transaction_of_the_same_producer_starts_after_its_marker() -> None:
    log = (data(0, 1), marker(1, 1, ABORT), data(2, 1, count=3), marker(5, 1, ABORT))
    assert aborted(*log) == (AbortedTxn(1, 0, 1, 2), AbortedTxn(1, 2, 5, 6))


def test_transaction_spanning_segments_continues_from_the_ongoing_map() -> None:
    first = collect_aborted_transactions(entries(data(10, 1), data(11, 2, transactional=False)))
    assert dict(first.ongoing) == {1: 10}
    second = collect_aborted_transactions(entries(data(20, 1), marker(21, 1, ABORT)), ongoing=first.ongoing)
    assert second.aborted == (AbortedTxn(1, 10, 21, 22),)
    assert dict(second.ongoing) == {}


def test_transactions_open_in_earlier_segments_hold_the_lso_back() -> None:
    log = (data(20, 1), marker(21, 1, ABORT))
    assert aborted(*log, ongoing={7: 3, 1: 15}) == (AbortedTxn(1, 15, 21, 3),)


def test_non_transactional_batches_do_not_open_a_transaction() -> None:
    scan = collect_aborted_transactions(entries(data(0, 1, transactional=False), marker(1, 1, ABORT)))
    assert scan.aborted == ()
    assert dict(scan.ongoing) == {}


def test_empty_control_batch_left_by_compaction_is_ignored() -> None:
    control = RecordBatch.from_bytes(marker(1, 1, ABORT)).header
    scan = collect_aborted_transactions(entries(data(0, 1), empty_batch_header(control)))
    assert scan.aborted == ()
    assert dict(scan.ongoing) == {1: 0}


def test_other_control_types_do_not_end_a_transaction() -> None:
    leader_change = build_batch(
        [Record(1, 0, b"\x00\x00\x00\x02", b"")],
        producer_id=1,
        producer_epoch=0,
        is_control=True,
        is_transactional=True,
    )
    assert dict(collect_aborted_transactions(entries(data(0, 1), leader_change)).ongoing) == {1: 0}


def test_invalid_marker_key_is_corrupt_record_data() -> None:
    bad = build_batch([Record(1, 0, b"\x00", b"")], producer_id=1, producer_epoch=0, is_control=True)
    with pytest.raises(CorruptRecordError, match="invalid control record key") as caught:
        AbortedTxnTracker().observe(entries(bad)[0])
    assert caught.value.offset == 1


def test_segment_writer_indexes_the_aborts_of_its_segment_only() -> None:
    first = write_segment([data(0, 1), data(1, 2)])
    second = write_segment([marker(2, 1, ABORT), marker(3, 2, COMMIT)], ongoing_txns=first.ongoing_txns)
    assert first.txn_index == b""
    assert "00000000000000000002.txnindex" in second.files()
    assert parse_txn_index(second.txn_index, base_offset=2) == (AbortedTxn(1, 0, 2, 1),)
    assert "00000000000000000000.txnindex" not in first.files()


# --- the check against the log -----------------------------------------------------------------------


def test_check_with_known_open_transactions_compares_exactly() -> None:
    log = entries(data(20, 1), marker(21, 1, ABORT))
    assert check_txn_index([AbortedTxn(1, 15, 21, 22)], log, ongoing={1: 15}) == ()
    problems = check_txn_index([AbortedTxn(1, 20, 21, 22)], log, ongoing={1: 15})
    assert [problem.reason for problem in problems] == [
        "AbortedTxn(producer_id=1, first_offset=20, last_offset=21, last_stable_offset=22) is not an abort "
        "the log shows",
        "missing entry AbortedTxn(producer_id=1, first_offset=15, last_offset=21, last_stable_offset=22)",
    ]


def test_check_without_open_transactions_verifies_what_the_segment_shows() -> None:
    log = entries(data(20, 1), marker(21, 1, ABORT), marker(22, 2, ABORT), data(23, 3), marker(24, 3, ABORT))
    good = [AbortedTxn(1, 15, 21, 22), AbortedTxn(2, 3, 22, 23), AbortedTxn(3, 23, 24, 25)]
    assert check_txn_index(good, log, base_offset=20) == ()
    wrong = [AbortedTxn(1, 15, 21, 22), AbortedTxn(5, 3, 22, 23)]
    reasons = [str(problem) for problem in check_txn_index(wrong, log, base_offset=20)]
    assert reasons == [
        "transaction index entry 1: offset 22 is not an ABORT marker of producer 5 in this segment",
        "transaction index: missing entry for the aborted transaction "
        "AbortedTxn(producer_id=3, first_offset=23, last_offset=24, last_stable_offset=25)",
    ]


def test_rolled_segments_carry_open_transactions_over() -> None:
    log = [data(0, 1), data(1, 2), data(2, 1), marker(3, 1, ABORT), marker(4, 2, ABORT)]
    segments = write_segments(log, segment_bytes=len(log[0]) + len(log[1]))
    assert [segment.base_offset for segment in segments] == [0, 2, 3, 4]
    assert [segment.aborted_txns for segment in segments] == [
        (),
        (),
        (AbortedTxn(1, 0, 3, 1),),
        (AbortedTxn(2, 1, 4, 5),),
    ]
