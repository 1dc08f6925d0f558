"""Writing one partition's log for the demo lake the way a broker would have appended it: offsets in append
order, producer sequence numbers, COMMIT/ABORT markers (``MemoryRecords.withEndTransactionMarker``) and
segment rolls where told, with every index."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.batch import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE
from kafka_segments.records.builder import build_batch
from kafka_segments.records.control import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker,
)
from kafka_segments.records.record import Header, Record
from kafka_segments.segment.writer import SegmentFiles, write_segment

MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS
DAY_MS = 24 * HOUR_MS
DEMO_INDEX_INTERVAL_BYTES = 1024
"""Small, so that the demo's segments (a few KiB each) have offset and time index entries."""


@dataclass(frozen=True, slots=True)
class Message:
    """What a producer sends: a timestamp (CreateTime), key, value (``None`` = tombstone), headers."""

    timestamp_ms: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()


@dataclass(frozen=True, slots=True)
class Producer:
    """A producer session: its id and epoch (``NO_PRODUCER_ID``: a plain, non-idempotent producer)."""

    producer_id: int = NO_PRODUCER_ID
    epoch: int = NO_PRODUCER_EPOCH


PLAIN = Producer()


class PartitionLog:
    """One partition's batches in offset order, split into segments at ``roll()``."""

    def __init__(self, *, coordinator_epoch: int = 0) -> None:
        self.next_offset = 0
        self._segments: list[list[bytes]] = [[]]
        self._sequences: dict[int, int] = {}
        self._coordinator_epoch = coordinator_epoch

    def append(
        self,
        messages: Sequence[Message],
        *,
        producer: Producer = PLAIN,
        transactional: bool = False,
        compression: CompressionType = CompressionType.NONE,
    ) -> int:
        """Append one batch of ``messages``; returns its base offset."""
        base = self.next_offset
        records = [
            Record(base + index, m.timestamp_ms, m.key, m.value, m.headers)
            for index, m in enumerate(messages)
        ]
        sequence = NO_SEQUENCE
        if producer.producer_id != NO_PRODUCER_ID:
            sequence = self._sequences.get(producer.producer_id, 0)
            self._sequences[producer.producer_id] = sequence + len(records)
        self._segments[-1].append(
            build_batch(
                records,
                compression=compression,
                producer_id=producer.producer_id,
                producer_epoch=producer.epoch,
                base_sequence=sequence,
                is_transactional=transactional,
            )
        )
        self.next_offset += len(records)
        return base

    def end_transaction(self, producer: Producer, *, commit: bool, timestamp_ms: int) -> int:
        """The COMMIT or ABORT marker of ``producer``'s open transaction; returns its offset."""
        offset = self.next_offset
        control = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
        self._segments[-1].append(
            build_end_transaction_marker(
                EndTransactionMarker(control, self._coordinator_epoch),
                offset=offset,
                timestamp=timestamp_ms,
                producer_id=producer.producer_id,
                producer_epoch=producer.epoch,
            )
        )
        self.next_offset += 1
        return offset

    def roll(self) -> None:
        """Start a new segment at the next offset (nothing happens on an empty segment)."""
        if self._segments[-1]:
            self._segments.append([])

    def segments(self) -> list[SegmentFiles]:
        """The segments' files, oldest first."""
        return [
            write_segment(batches, index_interval_bytes=DEMO_INDEX_INTERVAL_BYTES)
            for batches in self._segments
            if batches
        ]


def partition_objects(topic: str, partition: int, log: PartitionLog) -> dict[str, bytes]:
    """Every file of the partition's segments under its key in a Kafka log directory (or a lake)."""
    return {
        f"{topic}-{partition}/{name}": data
        for segment in log.segments()
        for name, data in segment.files().items()
    }
