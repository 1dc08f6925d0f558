"""A small, deterministic sample topic for demos and smoke tests: two partitions of ``orders`` showing the
format's features (every codec, updates and tombstones, headers, committed and aborted transactions, a
LogAppendTime batch), written with the project's own writers."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.records.attributes import CompressionType, TimestampType
from kafka_segments.records.builder import build_batch
from kafka_segments.records.control import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker,
)
from kafka_segments.records.log import iter_batches, scan_headers
from kafka_segments.records.record import Header, Record
from kafka_segments.segment import SegmentFiles, write_segment

SAMPLE_TOPIC = "orders"
SAMPLE_START_MS = 1_763_600_000_000  # 2025-11-20T00:53:20Z
CODECS = (
    CompressionType.NONE,
    CompressionType.GZIP,
    CompressionType.SNAPPY,
    CompressionType.LZ4,
    CompressionType.ZSTD,
)


SAMPLE_INDEX_INTERVAL_BYTES = 128  # small, so that the sample's indexes have entries


@dataclass(frozen=True, slots=True)
class SampleSegment:
    topic: str
    partition: int
    files: SegmentFiles

    @property
    def directory(self) -> str:
        """The partition directory: ``<topic>-<partition>``."""
        return f"{self.topic}-{self.partition}"

    def objects(self) -> dict[str, bytes]:
        """Every file of the segment under its path in a Kafka log directory (or lake)."""
        return {f"{self.directory}/{name}": data for name, data in self.files.files().items()}


def sample_topic(*, topic: str = SAMPLE_TOPIC, partitions: int = 2) -> list[SampleSegment]:
    """The sample topic's segments, two per partition, in offset order."""
    segments: list[SampleSegment] = []
    for partition in range(partitions):
        first = _first_segment(partition)
        next_offset = _next_offset(first)
        for log in (first, _second_segment(partition, next_offset)):
            batches = [bytes(entry.raw) for entry in iter_batches(log)]
            files = write_segment(batches, index_interval_bytes=SAMPLE_INDEX_INTERVAL_BYTES)
            segments.append(SampleSegment(topic, partition, files))
    return segments


def _first_segment(partition: int) -> bytes:
    batches = []
    offset = 0
    for index, codec in enumerate(CODECS):
        records = [
            Record(
                offset + i,
                SAMPLE_START_MS + 1000 * (offset + i),
                f"customer-{(offset + i) % 7}".encode(),
                None
                if (offset + i) % 9 == 8
                else f'{{"order": {offset + i}, "partition": {partition}}}'.encode(),
                (Header("source", b"demo"), Header("trace", None)) if i == 0 else (),
            )
            for i in range(4)
        ]
        batches.append(
            build_batch(
                records,
                compression=codec,
                producer_id=1000 + partition,
                producer_epoch=0,
                base_sequence=4 * index,
            )
        )
        offset += len(records)
    return b"".join(batches)


def _second_segment(partition: int, base: int) -> bytes:
    producer_id, epoch = 2000 + partition, 3
    t = SAMPLE_START_MS + 100_000
    committed = [Record(base + i, t + i, f"txn-key-{i}".encode(), b"committed") for i in range(3)]
    aborted = [Record(base + 4 + i, t + 10 + i, f"txn-key-{i}".encode(), b"aborted") for i in range(2)]
    appended = [Record(base + 7 + i, 0, f"customer-{i}".encode(), b"late") for i in range(2)]
    return b"".join(
        [
            build_batch(
                committed,
                producer_id=producer_id,
                producer_epoch=epoch,
                base_sequence=0,
                is_transactional=True,
            ),
            _marker(ControlRecordType.COMMIT, base + 3, t + 5, producer_id, epoch),
            build_batch(
                aborted, producer_id=producer_id, producer_epoch=epoch, base_sequence=3, is_transactional=True
            ),
            _marker(ControlRecordType.ABORT, base + 6, t + 15, producer_id, epoch),
            build_batch(appended, timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=t + 20),
        ]
    )


def _marker(kind: ControlRecordType, offset: int, timestamp: int, producer_id: int, epoch: int) -> bytes:
    return build_end_transaction_marker(
        EndTransactionMarker(kind, coordinator_epoch=5),
        offset=offset,
        timestamp=timestamp,
        producer_id=producer_id,
        producer_epoch=epoch,
    )


def _next_offset(segment: bytes) -> int:
    return max(header.next_offset for header in scan_headers(segment))
