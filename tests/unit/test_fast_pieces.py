"""``records.fast.decode_record_pieces`` (issue 38, point 1): a segment's records a bounded piece at a
time are exactly ``decode_record_columns``'s, in order, with the segment's batch positions, and damage raises
the same error; a piece holds at most its budget of decompressed bytes (or one batch).
``decode_record_columns``'s ``max_total_bytes`` refuses a decode past it at the first batch that does not
fit."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import DecompressionLimitError
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.builder import build_batch
from kafka_segments.records.fast import decode_record_columns, decode_record_pieces, segment_records_budget
from kafka_segments.records.record import Record
from unit.test_fast import NAME, damaged_segments, outcome, segments

TS = 1_700_000_000_000


def joined(data: bytes, piece_bytes: int, *, verify_crc: bool = True) -> list[object]:
    """Every record of the pieces, then every piece's batch headers (positions included)."""
    pieces = list(decode_record_pieces(data, segment=NAME, verify_crc=verify_crc, piece_bytes=piece_bytes))
    records = [record for piece in pieces for record in piece.to_records()]
    headers = [header for piece in pieces for header in piece.batches.to_headers()]
    return [records, headers]


@given(segments(), st.sampled_from([1, 64, 1 << 20]))
def test_pieces_are_the_whole_decode(data: bytes, piece_bytes: int) -> None:
    whole = decode_record_columns(data, segment=NAME)
    assert joined(data, piece_bytes) == [whole.to_records(), whole.batches.to_headers()]


@given(damaged_segments(), st.booleans(), st.sampled_from([1, 1 << 20]))
def test_damaged_pieces_fail_like_the_whole_decode(data: bytes, verify_crc: bool, piece_bytes: int) -> None:
    whole = outcome(lambda: decode_record_columns(data, segment=NAME, verify_crc=verify_crc).to_records())
    pieces = outcome(lambda: joined(data, piece_bytes, verify_crc=verify_crc)[0])
    assert pieces == whole


def bombs(count: int, size: int) -> bytes:
    """``count`` zstd batches of one record of ``size`` zero bytes, at offsets 0..count-1."""
    one = build_batch([Record(0, TS, b"k", bytes(size))], compression=CompressionType.ZSTD)
    return b"".join(struct.pack(">q", i) + one[8:] for i in range(count))


def test_a_piece_holds_at_most_its_budget_or_one_batch() -> None:
    data = bombs(8, 1 << 20)
    sizes = [len(piece.buffer) for piece in decode_record_pieces(data, piece_bytes=(2 << 20) + 4096)]
    assert len(sizes) == 4
    assert all(size <= (2 << 20) + 4096 for size in sizes)
    single = [len(piece) for piece in decode_record_pieces(data, piece_bytes=1000)]
    assert single == [1] * 8  # a batch past the budget alone: one piece each
    with pytest.raises(DecompressionLimitError) as caught:  # past the per-batch limit: refused as before
        list(decode_record_pieces(data, segment=NAME, max_batch_bytes=1 << 19))
    assert (caught.value.position, caught.value.offset) == (0, 0)


def test_pieces_name_positions_in_the_segment() -> None:
    data = bombs(4, 1 << 20)
    size = len(data) // 4
    pieces = list(decode_record_pieces(data, piece_bytes=1, origin=1000))
    assert [int(piece.batches.position[0]) for piece in pieces] == [1000 + i * size for i in range(4)]
    damaged = data + b"\x00" * 5  # a cut entry after the bombs
    with pytest.raises(DecompressionLimitError) as caught:
        list(decode_record_pieces(damaged, segment=NAME, piece_bytes=1, max_batch_bytes=1 << 19, origin=1000))
    assert caught.value.position == 1000


def test_a_segment_decode_stops_at_its_budget() -> None:
    """Eight batches of 1 MiB of zeros (and a few bytes of record), each under a limit of two of them: the
    segment's budget is the limit (its bytes times 256 are less), so the decode is refused at the third
    batch, naming it."""
    data = bombs(8, 1 << 20)
    limit = (2 << 20) + 4096
    budget = segment_records_budget(len(data), limit)
    assert budget == limit
    with pytest.raises(DecompressionLimitError) as caught:
        decode_record_columns(data, segment=NAME, max_batch_bytes=limit, max_total_bytes=budget)
    error = caught.value
    assert (error.position, error.offset, error.limit) == (2 * len(data) // 8, 2, budget)
    assert f"the segment's records inflate past {limit} bytes" in str(error)
    assert len(decode_record_columns(data, segment=NAME, max_batch_bytes=limit)) == 8  # no total: as before
