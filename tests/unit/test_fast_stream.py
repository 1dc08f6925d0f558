"""``StreamDecoder``: a segment decoded in steps as it is read equals ``decode_record_columns`` of the whole.

Whatever the feeding schedule (how many bytes arrive between two calls, how small a step may be), with or
without an arena: the same buffer bytes, columns and header table; on damage or legacy entries, the same
error or result as decoding the whole segment at once, because the decoder then gives up its steps.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_segments.compaction.decoded_segment import DecodedSegment, decoded_segment, identify_keys
from kafka_segments.compaction.rewrite import clean_round
from kafka_segments.compaction.source import SourceSegment
from kafka_segments.errors import CorruptRecordError
from kafka_segments.records import Record, build_batch
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.fast import (
    ArenaUse,
    RecordColumns,
    StreamDecoder,
    decode_record_columns,
    scan_header_table,
)
from kafka_segments.records.fast.columns import RECORD_COLUMNS, TABLE_FIELDS
from unit.compaction_helpers import NOW
from unit.test_compaction_properties import CONFIG, build, operations
from unit.test_fast import NAME, TS, damaged_segments, outcome, segments

pytestmark = pytest.mark.unit

ARENA_BYTES = 1 << 20
MAX_TIMESTAMP_LAST_BYTE = 8 + 4 + 4 + 1 + 4 + 2 + 4 + 8 + 7
"""A batch's byte that only its CRC-32C checks (the low byte of maxTimestamp)."""


POSITIONS = ("key_start", "value_start", "record_start")


def assert_same_columns(got: RecordColumns, want: RecordColumns, *, buffer: bool = True) -> None:
    """Equal columns; ``buffer=False``: but for the record bytes and their positions (``ArenaUse.REUSE``
    keeps no records: its positions are the steps' own, checked by decoding each step again)."""
    if buffer:
        assert got.buffer.tobytes() == want.buffer.tobytes()
    else:
        assert got.buffer.size == 0
    assert not got.buffer.flags.writeable
    for name, dtype in RECORD_COLUMNS:
        column = getattr(got, name)
        assert column.dtype == dtype, name
        if not buffer and name in POSITIONS:
            continue
        assert column.tolist() == getattr(want, name).tolist(), name
    assert got.is_control.tolist() == want.is_control.tolist()
    for field in TABLE_FIELDS:
        assert getattr(got.batches, field).tolist() == getattr(want.batches, field).tolist(), field


def streamed(
    data: bytes,
    cuts: list[int],
    *,
    step_bytes: int,
    arena: np.ndarray | None,
    verify_crc: bool = False,
    arena_use: ArenaUse = ArenaUse.KEEP,
) -> tuple[StreamDecoder, RecordColumns]:
    """``data`` arriving in a buffer at the ``cuts`` (then whole), fed to a decoder after each arrival."""
    buffer = np.zeros(len(data) + 7, dtype=np.uint8)
    decoder = StreamDecoder(
        buffer, segment=NAME, arena=arena, step_bytes=step_bytes, verify_crc=verify_crc, arena_use=arena_use
    )
    for cut in [*sorted(c % (len(data) + 1) for c in cuts), len(data)]:
        buffer[:cut] = np.frombuffer(data[:cut], dtype=np.uint8)
        decoder.feed(cut)
    return decoder, decoder.finish(len(data))


@settings(max_examples=300, deadline=None)
@given(
    data=segments(max_batches=6),
    cuts=st.lists(st.integers(0, 10_000), max_size=8),
    step_bytes=st.integers(1, 400),
    with_arena=st.booleans(),
    arena_use=st.sampled_from(list(ArenaUse)),
)
def test_steps_join_into_the_columns_of_the_whole_segment(
    data: bytes, cuts: list[int], step_bytes: int, with_arena: bool, arena_use: ArenaUse
) -> None:
    arena = np.zeros(ARENA_BYTES, dtype=np.uint8) if with_arena else None
    want = outcome(lambda: decode_record_columns(data, segment=NAME, verify_crc=False))
    decoders: list[StreamDecoder] = []

    def decode() -> RecordColumns:
        decoder, columns = streamed(data, cuts, step_bytes=step_bytes, arena=arena, arena_use=arena_use)
        decoders.append(decoder)
        return columns

    got = outcome(decode)
    if want[0] == "error":
        assert got == want
        return
    assert got[0] == "ok", got
    assert isinstance(got[1], RecordColumns)
    assert isinstance(want[1], RecordColumns)
    steps = decoders[0].record_steps
    if steps is None:
        assert_same_columns(got[1], want[1])
        return
    assert arena_use is ArenaUse.REUSE  # records not kept: each step decoded again holds them
    assert_same_columns(got[1], want[1], buffer=False)
    scratch = np.zeros(max(steps.largest, 1), dtype=np.uint8)
    again = [steps.inflate(data, k, arena=scratch, segment=NAME).to_records() for k in range(len(steps))]
    assert [record for step in again for record in step] == want[1].to_records()


@pytest.mark.parametrize("codec", [c for c in CompressionType if c != CompressionType.NONE], ids=str)
def test_reused_arena_steps_are_decoded_again_to_the_same_records(codec: CompressionType) -> None:
    data = _segment(codec)
    arena = np.zeros(ARENA_BYTES, dtype=np.uint8)
    cuts = list(range(0, len(data), 97))
    decoder, got = streamed(data, cuts, step_bytes=200, arena=arena, arena_use=ArenaUse.REUSE)
    steps = decoder.record_steps
    assert steps is not None
    assert len(steps) == decoder.steps > 3
    assert steps.largest < len(decode_record_columns(data, segment=NAME).buffer) // 3  # one step, not all
    want = decode_record_columns(data, segment=NAME, verify_crc=False)
    assert_same_columns(got, want, buffer=False)
    records = []
    for step in range(len(steps)):
        columns = steps.inflate(data, step, arena=arena, segment=NAME)
        records += columns.to_records()
        rows = slice(int(steps.row_start[step]), int(steps.row_start[step + 1]))
        assert columns.offset.tolist() == want.offset[rows].tolist()
    assert records == want.to_records()
    changed = bytearray(data)
    changed[int(steps.byte_start[1]) : int(steps.byte_end[1])] = b"\0" * int(
        steps.byte_end[1] - steps.byte_start[1]
    )
    with pytest.raises(CorruptRecordError, match=NAME):
        steps.inflate(bytes(changed), 1, arena=arena, segment=NAME)
    for other in (steps.record_bytes - 1, steps.record_bytes + 1):  # as if the bytes now inflated otherwise
        with pytest.raises(CorruptRecordError, match=NAME):
            replace(steps, record_bytes=other).inflate(data, 1, arena=arena, segment=NAME)


@settings(max_examples=300, deadline=None)
@given(data=damaged_segments(), cuts=st.lists(st.integers(0, 10_000), max_size=6), step=st.integers(1, 300))
def test_damage_raises_what_decoding_the_whole_segment_raises(
    data: bytes, cuts: list[int], step: int
) -> None:
    want = outcome(lambda: decode_record_columns(data, segment=NAME, verify_crc=False))
    arena = np.zeros(ARENA_BYTES, dtype=np.uint8)
    got = outcome(lambda: streamed(data, cuts, step_bytes=step, arena=arena)[1])
    if want[0] == "ok":
        assert got[0] == "ok", got
        assert isinstance(got[1], RecordColumns)
        assert isinstance(want[1], RecordColumns)
        assert_same_columns(got[1], want[1])
    else:
        assert got == want


def _segment(codec: CompressionType, batches: int = 40) -> bytes:
    return b"".join(
        build_batch(
            [Record(o * 3 + i, TS + o, b"k%d" % (o % 7), b"v" * 40) for i in range(3)],
            base_offset=o * 3,
            compression=codec,
        )
        for o in range(batches)
    )


@pytest.mark.parametrize("codec", list(CompressionType), ids=lambda c: c.name.lower())
def test_a_segment_is_decoded_in_several_steps_and_joined(codec: CompressionType) -> None:
    data = _segment(codec)
    arena = np.zeros(ARENA_BYTES, dtype=np.uint8)
    decoder, got = streamed(data, list(range(0, len(data), 97)), step_bytes=200, arena=arena)
    assert decoder.steps > 3
    want = decode_record_columns(data, segment=NAME, verify_crc=False)
    assert_same_columns(got, want)
    if codec == CompressionType.NONE:
        assert got.buffer.size == len(data)  # in place: the records are read where they arrived
    else:
        assert np.shares_memory(got.buffer, arena)


def test_compressed_batches_without_an_arena_are_decoded_at_the_end() -> None:
    data = _segment(CompressionType.LZ4)
    decoder, got = streamed(data, list(range(0, len(data), 97)), step_bytes=200, arena=None)
    assert decoder.steps == 0
    assert_same_columns(got, decode_record_columns(data, segment=NAME, verify_crc=False))


def test_an_arena_too_small_for_the_records_gives_up_the_steps() -> None:
    data = _segment(CompressionType.ZSTD)
    small = np.zeros(600, dtype=np.uint8)
    decoder, got = streamed(data, list(range(0, len(data), 97)), step_bytes=200, arena=small)
    assert decoder.steps == 0
    assert_same_columns(got, decode_record_columns(data, segment=NAME, verify_crc=False))


def test_a_verifying_decoder_checks_each_steps_crcs_and_joins_them() -> None:
    data = _segment(CompressionType.LZ4)
    arena = np.zeros(ARENA_BYTES, dtype=np.uint8)
    decoder, got = streamed(data, list(range(0, len(data), 97)), step_bytes=200, arena=arena, verify_crc=True)
    assert decoder.steps > 3
    assert_same_columns(got, decode_record_columns(data, segment=NAME, verify_crc=True))


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.ZSTD], ids=["none", "zstd"])
@pytest.mark.parametrize("where", ["first", "last"])
def test_a_verifying_decoder_raises_a_bad_crc_over_the_whole_segment(
    codec: CompressionType, where: str
) -> None:
    data = bytearray(_segment(codec))
    table = scan_header_table(bytes(data))
    batch = 0 if where == "first" else len(table) - 1
    data[int(table.position[batch]) + MAX_TIMESTAMP_LAST_BYTE] ^= 1  # only the CRC covers it
    arena = np.zeros(ARENA_BYTES, dtype=np.uint8)
    want = outcome(lambda: decode_record_columns(bytes(data), segment=NAME, verify_crc=True))
    assert want[0] == "error"
    buffer = np.frombuffer(bytes(data), dtype=np.uint8)
    decoder = StreamDecoder(buffer, segment=NAME, arena=arena, step_bytes=200, verify_crc=True)
    for available in range(0, len(data), 97):
        decoder.feed(available)
    assert outcome(lambda: decoder.finish(len(data))) == want
    assert decoder.steps == 0
    unverified = StreamDecoder(buffer, segment=NAME, arena=arena, step_bytes=200)
    unverified.feed(len(data))
    assert outcome(lambda: unverified.finish(len(data))) != want  # the damage is only a CRC's to see


def test_verifying_crcs_decodes_the_whole_segment() -> None:
    data = bytearray(_segment(CompressionType.NONE))
    data[100] ^= 1  # inside the first batch's records: only a CRC check sees it
    buffer = np.frombuffer(bytes(data), dtype=np.uint8)
    decoder = StreamDecoder(buffer, segment=NAME, step_bytes=200)
    decoder.feed(len(data))
    want = outcome(lambda: decode_record_columns(bytes(data), segment=NAME, verify_crc=True))
    assert want[0] == "error"
    assert outcome(lambda: decoder.finish(len(data), verify_crc=True)) == want


# --- a round over segments that carry their streamed columns ---


def decoded_of(columns: RecordColumns, data: bytes | np.ndarray) -> DecodedSegment:
    """What the round decodes from ``columns`` (their keys identified as ``decode_segment`` does)."""
    return decoded_segment(columns, identify_keys(columns), data=bytes(data))


def _with_streamed_columns(segment: SourceSegment, arena: np.ndarray) -> SourceSegment:
    buffer = np.frombuffer(bytes(segment.data), dtype=np.uint8)
    decoder = StreamDecoder(buffer, segment=segment.name, arena=arena, step_bytes=64)
    for available in range(0, len(buffer), 50):
        decoder.feed(available)
    columns = decoder.finish(len(buffer))
    return replace(segment, data=memoryview(buffer), decoded=decoded_of(columns, buffer))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(operations, min_size=1, max_size=30))
def test_a_round_over_streamed_columns_equals_the_round_that_decodes(ops: list[tuple[object, ...]]) -> None:
    random_log = build(ops)
    segments = random_log.log.segments()
    options = {"first_dirty": 0, "end_offset": random_log.end, "config": CONFIG, "now_ms": NOW}
    decoding = clean_round(segments, **options)  # type: ignore[arg-type]
    arenas = [np.zeros(ARENA_BYTES, dtype=np.uint8) for _ in segments]
    streamed_segments = [_with_streamed_columns(s, a) for s, a in zip(segments, arenas, strict=True)]
    assert clean_round(streamed_segments, **options) == decoding  # type: ignore[arg-type]


def test_a_segment_with_columns_gives_their_header_table_and_one_without_scans() -> None:
    data = _segment(CompressionType.NONE, batches=5)
    columns = decode_record_columns(data, segment=NAME, verify_crc=False)
    with_columns = SourceSegment(NAME, 0, data, decoded=decoded_of(columns, data))
    assert with_columns.header_table() is columns.batches
    scanned = SourceSegment(NAME, 0, data).header_table()
    for field in TABLE_FIELDS:
        assert getattr(scanned, field).tolist() == getattr(columns.batches, field).tolist()
    longer = SourceSegment(NAME, 0, data + data, decoded=decoded_of(columns, data))  # other bytes: scanned
    assert len(longer.header_table()) == 2 * len(columns.batches)
