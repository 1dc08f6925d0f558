"""Regenerate the legacy (v0/v1) golden segments: ``.venv/bin/python tests/data/legacy/generate.py``.

Every message is written by kafka-python's ``LegacyRecordBatchBuilder``; compressed wrappers then get the
offset (and for v1 the timestamp / LogAppendTime bit, CRC recomputed) a broker would have stamped, because
kafka-python's producer writes wrapper offset 0 and timestamp 0. ``mixed.log`` ends with a v2 batch from
``kafka_segments.records.builder.build_batch``. Each ``<name>.json`` holds the expected entries and records;
the records are taken from kafka-python's own reader (``MemoryRecords``). kafka-python's gzip writer stamps
the current time in the gzip header; the generator zeroes that field so that a rerun gives the same bytes.
"""

from __future__ import annotations

import json
import struct
import warnings
import zlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from kafka_segments.records import CompressionType, Record, build_batch
from kafka_segments.records.lz4_frame import xxh32

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    import kafka.codec
    import kafka.record.legacy_records
    from kafka.record.legacy_records import LegacyRecordBatchBuilder
    from kafka.record.memory_records import MemoryRecords

HERE = Path(__file__).resolve().parent
TS = 1_700_000_000_000
LOG_APPEND_TIME = TS + 777_000

Message = tuple[int, int | None, bytes | None, bytes | None]  # offset (absolute or relative), ts, key, value


class XXH32:
    """What kafka-python uses of the ``xxhash`` package (not installed here): ``xxh32(data).digest()``."""

    def __init__(self, data: bytes) -> None:
        self._value = xxh32(data)

    def digest(self) -> bytes:
        return self._value.to_bytes(4, "big")


def gzip_encode_without_mtime(payload: bytes, compresslevel: int | None = None) -> bytes:
    """kafka-python's gzip writer with the header's MTIME field (bytes 4-7) zeroed."""
    member = bytearray(kafka.codec.gzip_encode(payload, compresslevel))
    member[4:8] = bytes(4)
    return bytes(member)


def restamp(
    entry: bytes, *, offset: int, timestamp: int | None = None, log_append_time: bool = False
) -> bytes:
    """Set a wrapper's offset and (v1) timestamp / timestamp-type bit as the broker does; fix the CRC."""
    out = bytearray(entry)
    struct.pack_into(">q", out, 0, offset)
    if out[16] == 1:
        if log_append_time:
            out[17] |= 0x08
        if timestamp is not None:
            struct.pack_into(">q", out, 18, timestamp)
    struct.pack_into(">I", out, 12, zlib.crc32(out[16:]))
    return bytes(out)


def entry(magic: int, codec: int, messages: list[Message], **stamp: Any) -> bytes:
    builder = LegacyRecordBatchBuilder(magic, codec, batch_size=1 << 30)
    for offset, timestamp, key, value in messages:
        builder.append(offset, timestamp, key, value)
    built = bytes(builder.build())
    return restamp(built, **stamp) if codec else built


def v0_segment() -> bytes:
    return b"".join(
        [
            entry(0, 0, [(0, None, b"k0", b"v0")]),
            entry(0, 0, [(1, None, None, b"null key")]),
            entry(0, 0, [(2, None, b"tombstone", None)]),
            entry(
                0, 1, [(3, None, b"g3", b"gzip-3"), (4, None, b"g4", b""), (5, None, None, None)], offset=5
            ),
            entry(0, 2, [(6, None, b"s6", b"snappy-6" * 50), (7, None, b"s7", b"snappy-7")], offset=7),
            entry(0, 3, [(8, None, b"l8", b"lz4-8"), (9, None, b"l9", b"lz4-9" * 300)], offset=9),
        ]
    )


def v1_segment() -> bytes:
    return b"".join(
        [
            entry(1, 0, [(100, TS, b"k100", b"v100")]),
            entry(1, 0, [(101, -1, None, b"no timestamp")]),
            entry(1, 0, [(102, TS + 2, b"tombstone", None)]),
            entry(
                1,
                1,
                [(0, TS + 10, b"g103", b"gzip"), (1, TS + 5, None, b"x" * 1000), (2, TS + 12, b"g105", None)],
                offset=105,
                timestamp=TS + 12,
            ),
            entry(
                1,
                2,
                [(0, TS + 20, b"s106", b"snappy"), (1, TS + 21, b"s107", b"log append time")],
                offset=107,
                timestamp=LOG_APPEND_TIME,
                log_append_time=True,
            ),
            entry(
                1,
                3,
                [(0, TS + 30, b"l108", b"lz4" * 1000), (1, TS + 31, b"l109", b"")],
                offset=109,
                timestamp=TS + 31,
            ),
        ]
    )


def mixed_segment() -> bytes:
    v2 = build_batch(
        [Record(1000, TS + 100, b"v2-key", b"v2-value"), Record(1001, TS + 101, None, None)],
        compression=CompressionType.GZIP,
    )
    return b"".join(
        [
            entry(0, 0, [(997, None, b"v0-key", b"v0-value")]),
            entry(1, 1, [(0, TS + 50, b"v1-key", b"v1-value")], offset=998, timestamp=TS + 50),
            entry(1, 0, [(999, TS + 60, None, b"v1-plain")]),
            v2,
        ]
    )


def _hex(data: bytes | None) -> str | None:
    return None if data is None else data.hex()


def describe(segment: bytes) -> dict[str, Any]:
    """Every entry: its prefix and header fields read from the raw bytes, its records from kafka-python."""
    entries = []
    reader = MemoryRecords(segment)
    pos = 0
    while reader.has_next():
        batch = reader.next_batch()
        offset_field, size = struct.unpack_from(">qi", segment, pos)
        magic = segment[pos + 16]
        records = [
            [r.offset, -1 if r.timestamp is None else r.timestamp, _hex(r.key), _hex(r.value)] for r in batch
        ]
        if magic == 2:
            codec = segment[pos + 22] & 0x07
            (max_timestamp,) = struct.unpack_from(">q", segment, pos + 35)
        else:
            codec = segment[pos + 17] & 0x07
            max_timestamp = struct.unpack_from(">q", segment, pos + 18)[0] if magic == 1 else -1
        entries.append(
            {
                "position": pos,
                "offset_field": offset_field,
                "size": size,
                "magic": magic,
                "codec": codec,
                "max_timestamp": max_timestamp,
                "base_offset": records[0][0],
                "records": records,
            }
        )
        pos += 12 + size
    if pos != len(segment):
        raise ValueError("kafka-python did not read the whole segment")
    return {"entries": entries}


def main() -> None:
    kafka.codec.xxhash = SimpleNamespace(xxh32=XXH32)  # kafka-python's lz4 v0 needs the xxhash package
    kafka.record.legacy_records.gzip_encode = gzip_encode_without_mtime
    for name, segment in (("v0", v0_segment()), ("v1", v1_segment()), ("mixed", mixed_segment())):
        (HERE / f"{name}.log").write_bytes(segment)
        (HERE / f"{name}.json").write_text(json.dumps(describe(segment), indent=1) + "\n")


if __name__ == "__main__":
    main()
