"""A lake with large segments for the split-read tests: one partition of many batches (plain, compressed,
tombstones, headers, transactions that commit and abort across span and segment boundaries, a log start
offset inside the first segment), each segment staged with its ``.index`` (a dense one: an entry every
``INDEX_INTERVAL`` bytes), so a small ``maxBytesPerPartition`` splits it into many spans."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence

import pyarrow as pa
from forwarding_store import ForwardingStore
from kafka_segments.lake import (
    OpenTransaction,
    PartitionState,
    begin_run,
    build_manifest,
    commit_run,
    stage_manifest,
    stage_segment,
)
from kafka_segments.lake.runs import RunRecord
from kafka_segments.lake.scan import advance_open_transactions, summarize_segment
from kafka_segments.reading import arrow_schema, read_lake
from kafka_segments.reading.segment_read import read_task
from kafka_segments.reading.tasks import SegmentTask
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.builder import build_batch
from kafka_segments.records.control import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker,
)
from kafka_segments.records.record import Header, Record
from kafka_segments.segment.files import FileKind
from kafka_segments.segment.writer import write_segment
from kafka_segments.state import Manifest, SegmentEntry
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock

TP = TopicPartition("events", 0)
INDEX_INTERVAL = 512
"""Bytes between two ``.index`` entries (Kafka's default is 4096)."""
CODECS = (CompressionType.NONE, CompressionType.NONE, CompressionType.GZIP, CompressionType.ZSTD)


def event_batches(seed: int, *, count: int) -> list[bytes]:
    """``count`` batches from offset 0, one millisecond per offset: plain ones (some compressed, some with
    tombstones, null keys and headers) and transactions of three producers, each closed by a COMMIT or an
    ABORT a few batches later (the last one left open)."""
    rng = random.Random(seed)
    batches: list[bytes] = []
    offset = 0
    open_txns: dict[int, int] = {}
    for _ in range(count):
        producer = rng.choice((0, 0, 1, 2, 3))
        if producer and producer in open_txns and rng.random() < 0.4:
            kind = rng.choice((ControlRecordType.COMMIT, ControlRecordType.ABORT))
            marker = EndTransactionMarker(kind, coordinator_epoch=1)
            batches.append(
                build_end_transaction_marker(
                    marker, offset=offset, timestamp=T0 + offset, producer_id=producer, producer_epoch=0
                )
            )
            del open_txns[producer]
            offset += 1
            continue
        records = [_record(rng, offset + i) for i in range(rng.randint(1, 12))]
        if producer:
            open_txns.setdefault(producer, offset)
        batches.append(
            build_batch(
                records,
                compression=rng.choice(CODECS),
                producer_id=producer or -1,
                producer_epoch=0 if producer else -1,
                base_sequence=offset if producer else -1,
                is_transactional=bool(producer),
            )
        )
        offset += len(records)
    return batches


def _record(rng: random.Random, offset: int) -> Record:
    key = None if rng.random() < 0.05 else f"k{rng.randrange(40)}".encode()
    value = None if rng.random() < 0.1 else rng.randbytes(rng.randint(0, 120))
    headers = (Header("h", b"v"),) if rng.random() < 0.2 else ()
    return Record(offset, T0 + offset, key, value, headers)


def commit_events(
    store: ObjectStore, batches: Sequence[bytes], *, cut: int, log_start: int, clock: FakeClock
) -> Manifest:
    """Commit ``batches`` as two segments (cut before batch ``cut``), each with its ``.index``."""
    run, base = begin_run(store, now_ms=clock(), operation="test", clock=clock)
    entries = []
    open_txns: tuple[OpenTransaction, ...] = ()
    ongoing: Mapping[int, int] = {}
    for part in (batches[:cut], batches[cut:]):
        files = write_segment(part, ongoing_txns=ongoing, index_interval_bytes=INDEX_INTERVAL)
        ongoing = files.ongoing_txns
        entry = stage_segment(
            store,
            run,
            topic_partition=TP,
            base_offset=files.base_offset,
            files={FileKind.LOG: files.log, FileKind.INDEX: files.offset_index},
            clock=clock,
        )
        entries.append(entry)
        open_txns = advance_open_transactions(
            open_txns, summarize_segment(files.log, key="t", base_offset=files.base_offset).table
        )
    return commit_partition(
        store, run, base, TP, entries, log_start=log_start, open_transactions=open_txns, clock=clock
    )


def commit_partition(
    store: ObjectStore,
    run: RunRecord,
    base: int | None,
    topic_partition: TopicPartition,
    entries: Sequence[SegmentEntry],
    *,
    log_start: int = 0,
    open_transactions: tuple[OpenTransaction, ...] = (),
    clock: FakeClock,
) -> Manifest:
    """Stage the manifest of ``run`` holding one partition of the staged ``entries``, and commit it."""
    state = PartitionState(
        topic_partition=topic_partition,
        log_start_offset=log_start,
        log_end_offset=entries[-1].next_offset,
        segments=tuple(entries),
        open_transactions=open_transactions,
        run_id=run.run_id,
    )
    stage_manifest(store, run, build_manifest(run, base=base, partitions=[state]))
    return commit_run(store, run.run_id, clock=clock)


def rows(store: ObjectStore, options: Mapping[str, str]) -> list[dict[str, object]]:
    schema = arrow_schema(include_headers=options.get("includeHeaders") == "true")
    return pa.Table.from_batches(list(read_lake(store, options)), schema=schema).to_pylist()


def task_rows(store: ObjectStore, tasks: Iterable[SegmentTask]) -> list[dict[str, object]]:
    """The rows ``tasks`` read from ``store`` (as Spark's tasks of a narrowed plan would)."""
    return [
        row for task in tasks for b in read_task(store, task, include_headers=False) for row in b.to_pylist()
    ]


class RangeRecordingStore(ForwardingStore):
    """Counts the bytes every ``get`` and ``get_range`` of a ``.log`` object returns; ``flip_at`` flips
    that byte of the object in every read that covers it (a transfer that went wrong)."""

    def __init__(self, inner: ObjectStore, *, flip_at: int | None = None) -> None:
        super().__init__(inner)
        self.flip_at = flip_at
        self.log_bytes = 0
        self.ranges: list[tuple[str, int, int]] = []

    def get(self, key: str) -> bytes:
        data = super().get(key)
        return self._seen(key, 0, data)

    def get_range(self, key: str, *, start: int, end: int, if_match: str | None = None) -> bytes:
        data = super().get_range(key, start=start, end=end, if_match=if_match)
        return self._seen(key, start, data)

    def _seen(self, key: str, start: int, data: bytes) -> bytes:
        if not key.endswith(".log"):
            return data
        self.log_bytes += len(data)
        self.ranges.append((key, start, start + len(data)))
        if self.flip_at is not None and start <= self.flip_at < start + len(data):
            changed = bytearray(data)
            changed[self.flip_at - start] ^= 1
            return bytes(changed)
        return data
