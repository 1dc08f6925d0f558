"""The columnar hot path (``records/fast/decode.py``) against the Python path (``records/log.py``).

Every property is differential: ``scan_header_table`` must equal ``scan_headers`` and
``decode_record_columns`` must equal the records of ``iter_batches``, on clean segments of every shape and on
damaged ones, where both must raise the same error class with the same message, segment, position and offset.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, note
from hypothesis import strategies as st
from kafka_segments.errors import CorruptRecordError, InvalidCrcError, TruncatedSegmentError
from kafka_segments.records import (
    CompressionType,
    ControlRecordType,
    EndTransactionMarker,
    Header,
    Record,
    TimestampType,
    build_batch,
    build_end_transaction_marker,
    iter_batches,
    scan_headers,
)
from kafka_segments.records.crc import crc32c
from kafka_segments.records.fast import (
    HeaderTable,
    RecordColumns,
    decode_record_columns,
    scan_header_table,
)
from kafka_segments.records.fast import decode as fast
from unit.strategies import INT64_MAX, BatchSpec, batch_specs

pytestmark = pytest.mark.unit

TS = 1_700_000_000_000
NAME = "00000000000000000100.log"
DATA_DIR = Path(__file__).resolve().parents[1] / "data"
GOLDEN = sorted((DATA_DIR / "v2").glob("*.log")) + sorted((DATA_DIR / "legacy").glob("*.log"))


# --- the Python path, as the reference ---


def slow_records(data: bytes, *, verify_crc: bool = True) -> list[Record]:
    return [r for b in iter_batches(data, segment=NAME, verify_crc=verify_crc) for r in b.records]


def slow_control_flags(data: bytes) -> list[bool]:
    return [b.header.is_control for b in iter_batches(data) for _ in b.records]


def slow_batch_index(data: bytes) -> list[int]:
    return [i for i, b in enumerate(iter_batches(data)) for _ in b.records]


def outcome(read: Callable[[], object]) -> tuple[str, object]:
    """("ok", value) or ("error", (class, message, segment, position, offset))."""
    try:
        return "ok", read()
    except Exception as exc:  # the class is part of what is compared
        where = tuple(getattr(exc, name, None) for name in ("segment", "position", "offset"))
        return "error", (type(exc), str(exc), *where)


def fits_int64(records: list[Record]) -> bool:
    return all(-(2**63) <= v <= INT64_MAX for r in records for v in (r.offset, r.timestamp))


def assert_same_outcome(slow: tuple[str, object], fast: tuple[str, object]) -> None:
    if slow[0] == "ok" and fast[0] == "error" and isinstance(slow[1], list) and not fits_int64(slow[1]):
        # documented difference: columns are int64, Python ints are not
        assert fast[1][0] is CorruptRecordError  # type: ignore[index]
        assert "int64" in fast[1][1]  # type: ignore[index]
        return
    assert fast == slow


# --- segments ---


@st.composite
def segments(draw: st.DrawFn, *, max_batches: int = 5) -> bytes:
    """Batches of every shape (all codecs, null keys/values, headers, LogAppendTime, delete horizons, offset
    gaps, negative timestamp deltas, empty batch headers) and end-transaction markers, in offset order."""
    parts: list[bytes] = []
    next_offset = draw(st.integers(0, 2**40))
    for _ in range(draw(st.integers(0, max_batches))):
        start = next_offset + draw(st.just(0) | st.integers(1, 1000))
        if draw(st.integers(0, 4)) == 0:
            marker = EndTransactionMarker(
                draw(st.sampled_from([ControlRecordType.COMMIT, ControlRecordType.ABORT])),
                draw(st.integers(0, 2**31 - 1)),
            )
            parts.append(
                build_end_transaction_marker(
                    marker,
                    offset=start,
                    timestamp=draw(st.integers(-1, 2**45)),
                    producer_id=draw(st.integers(0, 2**40)),
                    producer_epoch=draw(st.integers(0, 2**15 - 1)),
                )
            )
            next_offset = start + 1
            continue
        spec: BatchSpec = draw(batch_specs(min_records=0, max_records=8)).shifted(start)
        if not spec.records and spec.compression != CompressionType.NONE:
            spec = BatchSpec(spec.records, spec.base_offset, spec.last_offset)
        parts.append(spec.build())
        next_offset = spec.last_offset + 1
    return b"".join(parts)


def positions(data: bytes) -> list[int]:
    return [h.position for h in scan_headers(data)]


def reseal(buf: bytearray, position: int) -> None:
    """Recompute the CRC of the v2 batch at ``position`` when its frame is still readable."""
    if position + 61 > len(buf) or buf[position + 16] != 2:
        return
    (size,) = struct.unpack_from(">i", buf, position + 8)
    end = position + 12 + size
    if size >= 49 and end <= len(buf):
        buf[position + 17 : position + 21] = crc32c(bytes(buf[position + 21 : end])).to_bytes(4, "big")


HEADER_FIELDS = {  # byte offset in the entry -> struct format
    8: ">i",  # batchLength
    12: ">i",  # partitionLeaderEpoch
    16: ">b",  # magic
    21: ">h",  # attributes
    23: ">i",  # lastOffsetDelta
    27: ">q",  # baseTimestamp
    35: ">q",  # maxTimestamp
    57: ">i",  # recordsCount
}


@st.composite
def damaged_segments(draw: st.DrawFn) -> bytes:
    """A segment with one random damage: a flipped byte (often resealed, to reach the record decoder), a
    cut, a rewritten header field, or trailing bytes."""
    clean = draw(segments(max_batches=4).filter(len))
    buf = bytearray(clean)
    starts = positions(clean)
    target = draw(st.sampled_from(starts))
    kind = draw(st.sampled_from(["flip", "flip", "truncate", "field", "field", "append"]))
    note(f"damage {kind} in the batch at {target}")
    if kind == "flip":
        end = starts[starts.index(target) + 1] if target != starts[-1] else len(buf)
        anywhere = st.integers(target, end - 1)
        in_records = st.integers(target + 61, end - 1) if end - target > 61 else anywhere
        where = draw(anywhere | in_records)
        buf[where] ^= draw(st.integers(1, 255))
    elif kind == "truncate":
        del buf[draw(st.integers(0, len(buf) - 1)) :]
    elif kind == "field":
        field, fmt = draw(st.sampled_from(sorted(HEADER_FIELDS.items())))
        bits = struct.calcsize(fmt) * 8
        value = draw(
            st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
            | st.integers(-2, 100)
            | st.sampled_from([-(2 ** (bits - 1)), 2 ** (bits - 1) - 1])
        )
        struct.pack_into(fmt, buf, target + field, value)
    else:
        buf += draw(st.binary(min_size=1, max_size=80))
    if draw(st.booleans()):
        reseal(buf, target)
    return bytes(buf)


# --- clean segments: equal to the Python path ---


@given(segments())
def test_header_table_equals_scan_headers(data: bytes) -> None:
    expected = list(scan_headers(data, segment=NAME))
    table = scan_header_table(data, segment=NAME)
    assert isinstance(table, HeaderTable)
    assert len(table) == len(expected)
    assert table.to_headers() == expected
    assert [table.header(i) for i in range(len(table))] == expected
    assert scan_header_table(data, segment=NAME, verify_crc=True).to_headers() == expected
    assert table.size_in_bytes.sum() == len(data)
    assert table.last_offset.tolist() == [h.last_offset for h in expected]
    assert table.is_control.tolist() == [h.is_control for h in expected]
    assert table.codec.tolist() == [h.compression for h in expected]


@given(segments())
def test_record_columns_equal_the_python_records(data: bytes) -> None:
    for verify_crc in (True, False):
        columns = decode_record_columns(data, segment=NAME, verify_crc=verify_crc)
        assert isinstance(columns, RecordColumns)
        assert columns.to_records() == slow_records(data)
    assert len(columns) == len(slow_records(data))
    assert columns.is_control.tolist() == slow_control_flags(data)
    assert columns.batch_index.tolist() == slow_batch_index(data)
    assert columns.batches.to_headers() == list(scan_headers(data))
    assert columns.is_tombstone.tolist() == [r.is_tombstone for r in slow_records(data)]


@given(segments(max_batches=3))
def test_record_accessors(data: bytes) -> None:
    columns = decode_record_columns(data)
    records = slow_records(data)
    for index, record in enumerate(records):
        assert columns.record(index) == record
        assert (columns.key(index), columns.value(index), columns.headers(index)) == (
            record.key,
            record.value,
            record.headers,
        )
        assert columns.headers_count[index] == len(record.headers)
    hashes = columns.key_hash64()
    for index, record in enumerate(records):
        assert hashes[index] == (0 if record.key is None else fnv1a64(record.key))


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def test_fnv1a64_known_vectors() -> None:
    data = build_batch([Record(0, TS, b"", b"v"), Record(1, TS, b"a", None), Record(2, TS, None, b"")])
    assert decode_record_columns(data).key_hash64().tolist() == [0xCBF29CE484222325, 0xAF63DC4C8601EC8C, 0]


def test_record_spans_cover_whole_records() -> None:
    records = [Record(7, TS, b"k", b"v" * 300, (Header("h", b"x"),)), Record(9, TS - 5, None, None)]
    data = build_batch(records, base_offset=5)
    columns = decode_record_columns(data)
    assert columns.record_start.tolist() == [61, 61 + int(columns.record_size[0])]
    assert int(columns.record_start[1] + columns.record_size[1]) == len(data)
    assert columns.timestamp.tolist() == [TS, TS - 5]
    assert columns.offset.tolist() == [7, 9]


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview], ids=["bytes", "bytearray", "memoryview"])
def test_reads_any_buffer_and_decodes_uncompressed_in_place(wrap: Callable[[bytes], bytes]) -> None:
    data = b"".join(build_batch([Record(o, TS + o, b"k%d" % o, b"v")], base_offset=o) for o in range(3))
    buffer = wrap(data)
    columns = decode_record_columns(buffer)
    assert columns.to_records() == slow_records(data)
    assert np.shares_memory(columns.buffer, np.frombuffer(buffer, dtype=np.uint8))
    assert not columns.buffer.flags.writeable
    assert scan_header_table(buffer).to_headers() == list(scan_headers(data))


def test_compressed_batches_are_decoded_into_one_arena() -> None:
    data = b"".join(
        build_batch([Record(o, TS, b"k", b"v" * 50)], base_offset=o, compression=codec)
        for o, codec in enumerate(CompressionType)
    )
    columns = decode_record_columns(data)
    assert columns.to_records() == slow_records(data)
    assert not np.shares_memory(columns.buffer, np.frombuffer(data, dtype=np.uint8))
    assert columns.value_start.tolist() == sorted(columns.value_start.tolist())


def test_the_arena_grows_for_highly_compressed_batches() -> None:
    data = b"".join(
        build_batch([Record(o, TS, b"k", bytes(20_000))], base_offset=o, compression=codec)
        for o, codec in enumerate([CompressionType.LZ4, CompressionType.ZSTD] * 3)
    )
    columns = decode_record_columns(data)
    assert columns.to_records() == slow_records(data)
    assert len(columns.buffer) == columns.record_start[-1] + columns.record_size[-1]


def test_without_lz4s_block_decoder_lz4_batches_go_the_general_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = b"".join(
        build_batch([Record(o, TS, b"k%d" % o, b"v" * (o * 700))], base_offset=o, compression=codec)
        for o, codec in enumerate([CompressionType.LZ4, CompressionType.NONE, CompressionType.LZ4] * 2)
    )
    fast_columns = decode_record_columns(data)
    monkeypatch.setattr(fast, "native_decoder", lambda: False)
    general_columns = decode_record_columns(data)
    assert general_columns.to_records() == fast_columns.to_records() == slow_records(data)
    assert np.array_equal(general_columns.buffer, fast_columns.buffer)


def test_decompresses_into_a_given_arena() -> None:
    data = b"".join(
        build_batch([Record(o, TS, b"k%d" % o, b"v" * 300)], base_offset=o, compression=CompressionType.ZSTD)
        for o in range(4)
    )
    arena = np.zeros(10_000, dtype=np.uint8)
    columns = decode_record_columns(data, arena=arena)
    assert columns.to_records() == slow_records(data)
    assert np.shares_memory(columns.buffer, arena)
    small = np.zeros(100, dtype=np.uint8)  # too small: a new buffer is used
    columns = decode_record_columns(data, arena=small)
    assert columns.to_records() == slow_records(data)
    assert not np.shares_memory(columns.buffer, small)
    plain = build_batch([Record(0, TS, b"k", b"v")])  # uncompressed: decoded in place
    assert not np.shares_memory(decode_record_columns(plain, arena=arena).buffer, arena)


@pytest.mark.parametrize(
    "arena",
    [np.zeros(10, dtype=np.int32), np.zeros((2, 5), dtype=np.uint8), np.zeros(20, dtype=np.uint8)[::2]],
    ids=["int32", "2d", "strided"],
)
def test_rejects_an_unusable_arena(arena: np.ndarray) -> None:
    with pytest.raises(ValueError, match="arena must be"):
        decode_record_columns(b"", arena=arena)


def test_log_append_time_and_control_flags() -> None:
    data = build_batch(
        [Record(0, TS, b"a", b"1"), Record(1, TS - 9, b"b", b"2")],
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        log_append_time=TS + 500,
        compression=CompressionType.LZ4,
    ) + build_end_transaction_marker(
        EndTransactionMarker(ControlRecordType.COMMIT, 3),
        offset=2,
        timestamp=TS,
        producer_id=1,
        producer_epoch=0,
    )
    columns = decode_record_columns(data)
    assert columns.timestamp.tolist() == [TS + 500, TS + 500, TS]
    assert columns.is_control.tolist() == [False, False, True]
    assert columns.batch_index.tolist() == [0, 0, 1]


def test_many_small_batches() -> None:
    # more entries than the walk's first position buffer holds (it grows)
    data = b"".join(build_batch([Record(o, TS + o, None, b"")]) for o in range(5_000))
    table = scan_header_table(data)
    assert table.to_headers() == list(scan_headers(data))
    assert decode_record_columns(data).offset.tolist() == list(range(5_000))


def test_empty_segment() -> None:
    assert len(scan_header_table(b"")) == 0
    columns = decode_record_columns(b"")
    assert len(columns) == 0
    assert columns.to_records() == []
    assert len(columns.batches) == 0


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden_segments(path: Path) -> None:
    """kafka-python-written v2 segments and the legacy v0/v1 segments (read through the Python fallback)."""
    data = path.read_bytes()
    assert scan_header_table(data).to_headers() == list(scan_headers(data))
    columns = decode_record_columns(data)
    assert columns.to_records() == slow_records(data)
    assert columns.batch_index.tolist() == slow_batch_index(data)
    assert columns.is_control.tolist() == slow_control_flags(data)


# --- damage: the same errors as the Python path ---


@given(damaged_segments(), st.booleans())
def test_damaged_segments_fail_like_the_python_path(data: bytes, verify_crc: bool) -> None:
    slow_scan = outcome(lambda: list(scan_headers(data, segment=NAME, verify_crc=verify_crc)))
    fast_scan = outcome(lambda: scan_header_table(data, segment=NAME, verify_crc=verify_crc).to_headers())
    assert fast_scan == slow_scan
    slow = outcome(lambda: slow_records(data, verify_crc=verify_crc))
    fast = outcome(lambda: decode_record_columns(data, segment=NAME, verify_crc=verify_crc).to_records())
    assert_same_outcome(slow, fast)


BATCHES = [
    build_batch([Record(100, TS, b"a", b"1"), Record(101, TS + 1, None, b"")]),
    build_batch(
        [Record(102, TS + 2, b"b", b"x" * 40), Record(104, TS + 4, b"c", None)],
        compression=CompressionType.ZSTD,
    ),
    build_batch([Record(105, TS + 5, b"d", b"y"), Record(106, TS + 6, b"e", b"z")]),
    build_batch([Record(107, TS + 7, b"f", b"w" * 30)], compression=CompressionType.LZ4),
]
SEGMENT = b"".join(BATCHES)
POS = [sum(len(b) for b in BATCHES[:i]) for i in range(len(BATCHES))]
P = POS[2]  # the batch the damage table breaks (base offset 105)


def edited(edit: Callable[[bytearray], None], *, resealed: int | tuple[int, ...] = ()) -> bytes:
    buf = bytearray(SEGMENT)
    edit(buf)
    for position in (resealed,) if isinstance(resealed, int) else resealed:
        reseal(buf, position)
    return bytes(buf)


def _flip(at: int, mask: int = 0xFF) -> Callable[[bytearray], None]:
    def edit(buf: bytearray) -> None:
        buf[at] ^= mask

    return edit


def _set(at: int, fmt: str, value: int) -> Callable[[bytearray], None]:
    def edit(buf: bytearray) -> None:
        struct.pack_into(fmt, buf, at, value)

    return edit


def _cut(at: int) -> Callable[[bytearray], None]:
    def edit(buf: bytearray) -> None:
        del buf[at:]

    return edit


def _both(*edits: Callable[[bytearray], None]) -> Callable[[bytearray], None]:
    def edit(buf: bytearray) -> None:
        for one in edits:
            one(buf)

    return edit


@dataclass(frozen=True)
class Damage:
    data: bytes
    error: type[CorruptRecordError]
    match: str
    position: int
    offset: int | None


DAMAGE = {
    "truncated-tail": Damage(edited(_cut(P + 40)), TruncatedSegmentError, "entry declares", P, 105),
    "truncated-inside-offset": Damage(edited(_cut(P + 5)), TruncatedSegmentError, "17 needed", P, None),
    "trailing-bytes": Damage(
        SEGMENT + b"\x00" * 3, TruncatedSegmentError, "3 bytes left", len(SEGMENT), None
    ),
    "bad-magic": Damage(edited(_set(P + 16, ">b", 3)), CorruptRecordError, "unknown magic byte 3", P, 105),
    "impossible-length": Damage(
        edited(_set(P + 8, ">i", 13)), CorruptRecordError, "impossible entry size 13", P, 105
    ),
    "impossible-batch-length": Damage(
        edited(_set(P + 8, ">i", 48)), CorruptRecordError, "impossible batch length 48", P, 105
    ),
    "length-past-the-end": Damage(
        edited(_set(P + 8, ">i", 10_000)), TruncatedSegmentError, "declares", P, 105
    ),
    "flipped-crc-byte": Damage(edited(_flip(P + 18)), InvalidCrcError, "CRC mismatch", P, 105),
    "flipped-record-byte": Damage(edited(_flip(P + 70, 0x01)), InvalidCrcError, "CRC mismatch", P, 105),
    "record-length-lies": Damage(
        edited(_flip(P + 61, 0x02), resealed=P), CorruptRecordError, "expected to read", P, 105
    ),
    "records-count-too-high": Damage(
        edited(_set(P + 57, ">i", 3), resealed=P), CorruptRecordError, "runs past", P, 105
    ),
    "records-count-huge": Damage(
        edited(_set(P + 57, ">i", 2**31 - 1), resealed=P), CorruptRecordError, "record 2", P, 105
    ),
    "records-count-too-low": Damage(
        edited(_set(P + 57, ">i", 1), resealed=P), CorruptRecordError, "unconsumed bytes", P, 105
    ),
    "negative-records-count": Damage(
        edited(_set(P + 57, ">i", -1), resealed=P), CorruptRecordError, "invalid batch header", P, 105
    ),
    "damaged-zstd-stream": Damage(
        edited(_set(POS[1] + 61, ">i", 0), resealed=POS[1]), CorruptRecordError, "zstd", POS[1], 102
    ),
    "unknown-codec": Damage(
        edited(_set(POS[1] + 21, ">h", 6), resealed=POS[1]), CorruptRecordError, "codec", POS[1], 102
    ),
    # the first damaged entry wins, whatever the kind of damage after it
    "crc-before-truncation": Damage(
        edited(_both(_cut(POS[3] + 30), _flip(P + 18))), InvalidCrcError, "CRC mismatch", P, 105
    ),
    "records-before-crc": Damage(
        edited(_both(_flip(POS[3] + 18), _flip(P + 61, 0x02)), resealed=P),
        CorruptRecordError,
        "expected to read",
        P,
        105,
    ),
    "records-before-a-legacy-looking-entry": Damage(
        edited(
            _both(_set(P + 57, ">i", 3), _set(POS[3] + 16, ">b", 0), _set(POS[3] + 8, ">i", 9_999)),
            resealed=P,
        ),
        CorruptRecordError,
        "runs past",
        P,
        105,
    ),
    "crc-before-header-in-one-batch": Damage(
        edited(_set(P + 23, ">i", -1)), InvalidCrcError, "CRC mismatch", P, 105
    ),
    "header-before-records": Damage(
        edited(_both(_set(POS[3] + 57, ">i", 5), _set(P + 23, ">i", -1)), resealed=(P, POS[3])),
        CorruptRecordError,
        "invalid batch header",
        P,
        105,
    ),
}


@pytest.mark.parametrize("damage", list(DAMAGE.values()), ids=list(DAMAGE))
def test_damage_is_reported_like_the_python_path(damage: Damage) -> None:
    with pytest.raises(damage.error, match=damage.match) as info:
        decode_record_columns(damage.data, segment=NAME)
    error = info.value
    assert type(error) is damage.error
    assert (error.segment, error.position, error.offset) == (NAME, damage.position, damage.offset)
    with pytest.raises(CorruptRecordError) as slow_info:
        slow_records(damage.data)
    assert (type(slow_info.value), str(slow_info.value)) == (type(error), str(error))


@pytest.mark.parametrize("damage", list(DAMAGE.values()), ids=list(DAMAGE))
@pytest.mark.parametrize("verify_crc", [False, True], ids=["no-crc", "crc"])
def test_header_scan_damage_is_reported_like_the_python_path(damage: Damage, verify_crc: bool) -> None:
    slow = outcome(lambda: list(scan_headers(damage.data, segment=NAME, verify_crc=verify_crc)))
    fast = outcome(lambda: scan_header_table(damage.data, segment=NAME, verify_crc=verify_crc).to_headers())
    assert fast == slow


def test_crc_damage_is_ignored_when_not_verifying() -> None:
    data = DAMAGE["flipped-crc-byte"].data
    assert decode_record_columns(data, verify_crc=False).to_records() == slow_records(SEGMENT)
    assert scan_header_table(data).to_headers() == list(scan_headers(data))


UTF8_EDGES = [
    b"\xc2\x80",  # U+0080
    b"\xc1\xbf",  # overlong
    b"\xe0\x80\x80",  # overlong
    b"\xe0\xa0\x80",  # U+0800
    b"\xed\x9f\xbf",  # U+D7FF
    b"\xed\xa0\x80",  # a surrogate
    b"\xef\xbf\xbf",  # U+FFFF
    b"\xf0\x8f\xbf\xbf",  # overlong
    b"\xf0\x90\x80\x80",  # U+10000
    b"\xf4\x8f\xbf\xbf",  # U+10FFFF
    b"\xf4\x90\x80\x80",  # past U+10FFFF
    b"\xf5\x80\x80\x80",
    b"\xe2\x82",  # truncated
    b"a\x80",  # stray continuation byte
]


@given(
    st.sampled_from(UTF8_EDGES)
    | st.text(min_size=1, max_size=3).map(str.encode)
    | st.binary(min_size=1, max_size=6)
)
def test_header_keys_are_read_as_in_python(key: bytes) -> None:
    """Any bytes are a header key; malformed UTF-8 reads as U+FFFD, as in the Python path (and Kafka)."""
    buf = bytearray(build_batch([Record(0, TS, None, None, (Header("x" * len(key), None),))]))
    buf[-1 - len(key) : -1] = key  # the key sits just before the header value length (-1: one byte)
    reseal(buf, 0)
    data = bytes(buf)
    assert outcome(lambda: decode_record_columns(data, segment=NAME).to_records()) == outcome(
        lambda: slow_records(data)
    )


def test_timestamps_outside_int64_are_corrupt_for_the_columns() -> None:
    # the Python path reads a timestamp past int64 (Python ints are unbounded); the columns cannot hold it
    buf = bytearray(build_batch([Record(0, TS, b"k", b"v"), Record(1, TS + 10, b"k", b"v")]))
    struct.pack_into(">q", buf, 27, INT64_MAX - 5)  # baseTimestamp
    reseal(buf, 0)
    data = bytes(buf)
    assert slow_records(data)[1].timestamp == INT64_MAX + 5
    with pytest.raises(CorruptRecordError, match="does not fit an int64") as info:
        decode_record_columns(data, segment=NAME)
    assert (info.value.position, info.value.offset) == (0, 0)


def test_no_compilation_at_import() -> None:
    code = (
        "import kafka_segments.records.fast;"
        "from kafka_segments.records.fast import decode_kernels as k;"
        "kernels = (k.walk_entries, k.fill_headers, k.decode_records, k.fnv1a64);"
        "print(sum(len(kernel.signatures) for kernel in kernels))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"
