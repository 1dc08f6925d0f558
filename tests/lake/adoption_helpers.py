"""Helpers of the adoption tests: a store wrapper that counts body reads, and segments made to order
(transactional, cut to a prefix, damaged)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence

from forwarding_store import ForwardingStore
from kafka_segments.records.builder import build_batch
from kafka_segments.records.control import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker,
)
from kafka_segments.records.log import scan_headers
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import SegmentFiles, write_segment
from kafka_segments.storage import ObjectStore
from kit import T0


class CountingStore(ForwardingStore):
    """An ``ObjectStore`` that forwards to ``inner`` and counts ``get`` / ``get_range`` calls per key."""

    def __init__(self, inner: ObjectStore) -> None:
        super().__init__(inner)
        self.reads: Counter[str] = Counter()
        self._lock = threading.Lock()

    def body_reads(self, *, suffix: str = ".log") -> dict[str, int]:
        """Reads of keys ending with ``suffix`` (segment bodies by default)."""
        return {key: count for key, count in self.reads.items() if key.endswith(suffix)}

    def _count(self, key: str) -> None:
        with self._lock:
            self.reads[key] += 1

    def get(self, key: str) -> bytes:
        self._count(key)
        return self.inner.get(key)

    def get_range(self, key: str, *, start: int, end: int, if_match: str | None = None) -> bytes:
        self._count(key)
        return self.inner.get_range(key, start=start, end=end, if_match=if_match)


def records(first: int, count: int, *, timestamp_ms: int = T0, value: bytes = b"v") -> list[Record]:
    return [Record(first + i, timestamp_ms + i, f"k{first + i}".encode(), value) for i in range(count)]


def plain_batch(first: int, count: int = 2, *, timestamp_ms: int = T0) -> bytes:
    return build_batch(records(first, count, timestamp_ms=timestamp_ms))


def txn_batch(first: int, count: int, *, producer_id: int, epoch: int = 0) -> bytes:
    """A transactional data batch of ``producer_id``."""
    return build_batch(
        records(first, count),
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=0,
        is_transactional=True,
    )


def commit_marker(offset: int, *, producer_id: int, epoch: int = 0) -> bytes:
    return build_end_transaction_marker(
        EndTransactionMarker(ControlRecordType.COMMIT, coordinator_epoch=1),
        offset=offset,
        timestamp=T0 + offset,
        producer_id=producer_id,
        producer_epoch=epoch,
    )


def segment_of(batches: Sequence[bytes], *, base_offset: int | None = None) -> SegmentFiles:
    return write_segment(batches, base_offset=base_offset)


def prefix_bytes(log: bytes, batches: int) -> bytes:
    """The bytes of the first ``batches`` entries of a ``.log``."""
    headers = list(scan_headers(log))
    if batches == 0:
        return b""
    last = headers[batches - 1]
    return log[: last.position + last.size_in_bytes]


def batch_position(log: bytes, index: int) -> int:
    """The byte position of entry ``index``."""
    return next(h.position for i, h in enumerate(scan_headers(log)) if i == index)


def flip_byte(data: bytes, position: int) -> bytes:
    return data[:position] + bytes([data[position] ^ 0xFF]) + data[position + 1 :]
