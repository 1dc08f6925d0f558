"""Logs for the compaction tests, built the way Kafka's LogCleanerTest builds them.

``LogBuilder`` appends batches at increasing offsets and rolls segments by hand: ``rec(k, v)`` is one v2
batch with a single record whose key and value are the decimal strings of ``k`` and ``v`` (``None``: a
tombstone), ``txn(pid, keys)`` one transactional batch of producer ``pid`` with value = key, ``commit`` /
``abort`` the markers. ``segments()`` gives the log as ``SourceSegment`` objects.
Observables follow LogCleanerTest's: ``keys_of`` / ``offsets_of`` / ``batch_lasts`` / ``last_sequences``.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from kafka_segments.compaction.rewrite import RoundResult
from kafka_segments.compaction.source import SourceSegment
from kafka_segments.records import (
    CompressionType,
    ControlRecordType,
    EndTransactionMarker,
    Record,
    RecordBatch,
    TimestampType,
    build_batch,
    build_end_transaction_marker,
    iter_batches,
)
from kafka_segments.records.batch import NO_PRODUCER_ID, NO_SEQUENCE, BatchHeader
from kafka_segments.records.compression import compress

NOW = 1_700_000_000_000
DAY = 86_400_000
L = 9223372036768375806
"""Long.MAX - 86400000 - 1: LogCleanerTest's "largeTimestamp"."""


def key_bytes(key: int | str) -> bytes:
    return str(key).encode()


@dataclass
class LogBuilder:
    """A partition log under construction: a list of segments, each a list of batch bytes."""

    timestamp: int = NOW
    chunks: list[tuple[int, list[bytes]]] = field(default_factory=lambda: [(0, [])])
    """(base offset, batch bytes) of every segment, the last one active."""
    next_offset: int = 0
    sequences: dict[int, int] = field(default_factory=dict)

    def append(self, batch: bytes) -> int:
        """Append raw batch bytes whose offsets start at ``next_offset``; returns the base offset."""
        header = next(iter_batches(batch, verify_crc=False)).header
        _, batches = self.chunks[-1]
        if not batches:
            self.chunks[-1] = (header.base_offset, batches)
        batches.append(batch)
        self.next_offset = header.last_offset + 1
        return header.base_offset

    def records(
        self,
        pairs: Sequence[tuple[int | str | None, int | str | None]],
        *,
        producer_id: int = NO_PRODUCER_ID,
        epoch: int = 0,
        transactional: bool = False,
        codec: CompressionType = CompressionType.NONE,
        timestamp: int | None = None,
        log_append_time: bool = False,
    ) -> int:
        """One batch holding ``pairs`` (key, value); ``None`` key = unkeyed, ``None`` value = tombstone."""
        ts = self.timestamp if timestamp is None else timestamp
        base = self.next_offset
        recs = [
            Record(
                base + i,
                ts,
                None if k is None else key_bytes(k),
                None if v is None else str(v).encode(),
            )
            for i, (k, v) in enumerate(pairs)
        ]
        sequence = NO_SEQUENCE
        if producer_id != NO_PRODUCER_ID:
            sequence = self.sequences.get(producer_id, 0)
            self.sequences[producer_id] = sequence + len(pairs)
        return self.append(
            build_batch(
                recs,
                compression=codec,
                producer_id=producer_id,
                producer_epoch=epoch if producer_id != NO_PRODUCER_ID else -1,
                base_sequence=sequence,
                is_transactional=transactional,
                timestamp_type=TimestampType.LOG_APPEND_TIME
                if log_append_time
                else TimestampType.CREATE_TIME,
                log_append_time=ts if log_append_time else None,
            )
        )

    def rec(self, key: int | str | None, value: int | str | None, **options: object) -> int:
        return self.records([(key, value)], **options)  # type: ignore[arg-type]

    def tomb(self, key: int | str, **options: object) -> int:
        return self.records([(key, None)], **options)  # type: ignore[arg-type]

    def txn(self, producer_id: int, keys: Sequence[int], **options: object) -> int:
        pairs = [(k, k) for k in keys]
        return self.records(pairs, producer_id=producer_id, transactional=True, **options)  # type: ignore[arg-type]

    def marker(
        self, producer_id: int, kind: ControlRecordType, *, epoch: int = 0, timestamp: int | None = None
    ) -> int:
        return self.append(
            build_end_transaction_marker(
                EndTransactionMarker(kind, 0),
                offset=self.next_offset,
                timestamp=self.timestamp if timestamp is None else timestamp,
                producer_id=producer_id,
                producer_epoch=epoch,
            )
        )

    def commit(self, producer_id: int, **options: object) -> int:
        return self.marker(producer_id, ControlRecordType.COMMIT, **options)  # type: ignore[arg-type]

    def abort(self, producer_id: int, **options: object) -> int:
        return self.marker(producer_id, ControlRecordType.ABORT, **options)  # type: ignore[arg-type]

    def roll(self) -> None:
        """Close the active segment; the next one starts at the log end offset (an empty one stays open)."""
        if self.chunks[-1][1]:
            self.chunks.append((self.next_offset, []))

    def segments(self, *, mtime: int = NOW) -> list[SourceSegment]:
        return [
            SourceSegment(f"t-0/{base:020d}.log", base, b"".join(batches), mtime)
            for base, batches in self.chunks
        ]

    def apply(self, result: RoundResult) -> None:
        """Swap the round's cleaned segments in for the segments they replace (``replaceSegments``)."""
        kept = [chunk for chunk in self.chunks if chunk[0] >= result.end_offset]
        cleaned = [(segment.base_offset, [segment.data]) for segment in result.segments]
        self.chunks = cleaned + kept

    def data(self) -> bytes:
        return b"".join(batch for _, batches in self.chunks for batch in batches)


def batches_of(data: bytes | Sequence[bytes]) -> list[RecordBatch]:
    buf = data if isinstance(data, bytes) else b"".join(data)
    return [b for b in iter_batches(buf) if isinstance(b, RecordBatch)]


def headers_of(data: bytes | Sequence[bytes]) -> list[BatchHeader]:
    return [b.header for b in batches_of(data)]


def keys_of(data: bytes | Sequence[bytes]) -> list[int]:
    """LogCleanerTest's ``keysInLog``: keys of non-control records with a value, in log order."""
    return [
        int(r.key)
        for b in batches_of(data)
        if not b.header.is_control
        for r in b.records
        if r.key is not None and r.value is not None
    ]


def offsets_of(data: bytes | Sequence[bytes]) -> list[int]:
    """LogCleanerTest's ``offsetsInLog``: offsets of every record with key and value, transaction markers
    included."""
    return [
        r.offset for b in batches_of(data) for r in b.records if r.key is not None and r.value is not None
    ]


def batch_lasts(data: bytes | Sequence[bytes]) -> list[int]:
    return [h.last_offset for h in headers_of(data)]


def last_sequences(data: bytes | Sequence[bytes]) -> dict[int, int]:
    return {
        h.producer_id: h.last_sequence for h in headers_of(data) if not h.is_control and h.has_producer_id
    }


def legacy_message(
    magic: int,
    offset: int,
    key: bytes | None,
    value: bytes | None,
    *,
    attributes: int = 0,
    timestamp: int = NOW,
) -> bytes:
    """One v0/v1 entry written from the schema (``LegacyRecord``): offset, size, CRC-32, magic, attributes,
    [timestamp], key, value."""
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for part in (key, value):
        body += struct.pack(">i", -1) if part is None else struct.pack(">i", len(part)) + part
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


def legacy_wrapper(offset: int, codec: CompressionType, inner: bytes, *, timestamp: int = NOW) -> bytes:
    """A compressed v1 wrapper at ``offset`` (its last inner message's) around ``inner`` (relative)."""
    return legacy_message(
        1, offset, None, compress(codec, inner, magic=1), attributes=int(codec), timestamp=timestamp
    )
