"""Legacy message sets v0/v1 (``kafka_segments.records.legacy``) read through ``records.log``.

Message sets are written by kafka-python's ``LegacyRecordBatchBuilder`` (wrappers then stamped with the offset
and timestamp a broker writes) and every record is compared with kafka-python's own reader. Golden segments,
header fields, mixed v0/v1/v2 segments, and corrupt entries (CRC, truncation, nested compression, zstd, bad
inner data) are covered too.
"""

from __future__ import annotations

import json
import struct
import warnings
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from data.legacy.generate import XXH32, Message
from data.legacy.generate import entry as kp_entries
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import CorruptRecordError, InvalidCrcError, TruncatedSegmentError
from kafka_segments.records import (
    CompressionType,
    LegacyEntry,
    Record,
    RecordBatch,
    TimestampType,
    build_batch,
    iter_batches,
    iter_records,
    read_entry,
    scan_headers,
    scan_valid_prefix,
)
from kafka_segments.records.compression import compress
from kafka_segments.records.legacy import RECORD_OVERHEAD_V0, read_legacy_entry
from kafka_segments.records.lz4_frame import xxh32

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    import kafka.codec
    from kafka.record.memory_records import MemoryRecords

pytestmark = pytest.mark.unit

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "legacy"
TS = 1_700_000_000_000
Row = tuple[int, int, bytes | None, bytes | None]


@pytest.fixture(autouse=True, scope="module")
def kafka_python_xxhash() -> Iterator[None]:
    """kafka-python's v0 lz4 wrappers need ``xxhash`` (checked against known values in test_compression)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kafka.codec, "xxhash", SimpleNamespace(xxh32=XXH32))
        yield


# Writers: kafka-python's builder, plus an independent encoder for hand-made (damaged) messages --------------


def message(
    magic: int,
    offset: int,
    key: bytes | None,
    value: bytes | None,
    *,
    attributes: int = 0,
    timestamp: int = TS,
    crc: int | None = None,
    size: int | None = None,
) -> bytes:
    """One legacy entry written from the schema (crc and size computed unless given)."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for field in (key, value):
        body += struct.pack(">i", -1) if field is None else struct.pack(">i", len(field)) + field
    stored_crc = zlib.crc32(body) if crc is None else crc
    return struct.pack(">qiI", offset, 4 + len(body) if size is None else size, stored_crc) + body


def wrapper(
    magic: int, offset: int, codec: int, inner: bytes, *, timestamp: int = TS, attributes: int = 0
) -> bytes:
    """A compressed wrapper around the (uncompressed) inner message set ``inner``."""
    return message(
        magic,
        offset,
        None,
        compress(codec, inner, magic=max(magic, 2) if codec == 4 else magic),
        attributes=codec | attributes,
        timestamp=timestamp,
    )


def kafka_python_rows(segment: bytes) -> list[Row]:
    rows = []
    reader = MemoryRecords(segment)
    while reader.has_next():
        for record in reader.next_batch():
            timestamp = -1 if record.timestamp is None else record.timestamp
            rows.append((record.offset, timestamp, record.key, record.value))
    return rows


def our_rows(segment: bytes) -> list[Row]:
    return [(r.offset, r.timestamp, r.key, r.value) for r in iter_records(segment, segment="seg.log")]


# Reading what kafka-python writes --------------------------------------------------------------------------

LEGACY_CODECS = [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4]
MESSAGES: list[Message] = [
    (0, TS + 3, b"k0", b"v0"),
    (1, TS + 1, None, b"null key"),
    (2, TS + 2, b"tomb", None),
]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_reads_kafka_python_message_sets(magic: int, codec: CompressionType) -> None:
    base = 41
    if codec == CompressionType.NONE:
        segment = kp_entries(magic, codec, [(base + o, ts, k, v) for o, ts, k, v in MESSAGES])
    elif magic == 1:
        segment = kp_entries(magic, codec, MESSAGES, offset=base + 2, timestamp=TS + 3)
    else:
        segment = kp_entries(
            magic, codec, [(base + o, ts, k, v) for o, ts, k, v in MESSAGES], offset=base + 2
        )
    expected_ts = [TS + 3, TS + 1, TS + 2] if magic == 1 else [-1, -1, -1]
    expected = [(base + i, expected_ts[i], MESSAGES[i][2], MESSAGES[i][3]) for i in range(3)]
    assert our_rows(segment) == expected
    assert kafka_python_rows(segment) == expected
    records = list(iter_records(segment))
    assert all(isinstance(r, Record) and r.headers == () for r in records)
    assert [r.is_tombstone for r in records] == [False, False, True]


def test_log_append_time_wrapper_stamps_its_timestamp_on_inner_messages() -> None:
    log_append_time = TS + 999_000
    segment = kp_entries(
        1, CompressionType.GZIP, MESSAGES, offset=10, timestamp=log_append_time, log_append_time=True
    )
    assert [row[1] for row in our_rows(segment)] == [log_append_time] * 3
    assert our_rows(segment) == kafka_python_rows(segment)
    (header,) = scan_headers(segment)
    assert header.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert header.max_timestamp == header.base_timestamp == log_append_time


def test_create_time_wrapper_keeps_inner_timestamps() -> None:
    segment = kp_entries(1, CompressionType.SNAPPY, MESSAGES, offset=10, timestamp=TS + 3)
    assert [row[1] for row in our_rows(segment)] == [TS + 3, TS + 1, TS + 2]
    (header,) = scan_headers(segment)
    assert header.timestamp_type == TimestampType.CREATE_TIME
    assert header.max_timestamp == TS + 3


def test_uncompressed_log_append_time_message_keeps_its_timestamp() -> None:
    segment = message(1, 5, b"k", b"v", attributes=0x08, timestamp=TS + 7)
    (entry,) = iter_batches(segment)
    assert entry.header.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert entry.records == [Record(5, TS + 7, b"k", b"v")]


nullable = st.none() | st.binary(max_size=40)
legacy_timestamps = st.integers(-1, 2**45)


@st.composite
def legacy_segments(draw: st.DrawFn) -> bytes:
    """A segment of v0/v1 entries, uncompressed or gzip/snappy/lz4 wrappers, with increasing offsets."""
    parts = []
    next_offset = draw(st.integers(0, 2**40))
    for _ in range(draw(st.integers(1, 6))):
        magic = draw(st.sampled_from([0, 1]))
        codec = draw(st.sampled_from(LEGACY_CODECS))
        count = 1 if codec == CompressionType.NONE else draw(st.integers(1, 5))
        rows = [(draw(legacy_timestamps), draw(nullable), draw(nullable)) for _ in range(count)]
        if codec == CompressionType.NONE:
            parts.append(kp_entries(magic, codec, [(next_offset, *rows[0])]))
        else:
            relative = magic == 1
            msgs = [(i if relative else next_offset + i, *row) for i, row in enumerate(rows)]
            stamp: dict[str, Any] = {"offset": next_offset + count - 1}
            if magic == 1:
                stamp["timestamp"] = draw(legacy_timestamps)
                stamp["log_append_time"] = draw(st.booleans())
            parts.append(kp_entries(magic, codec, msgs, **stamp))
        next_offset += count + draw(st.integers(0, 3))
    return b"".join(parts)


@given(segment=legacy_segments())
def test_every_record_matches_kafka_python(segment: bytes) -> None:
    assert our_rows(segment) == kafka_python_rows(segment)
    headers = list(scan_headers(segment, verify_crc=True))
    entries = list(iter_batches(segment))
    assert [entry.header for entry in entries] == headers
    for entry in entries:
        assert isinstance(entry, LegacyEntry)
        assert entry.header.records_count == len(entry.records)
        assert entry.header.base_offset == entry.records[0].offset
        assert entry.header.last_offset == entry.records[-1].offset
        assert entry.is_valid()
    assert sum(h.size_in_bytes for h in headers) == len(segment)


# Header fields ---------------------------------------------------------------------------------------------


def test_header_of_an_uncompressed_v1_message() -> None:
    segment = message(1, 77, b"key", b"value", timestamp=TS)
    (header,) = scan_headers(segment)
    assert header.base_offset == header.last_offset == 77
    assert header.last_offset_delta == 0
    assert header.batch_length == len(segment) - 12
    assert header.size_in_bytes == len(segment)
    assert header.magic == 1
    assert header.crc == struct.unpack_from(">I", segment, 12)[0] == zlib.crc32(segment[16:])
    assert header.attributes == 0
    assert header.compression == CompressionType.NONE
    assert header.base_timestamp == header.max_timestamp == TS
    assert (header.partition_leader_epoch, header.producer_id, header.producer_epoch) == (-1, -1, -1)
    assert header.base_sequence == -1
    assert header.records_count == 1
    assert header.position == 0
    assert not header.is_transactional
    assert not header.is_control


def test_header_of_a_v0_wrapper() -> None:
    inner = b"".join(message(0, 50 + i, b"k%d" % i, b"v") for i in range(4))
    segment = message(1, 0, b"pad", b"") + wrapper(0, 53, CompressionType.SNAPPY, inner)
    first, header = scan_headers(segment)
    assert header.position == first.size_in_bytes
    assert (header.base_offset, header.last_offset, header.records_count) == (50, 53, 4)
    assert header.magic == 0
    assert header.compression == CompressionType.SNAPPY
    assert header.attributes == CompressionType.SNAPPY
    assert header.timestamp_type == TimestampType.NO_TIMESTAMP_TYPE
    assert header.base_timestamp == header.max_timestamp == -1


def test_v1_wrapper_offsets_are_relative_to_its_last_message() -> None:
    inner = message(1, 0, b"a", b"1") + message(1, 2, b"b", b"2") + message(1, 5, b"c", b"3")
    segment = wrapper(1, 1005, CompressionType.GZIP, inner, timestamp=TS)
    assert [r.offset for r in iter_records(segment)] == [1000, 1002, 1005]
    (header,) = scan_headers(segment)
    assert (header.base_offset, header.last_offset_delta, header.records_count) == (1000, 5, 3)


def test_v1_wrapper_at_offset_zero_uses_base_zero() -> None:
    """librdkafka producers may leave the wrapper offset 0; Kafka then reads inner offsets as absolute."""
    inner = message(1, 0, b"a", b"1") + message(1, 1, b"b", b"2")
    segment = wrapper(1, 0, CompressionType.LZ4, inner)
    assert [r.offset for r in iter_records(segment)] == [0, 1]


def test_v0_lz4_wrapper_with_the_spec_checksum_is_accepted() -> None:
    """Kafka ignores the HC byte of v0 frames, so a correct checksum is fine too."""
    inner = message(0, 7, b"k", b"v")
    frame = compress(CompressionType.LZ4, inner, magic=2)
    segment = message(0, 7, None, frame, attributes=CompressionType.LZ4)
    assert our_rows(segment) == [(7, -1, b"k", b"v")]


def test_entry_surface() -> None:
    segment = message(0, 3, b"k", b"v")
    entry = read_entry(segment, 0, segment="s.log")
    assert isinstance(entry, LegacyEntry)
    assert entry.segment == "s.log"
    assert bytes(entry.raw) == segment
    assert entry.offset == 3
    assert entry.compute_crc() == zlib.crc32(segment[16:]) == entry.header.crc
    entry.verify_crc()
    assert RECORD_OVERHEAD_V0 == 14


# Golden segments -------------------------------------------------------------------------------------------


def _expected_rows(expected: dict[str, Any]) -> list[Row]:
    return [
        (o, ts, None if k is None else bytes.fromhex(k), None if v is None else bytes.fromhex(v))
        for e in expected["entries"]
        for o, ts, k, v in e["records"]
    ]


@pytest.mark.parametrize("name", ["v0", "v1", "mixed"])
def test_golden_segment(name: str) -> None:
    segment = (GOLDEN / f"{name}.log").read_bytes()
    expected = json.loads((GOLDEN / f"{name}.json").read_text())
    assert our_rows(segment) == _expected_rows(expected)
    assert kafka_python_rows(segment) == _expected_rows(expected)
    headers = list(scan_headers(segment, segment=f"{name}.log", verify_crc=True))
    assert len(headers) == len(expected["entries"])
    for header, entry in zip(headers, expected["entries"], strict=True):
        assert header.position == entry["position"]
        if header.magic < 2:
            assert header.last_offset == entry["offset_field"]
        else:
            assert header.base_offset == entry["offset_field"]
        assert header.batch_length == entry["size"]
        assert header.magic == entry["magic"]
        assert header.compression == entry["codec"]
        assert header.max_timestamp == entry["max_timestamp"]
        assert header.base_offset == entry["base_offset"]
        assert header.records_count == len(entry["records"])


def test_golden_v0_lz4_wrapper_has_the_broken_header_checksum() -> None:
    segment = (GOLDEN / "v0.log").read_bytes()
    entry = next(e for e in iter_batches(segment) if e.header.compression == CompressionType.LZ4)
    frame = bytes(entry.raw[12 + 4 + 2 + 4 + 4 :])  # crc, magic+attributes, key length (-1), value length
    assert frame[6] == (xxh32(frame[:6]) >> 8) & 0xFF


# Mixed segments --------------------------------------------------------------------------------------------


def test_mixed_v0_v1_v2_segment() -> None:
    v2 = build_batch([Record(12, TS + 12, b"c", b"3"), Record(13, TS + 13, None, None)])
    v1_wrapper = kp_entries(
        1, CompressionType.GZIP, [(0, TS + 10, b"b0", b"x"), (1, TS + 11, b"b1", b"y")], offset=11
    )
    segment = message(0, 9, b"a", b"1") + v1_wrapper + v2
    entries = list(iter_batches(segment, segment="mixed.log"))
    assert [type(e) for e in entries] == [LegacyEntry, LegacyEntry, RecordBatch]
    assert [e.header.magic for e in entries] == [0, 1, 2]
    headers = list(scan_headers(segment))
    assert [h.base_offset for h in headers] == [9, 10, 12]
    assert [h.last_offset for h in headers] == [9, 11, 13]
    first_size = len(segment) - len(v1_wrapper) - len(v2)
    assert [h.position for h in headers] == [0, first_size, first_size + len(v1_wrapper)]
    assert our_rows(segment) == kafka_python_rows(segment)
    assert [r.offset for r in iter_records(segment)] == [9, 10, 11, 12, 13]
    assert scan_valid_prefix(segment).is_clean


# Corruption ------------------------------------------------------------------------------------------------


def _flip(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 0xFF
    return bytes(out)


def test_flipped_crc_byte_is_an_invalid_crc_error() -> None:
    first = message(1, 20, b"a", b"1")
    second = kp_entries(1, CompressionType.GZIP, MESSAGES, offset=23, timestamp=TS)
    segment = first + _flip(second, 13)
    with pytest.raises(InvalidCrcError) as info:
        list(iter_batches(segment, segment="00000000000000000020.log"))
    assert (info.value.segment, info.value.position, info.value.offset) == (
        "00000000000000000020.log",
        len(first),
        23,
    )
    assert "legacy message CRC mismatch" in info.value.reason
    with pytest.raises(InvalidCrcError):
        list(scan_headers(segment, verify_crc=True))
    assert [h.records_count for h in scan_headers(segment)] == [1, 3]  # no CRC check: still readable
    entry = read_entry(segment, len(first))
    assert not entry.is_valid()
    scan = scan_valid_prefix(segment)
    assert scan.valid_bytes == len(first)
    assert isinstance(scan.damage, InvalidCrcError)


def test_flipped_payload_byte_is_an_invalid_crc_error() -> None:
    segment = message(0, 4, b"key", b"value")
    damaged = _flip(segment, len(segment) - 1)
    with pytest.raises(InvalidCrcError, match="CRC mismatch") as info:
        list(iter_records(damaged))
    assert (info.value.position, info.value.offset) == (0, 4)


def test_unreadable_wrapper_with_bad_crc_reports_the_crc() -> None:
    segment = kp_entries(0, CompressionType.GZIP, [(0, None, b"k", b"v" * 100)], offset=0)
    damaged = _flip(segment, len(segment) - 6)  # inside the gzip trailer: cannot decompress
    with pytest.raises(InvalidCrcError, match="the message is also unreadable: cannot decompress the GZIP"):
        list(scan_headers(damaged))


def test_truncated_wrapper() -> None:
    segment = message(1, 0, b"a", b"1") + kp_entries(1, CompressionType.LZ4, MESSAGES, offset=3, timestamp=TS)
    with pytest.raises(TruncatedSegmentError) as info:
        list(iter_batches(segment[:-5]))
    assert info.value.position == len(message(1, 0, b"a", b"1"))
    assert info.value.offset == 3


@pytest.mark.parametrize("codec", [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4])
def test_wrapper_with_truncated_compressed_value(codec: CompressionType) -> None:
    inner = b"".join(message(1, i, b"k", b"v" * 500) for i in range(3))
    value = compress(codec, inner, magic=1)
    segment = message(1, 2, None, value[: len(value) * 2 // 3], attributes=codec)
    with pytest.raises(CorruptRecordError, match=f"cannot decompress the {codec.name} message set") as info:
        list(iter_batches(segment))
    assert not isinstance(info.value, InvalidCrcError)
    assert (info.value.position, info.value.offset) == (0, 2)


def test_nested_compression_is_corrupt() -> None:
    innermost = message(1, 0, b"k", b"v")
    nested = wrapper(1, 0, CompressionType.GZIP, innermost)
    segment = wrapper(1, 10, CompressionType.SNAPPY, nested)
    with pytest.raises(CorruptRecordError, match="inner messages must not be compressed") as info:
        list(iter_records(segment))
    assert info.value.offset == 10


@pytest.mark.parametrize("magic", [0, 1])
def test_zstd_in_a_legacy_message_is_corrupt(magic: int) -> None:
    segment = wrapper(magic, 0, CompressionType.ZSTD, message(magic, 0, b"k", b"v"))
    with pytest.raises(CorruptRecordError, match=f"zstd compression is not valid in a magic {magic} message"):
        list(scan_headers(segment))


@pytest.mark.parametrize("codec", [5, 6, 7])
def test_unknown_codec_in_a_legacy_message_is_corrupt(codec: int) -> None:
    segment = message(1, 0, None, b"whatever", attributes=codec)
    with pytest.raises(CorruptRecordError, match=f"unknown compression codec id {codec}"):
        list(iter_batches(segment))


def _bad_inner_cases() -> list[tuple[str, bytes, str]]:
    good = message(1, 0, b"k", b"v")
    return [
        ("null value", message(1, 0, None, None, attributes=CompressionType.GZIP), "has a null value"),
        ("empty set", wrapper(1, 0, CompressionType.GZIP, b""), "holds no inner messages"),
        (
            "tiny size",
            wrapper(1, 0, CompressionType.GZIP, good + struct.pack(">qi", 1, 13) + bytes(13)),
            "size 13",
        ),
        (
            "key past end",
            wrapper(1, 0, CompressionType.GZIP, good[:26] + struct.pack(">i", 50) + good[30:]),
            "key of 50 bytes runs past",
        ),
        (
            "wrapper below inner",
            wrapper(1, 2, CompressionType.GZIP, message(1, 0, b"a", b"") + message(1, 5, b"b", b"")),
            "less than",
        ),
        (
            "v0 wrapper below inner",
            wrapper(0, 2, CompressionType.GZIP, message(0, 3, b"a", b"")),
            "below the offset of its first",
        ),
        (
            "garbage value",
            message(0, 0, None, b"not gzip", attributes=CompressionType.GZIP),
            "cannot decompress the GZIP",
        ),
    ]


@pytest.mark.parametrize(
    ("segment", "reason"), [pytest.param(c[1], c[2], id=c[0]) for c in _bad_inner_cases()]
)
def test_bad_inner_data_is_corrupt(segment: bytes, reason: str) -> None:
    with pytest.raises(CorruptRecordError, match=reason) as info:
        list(scan_headers(segment, segment="bad.log"))
    assert not isinstance(info.value, InvalidCrcError)
    assert info.value.segment == "bad.log"
    assert info.value.position == 0


def _taken_cases() -> list[tuple[str, bytes, list[Record]]]:
    good = message(1, 0, b"k", b"v")
    record = Record(0, TS, b"k", b"v")
    return [
        ("bytes after the inner set", wrapper(1, 0, CompressionType.GZIP, good + b"\x00" * 5), [record]),
        (
            "a cut inner message",
            wrapper(1, 1, CompressionType.GZIP, good + good[:-3]),
            [replace(record, offset=1)],
        ),
        (
            "an inner magic 2 read in v1's layout",
            wrapper(1, 0, CompressionType.GZIP, good[:16] + b"\x02" + good[17:]),
            [record],
        ),
        (
            "a key length of -2 is null",
            sealed(message(0, 8, b"", b"v")[:18] + struct.pack(">i", -2) + b"\x00\x00\x00\x01v"),
            [Record(8, -1, None, b"v")],
        ),
        ("bytes after the value", sealed(message(0, 8, b"k", b"v") + b"??"), [Record(8, -1, b"k", b"v")]),
    ]


def sealed(entry: bytes) -> bytes:
    """``entry`` with its size and CRC made right for what it now holds."""
    fixed = bytearray(entry)
    struct.pack_into(">i", fixed, 8, len(entry) - 12)
    struct.pack_into(">I", fixed, 12, zlib.crc32(fixed[16:]))
    return bytes(fixed)


@pytest.mark.parametrize(
    ("segment", "records"), [pytest.param(*case[1:], id=case[0]) for case in _taken_cases()]
)
def test_what_kafkas_legacy_readers_take(segment: bytes, records: list[Record]) -> None:
    """Kafka's ``LegacyRecord`` reads any negative length as null and nothing after the value; its
    ``DataLogInputStream`` ends an inner set at the end of the stream, and the cleaner reads any inner
    magic but 0 in v1's layout (checked with Kafka's own cleaner, docs/fidelity.md)."""
    assert list(iter_records(segment, segment="taken.log")) == records


def _bad_outer_cases() -> list[tuple[str, bytes, str]]:
    v1 = message(1, 8, b"key", b"value")
    return [
        (
            "key past end",
            message(0, 8, b"kk", None)[:18] + struct.pack(">i", 50) + b"kkkkkk",
            "key of 50 bytes runs past",
        ),
        (
            "value past end",
            message(0, 8, None, b"")[:22] + struct.pack(">i", 9) + b"vvv",
            "value of 9 bytes runs past",
        ),
        ("short v1", v1[:18] + bytes(9), "shorter than the minimum 22"),
        ("cut value length", message(0, 8, b"kkkkkk", b"v")[:-4], "ends inside the value length"),
    ]


@pytest.mark.parametrize("fix_crc", [True, False])
@pytest.mark.parametrize(("entry", "reason"), [pytest.param(c[1], c[2], id=c[0]) for c in _bad_outer_cases()])
def test_malformed_message(entry: bytes, reason: str, fix_crc: bool) -> None:
    fixed = bytearray(entry)
    struct.pack_into(">i", fixed, 8, len(entry) - 12)
    if fix_crc:
        struct.pack_into(">I", fixed, 12, zlib.crc32(fixed[16:]))
    segment = message(0, 7, b"ok", b"ok") + bytes(fixed)
    with pytest.raises(CorruptRecordError, match=reason) as info:
        list(iter_batches(segment, verify_crc=False))
    assert isinstance(info.value, InvalidCrcError) is not fix_crc
    assert (info.value.position, info.value.offset) == (len(message(0, 7, b"ok", b"ok")), 8)


def test_read_legacy_entry_checks_its_size_field() -> None:
    entry = message(0, 1, b"k", b"v")
    with pytest.raises(CorruptRecordError, match="disagrees"):
        read_legacy_entry(memoryview(entry + b"x"), segment="s", position=40)
    with pytest.raises(CorruptRecordError, match="shorter than the minimum 26") as info:
        read_legacy_entry(memoryview(entry[:20]), segment="s", position=40)
    assert (info.value.position, info.value.offset) == (40, 1)
