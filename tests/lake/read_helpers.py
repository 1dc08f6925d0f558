"""Committed lakes for the read-side tests (reader, describe, dump, export), made with the commit protocol.

``commit_lake`` commits one manifest version from per-partition specs: each segment is either staged by the
run (``<base>-<run id>.log``, origin ``written``) or uploaded under Kafka's plain name and listed as adopted.
``rich_lake`` is the shared fixture lake: the sample topic ``orders`` (every codec, transactions, tombstones,
a LogAppendTime batch) and a topic ``payments`` with a log start offset inside a batch, a transaction that
spans segments and aborts, one still open at the log end, and a partition without segments.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from forwarding_store import ForwardingStore
from kafka_segments.demo import sample_topic
from kafka_segments.lake import (
    Manifest,
    OpenTransaction,
    PartitionState,
    SegmentEntry,
    SegmentOrigin,
    begin_run,
    build_manifest,
    commit_run,
    stage_manifest,
    stage_segment,
)
from kafka_segments.lake.reader import iter_visible_batches
from kafka_segments.lake.runs import RunRecord
from kafka_segments.lake.scan import advance_open_transactions, summarize_segment
from kafka_segments.records.builder import build_batch
from kafka_segments.records.control import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker,
)
from kafka_segments.records.log import iter_batches
from kafka_segments.records.record import Record
from kafka_segments.segment.files import FileKind, segment_file_name
from kafka_segments.segment.writer import SegmentFiles, write_segment
from kafka_segments.storage import ObjectStore
from kafka_segments.storage.base import Progress, WritableBuffer
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock, make_segment

ORDERS_0 = TopicPartition("orders", 0)
ORDERS_1 = TopicPartition("orders", 1)
PAYMENTS_0 = TopicPartition("payments", 0)
PAYMENTS_1 = TopicPartition("payments", 1)
PAYMENTS_LOG_START = 3
"""Inside payments-0's second batch (offsets 2-3)."""
EMPTY_PARTITION_LEO = 40
ABORTING_PRODUCER = 77
OPEN_PRODUCER = 88


@dataclass(frozen=True)
class Seg:
    """A segment to commit: its ``.log`` bytes and base offset; ``adopted`` uploads it under Kafka's name."""

    log: bytes
    base_offset: int
    adopted: bool = False

    @classmethod
    def of(cls, files: SegmentFiles, *, adopted: bool = False) -> Seg:
        return cls(files.log, files.base_offset, adopted)


@dataclass(frozen=True)
class PartitionSpec:
    segments: Sequence[Seg] = ()
    log_start_offset: int | None = None
    """Defaults to the first segment's base offset (the log end offset without segments)."""
    cleaner_checkpoint: int | None = None
    log_end_offset: int | None = None
    """Only for a partition without segments."""


def commit_lake(
    store: ObjectStore,
    partitions: Mapping[TopicPartition, PartitionSpec],
    *,
    clock: FakeClock,
    operation: str = "test",
) -> Manifest:
    """Commit the next manifest version holding exactly ``partitions``; returns it."""
    run, base = begin_run(store, now_ms=clock(), operation=operation, clock=clock)
    states = [_partition(store, run, tp, spec, clock) for tp, spec in sorted(partitions.items())]
    stage_manifest(store, run, build_manifest(run, base=base, partitions=states))
    return commit_run(store, run.run_id, clock=clock)


def commit_states(store: ObjectStore, states: Sequence[PartitionState], *, clock: FakeClock) -> Manifest:
    """Commit the next version with ``states`` as they are (segments already in the lake)."""
    run, base = begin_run(store, now_ms=clock(), operation="test", clock=clock)
    stage_manifest(store, run, build_manifest(run, base=base, partitions=states))
    return commit_run(store, run.run_id, clock=clock)


def _partition(
    store: ObjectStore, run: RunRecord, tp: TopicPartition, spec: PartitionSpec, clock: FakeClock
) -> PartitionState:
    entries: list[SegmentEntry] = []
    open_txns: tuple[OpenTransaction, ...] = ()
    for seg in spec.segments:
        summary = summarize_segment(seg.log, key=tp.dir_name, base_offset=seg.base_offset)
        open_txns = advance_open_transactions(open_txns, summary.table)
        if seg.adopted:
            key = f"{tp.dir_name}/{segment_file_name(seg.base_offset, FileKind.LOG)}"
            etag = store.put(key, seg.log).etag
            entries.append(
                summary.entry(
                    key=key,
                    base_offset=seg.base_offset,
                    etag=etag,
                    last_modified_ms=clock(),
                    origin=SegmentOrigin.ADOPTED,
                    run_id=run.run_id,
                )
            )
        else:
            files = {FileKind.LOG: seg.log}
            entries.append(
                stage_segment(
                    store, run, topic_partition=tp, base_offset=seg.base_offset, files=files, clock=clock
                )
            )
    log_end = entries[-1].next_offset if entries else (spec.log_end_offset or 0)
    log_start = spec.log_start_offset
    if log_start is None:
        log_start = entries[0].base_offset if entries else log_end
    return PartitionState(
        topic_partition=tp,
        log_start_offset=log_start,
        log_end_offset=log_end,
        segments=tuple(entries),
        cleaner_checkpoint=spec.cleaner_checkpoint,
        open_transactions=open_txns,
        run_id=run.run_id,
    )


def _marker(kind: ControlRecordType, offset: int, producer_id: int) -> bytes:
    return build_end_transaction_marker(
        EndTransactionMarker(kind, coordinator_epoch=1),
        offset=offset,
        timestamp=T0 + offset,
        producer_id=producer_id,
        producer_epoch=0,
    )


def _txn_batch(first: int, count: int, producer_id: int) -> bytes:
    records = [Record(first + i, T0 + first + i, f"p{first + i}".encode(), b"txn") for i in range(count)]
    return build_batch(
        records, producer_id=producer_id, producer_epoch=0, base_sequence=first, is_transactional=True
    )


def payments_batches() -> list[list[bytes]]:
    """payments-0's segments as batches: [0..5 plain], [6-7 txn of 77, 8-9 plain], [10 ABORT 77, 11-12 txn
    of 88 (open)]."""
    first = [bytes(entry.raw) for entry in iter_batches(make_segment(0, timestamp_ms=T0).log)]
    plain = build_batch([Record(8 + i, T0 + 8 + i, f"p{8 + i}".encode(), b"plain") for i in range(2)])
    second = [_txn_batch(6, 2, ABORTING_PRODUCER), plain]
    third = [_marker(ControlRecordType.ABORT, 10, ABORTING_PRODUCER), _txn_batch(11, 2, OPEN_PRODUCER)]
    return [first, second, third]


def payments_segments() -> list[SegmentFiles]:
    """payments-0's segments written by our writer with Kafka's defaults, transactions carried over."""
    segments: list[SegmentFiles] = []
    ongoing: Mapping[int, int] = {}
    for batches in payments_batches():
        files = write_segment(batches, ongoing_txns=ongoing)
        ongoing = files.ongoing_txns
        segments.append(files)
    return segments


def orders_segments() -> dict[TopicPartition, list[SegmentFiles]]:
    by_partition: dict[TopicPartition, list[SegmentFiles]] = {}
    for sample in sample_topic():
        by_partition.setdefault(TopicPartition(sample.topic, sample.partition), []).append(sample.files)
    return by_partition


def rich_specs() -> dict[TopicPartition, PartitionSpec]:
    orders = orders_segments()
    payments = payments_segments()
    return {
        ORDERS_0: PartitionSpec(
            [Seg.of(files, adopted=True) for files in orders[ORDERS_0]],
            cleaner_checkpoint=orders[ORDERS_0][1].base_offset,
        ),
        ORDERS_1: PartitionSpec([Seg.of(files) for files in orders[ORDERS_1]]),
        PAYMENTS_0: PartitionSpec(
            [Seg.of(payments[0], adopted=True), *(Seg.of(files) for files in payments[1:])],
            log_start_offset=PAYMENTS_LOG_START,
        ),
        PAYMENTS_1: PartitionSpec(log_end_offset=EMPTY_PARTITION_LEO),
    }


def rich_lake(store: ObjectStore, clock: FakeClock) -> Manifest:
    """Commit ``rich_specs`` as version 1."""
    return commit_lake(store, rich_specs(), clock=clock, operation="adopt")


def all_records(segments: Sequence[SegmentFiles]) -> Iterator[Record]:
    for files in segments:
        for entry in iter_batches(files.log):
            yield from entry.records


class ReadRecordingStore(ForwardingStore):
    """Records every ``get_into``'s ``(if_match, verify_checksum)``; with ``flip_at``, flips that byte of
    what it delivers (a transfer that went wrong: other reads are intact)."""

    def __init__(self, inner: ObjectStore, *, flip_at: int | None = None) -> None:
        super().__init__(inner)
        self.flip_at = flip_at
        self.calls: list[tuple[str | None, bool]] = []

    def get_into(
        self,
        key: str,
        out: WritableBuffer,
        *,
        verify_checksum: bool = True,
        progress: Progress | None = None,
        if_match: str | None = None,
    ) -> int:
        self.calls.append((if_match, verify_checksum))
        size = super().get_into(key, out, verify_checksum=verify_checksum, if_match=if_match)
        view = memoryview(out).cast("B")  # type: ignore[arg-type]
        if self.flip_at is not None:
            view[self.flip_at] ^= 1
        if progress is not None:
            progress(size)
        return size


def iter_visible_records(store: ObjectStore, state: PartitionState) -> Iterator[Record]:
    """Every record at or above the log start offset, in offset order (control records included).

    Raises:
        SegmentObjectMismatchError, CorruptRecordError: as ``iter_visible_batches``.
    """
    for batch in iter_visible_batches(store, state):
        yield from batch.records
