"""The reference side of the reading tests: kafka-python reads the ``export`` of a lake version, and a few
lines of plain Python apply what a Kafka consumer would (log start offset, control records, aborted
transactions, last stable offset) — independent of ``kafka_segments.reading``."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

from kafka_segments.lake.export import export_lake
from kafka_segments.state import Manifest
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.record.memory_records import MemoryRecords

ABORT = 0


@dataclass(frozen=True)
class RefRecord:
    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    control: bool
    aborted: bool

    def row(self, *, headers: bool = False) -> tuple[object, ...]:
        base = (
            self.key,
            self.value,
            self.topic,
            self.partition,
            self.offset,
            self.timestamp,
            self.timestamp_type,
        )
        return (*base, self.headers) if headers else base


@dataclass(frozen=True)
class RefPartition:
    log_start: int
    log_end: int
    last_stable: int
    records: tuple[RefRecord, ...]
    """Every record of the exported log at or above the log start offset, control records included."""


def reference(
    store: ObjectStore, out: Path, *, version: int | None = None
) -> dict[TopicPartition, RefPartition]:
    """kafka-python's view of the lake at ``version`` (exported to ``out``)."""
    export_lake(store, out, version=version)
    from kafka_segments.lake.reader import resolve_manifest

    manifest: Manifest = resolve_manifest(store, version)
    result: dict[TopicPartition, RefPartition] = {}
    for state in manifest.partitions:
        tp = state.topic_partition
        records = _partition_records(out / tp.dir_name, tp)
        result[tp] = RefPartition(
            log_start=state.log_start_offset,
            log_end=state.log_end_offset,
            last_stable=state.last_stable_offset,
            records=tuple(r for r in records if r.offset >= state.log_start_offset),
        )
    return result


def _partition_records(folder: Path, tp: TopicPartition) -> list[RefRecord]:
    batches = []
    for log in sorted(folder.glob("*.log")):
        for batch in MemoryRecords(log.read_bytes()):
            assert batch.validate_crc()
            batches.append(batch)
    aborted_batches = _aborted(batches)
    records = []
    for index, batch in enumerate(batches):
        control = batch.magic >= 2 and batch.is_control_batch
        kind = batch.timestamp_type
        for record in batch:
            records.append(
                RefRecord(
                    tp.topic,
                    tp.partition,
                    record.offset,
                    -1 if record.timestamp is None else record.timestamp,
                    -1 if kind is None else kind,
                    record.key,
                    record.value,
                    tuple((h[0], h[1]) for h in record.headers),
                    control,
                    index in aborted_batches,
                )
            )
    return records


def _aborted(batches: list[object]) -> set[int]:
    """Indexes of the data batches whose transaction an ABORT marker closes."""
    pending: dict[int, list[int]] = {}
    aborted: set[int] = set()
    for index, batch in enumerate(batches):
        if batch.magic < 2 or not batch.is_transactional:  # type: ignore[attr-defined]
            continue
        producer = batch.producer_id  # type: ignore[attr-defined]
        if not batch.is_control_batch:  # type: ignore[attr-defined]
            pending.setdefault(producer, []).append(index)
            continue
        markers = list(batch)  # type: ignore[call-overload]
        if not markers:
            continue
        kind = int.from_bytes(markers[0].key[2:4], "big")
        closed = pending.pop(producer, [])
        if kind == ABORT:
            aborted.update(closed)
    return aborted


def consumed(
    partition: RefPartition, *, start: int | None = None, end: int | None = None, committed: bool = False
) -> list[RefRecord]:
    """What a consumer of ``[start, end)`` receives (defaults: earliest to latest)."""
    latest = partition.last_stable if committed else partition.log_end
    low = partition.log_start if start is None else start
    high = latest if end is None else end
    return [
        r
        for r in partition.records
        if low <= r.offset < high and not r.control and not (committed and r.aborted)
    ]


def offset_for_time(partition: RefPartition, timestamp: int, *, committed: bool = False) -> int | None:
    """The first offset whose record is at or after ``timestamp`` (control records count, as ListOffsets)."""
    latest = partition.last_stable if committed else partition.log_end
    found = next((r.offset for r in partition.records if r.timestamp >= timestamp), None)
    return found if found is not None and found < latest else None
