"""The lake's committed state: one immutable ``Manifest`` per version (docs/lake.md, "The manifest").

On a lake the high watermark is the log end offset (everything in it is committed); a partition whose
segments were all deleted keeps its log end offset as its log start offset; the segment with the highest
base offset is the active segment."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

from kafka_segments.topic_partition import TopicPartition

MANIFEST_FORMAT_VERSION = 1
MANIFEST_FORMAT_2 = 2
"""A small root per version and immutable pieces per partition (docs/metadata-format-2.md)."""
MANIFEST_FORMATS = frozenset({MANIFEST_FORMAT_VERSION, MANIFEST_FORMAT_2})
"""The manifest formats this build reads and writes."""


class SegmentOrigin(Enum):
    """How a segment object entered the lake."""

    ADOPTED = "adopted"
    """An object with Kafka's plain name that came from outside (upload, sync, copied log directory)."""
    WRITTEN = "written"
    """An object this project wrote (compaction output), named ``<base>-<run id>.log``."""


@dataclass(frozen=True, slots=True)
class SegmentEntry:
    """One live segment: its ``.log`` object and what a header scan found in it.

    ``last_offset`` is ``None`` for a segment without batches (an empty ``.log``, e.g. a broker's freshly
    rolled active segment). Timestamps are ``-1`` when the segment has none (empty, or v0 messages)."""

    key: str
    base_offset: int
    last_offset: int | None
    size: int
    sha256: str
    etag: str
    record_count: int
    batch_count: int
    max_timestamp_ms: int
    """The largest batch ``maxTimestamp`` (``-1`` if none): Kafka's ``maxTimestampSoFar``."""
    first_batch_max_timestamp_ms: int
    """``maxTimestamp`` of the first batch (``-1`` if none): what max.compaction.lag.ms looks at."""
    last_modified_ms: int
    """The object's last-modified time when it was adopted or written; never changes afterwards."""
    origin: SegmentOrigin
    run_id: str
    """The run that adopted or wrote the object (or last re-adopted it after it grew)."""
    time_index_sha256: str | None = field(default=None, compare=False)
    """The sha256 of the segment's ``.timeindex`` object, recorded only when its entries were checked
    against this ``.log``'s batches (``lake.time_pin``), so a reader may narrow a timestamp range with it;
    ``None``: none checked (and in manifests written before the field). Not part of equality: the segment is
    the same."""
    index_sha256: str | None = field(default=None, compare=False)
    """The sha256 of the segment's ``.index`` object, recorded only when its entries were checked against
    this ``.log``'s batches (``lake.index_pin``), so a reader may split the segment at them; ``None``: none
    checked (and in manifests written before the field). Not part of equality."""

    @property
    def next_offset(self) -> int:
        """One past the last offset; the base offset for an empty segment."""
        return self.base_offset if self.last_offset is None else self.last_offset + 1

    @property
    def largest_timestamp_ms(self) -> int:
        """Kafka's ``LogSegment.largestTimestamp``: the max batch timestamp, else the file's mtime."""
        return self.max_timestamp_ms if self.max_timestamp_ms >= 0 else self.last_modified_ms

    @property
    def is_empty(self) -> bool:
        return self.last_offset is None


@dataclass(frozen=True, slots=True)
class OpenTransaction:
    """A transaction with data in the partition but no COMMIT/ABORT marker yet (at the log end)."""

    producer_id: int
    producer_epoch: int
    first_offset: int
    last_offset: int | None = field(default=None, compare=False)
    """The last offset of its last data batch, which decides whether Kafka's log loading still knows it
    (``open_after_load``); ``None`` in manifests written before the field (then it is always known).
    Not part of equality: it follows from the segments, the transaction is the same."""


@dataclass(frozen=True, slots=True)
class PartitionState:
    """One partition's committed log."""

    topic_partition: TopicPartition
    log_start_offset: int
    log_end_offset: int
    segments: tuple[SegmentEntry, ...]
    cleaner_checkpoint: int | None = None
    open_transactions: tuple[OpenTransaction, ...] = ()
    run_id: str = ""
    """The run that last changed this partition."""

    @property
    def size_bytes(self) -> int:
        return sum(segment.size for segment in self.segments)

    @property
    def record_count(self) -> int:
        return sum(segment.record_count for segment in self.segments)

    @property
    def active_segment(self) -> SegmentEntry | None:
        return self.segments[-1] if self.segments else None

    @property
    def high_watermark(self) -> int:
        """Everything in the lake is committed: HW = LEO."""
        return self.log_end_offset

    @property
    def loaded_open_transactions(self) -> tuple[OpenTransaction, ...]:
        """The open transactions Kafka knows after loading this log (``open_after_load``)."""
        return open_after_load(self.open_transactions, self.segments, self.log_start_offset)

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the earliest open transaction Kafka knows after loading the log, at least the
        log start offset (``UnifiedLog.maybeIncrementFirstUnstableOffset``), else the high watermark."""
        firsts = [max(txn.first_offset, self.log_start_offset) for txn in self.loaded_open_transactions]
        return min([*firsts, self.high_watermark])

    def as_read(self) -> PartitionState:
        """The state as the cleaner reads it: a checkpoint below the log start offset means the log start
        offset (``LogCleanerManager.cleanableOffsets``). Two states that read the same are the same log: a
        reset of such a checkpoint alone is not a change to commit."""
        checkpoint = self.cleaner_checkpoint
        if checkpoint is None or checkpoint >= self.log_start_offset:
            return self
        return replace(self, cleaner_checkpoint=self.log_start_offset)

    def segment(self, key: str) -> SegmentEntry | None:
        for segment in self.segments:
            if segment.key == key:
                return segment
        return None


@dataclass(frozen=True, slots=True)
class RetiredObject:
    """A segment that left the live set, waiting for garbage collection.

    Its ``.log`` object (``key``) and the index objects of the same name stem are deleted by ``gc`` once
    ``delete_after_ms`` has passed and no retained manifest lists the key as live."""

    key: str
    topic_partition: TopicPartition
    retired_in_version: int
    retired_at_ms: int
    """Wall-clock time of the commit that retired it (stamped when that commit is made)."""
    delete_delay_ms: int
    """The topic's ``file.delete.delay.ms`` when it was retired."""
    reason: str
    """Why it left: the retention pass (``retention.ms``, ``retention.bytes``, ``log-start-offset``,
    ``consumed``), ``compaction`` (replaced by cleaned output) … free text for reports."""

    @property
    def delete_after_ms(self) -> int:
        """The earliest wall-clock time garbage collection may delete it."""
        return self.retired_at_ms + self.delete_delay_ms


@dataclass(frozen=True, slots=True)
class Manifest:
    """The committed state of the lake at one version."""

    version: int
    parent_version: int | None
    run_id: str
    operation: str
    """What made this version: ``adopt``, ``run``, ``delete-records``, ``fence`` …"""
    committed_at_ms: int
    """Wall-clock time of the commit (garbage collection delays count from it)."""
    now_ms: int
    """The run's logical time (the ``now`` of every rule it applied)."""
    partitions: tuple[PartitionState, ...] = ()
    retired: tuple[RetiredObject, ...] = ()
    format_version: int = field(default=MANIFEST_FORMAT_VERSION)
    carries_parent: bool = False
    """A run's staged proposal in format 2 that read only the partitions it could change: the parent
    version's other partitions are carried into the commit unchanged (``partitions`` holds the ones the run
    read). Never set on a committed version as readers see it."""

    def partition(self, topic_partition: TopicPartition) -> PartitionState | None:
        for state in self.partitions:
            if state.topic_partition == topic_partition:
                return state
        return None

    def partition_map(self) -> dict[TopicPartition, PartitionState]:
        return {state.topic_partition: state for state in self.partitions}

    def live_segments(self) -> Iterator[SegmentEntry]:
        for state in self.partitions:
            yield from state.segments

    def live_keys(self) -> frozenset[str]:
        """The ``.log`` keys of every live segment."""
        return frozenset(segment.key for segment in self.live_segments())

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(sorted({state.topic_partition.topic for state in self.partitions}))


def sort_partitions(states: Iterator[PartitionState] | list[PartitionState]) -> tuple[PartitionState, ...]:
    """Partitions in the manifest's canonical order: by topic, then partition number."""
    return tuple(
        sorted(states, key=lambda state: (state.topic_partition.topic, state.topic_partition.partition))
    )


def first_replayed(segments: Sequence[SegmentEntry], log_start_offset: int) -> SegmentEntry | None:
    """The first segment Kafka's load replays: the first whose next offset is above the log start offset."""
    for segment in segments:
        if segment.next_offset > log_start_offset:
            return segment
    return None


def open_after_load(
    transactions: Iterable[OpenTransaction], segments: Sequence[SegmentEntry], log_start_offset: int
) -> tuple[OpenTransaction, ...]:
    """The recorded open ``transactions`` Kafka still knows after loading ``segments`` as after an unclean
    shutdown, with the first offset its replay gives them; in the recorded order (docs/compaction.md, "The
    last stable offset").

    Recovering a segment replays all its batches and snapshots the producer state at its next offset
    (``LogLoader.recoverSegment``); every reload deletes the snapshots at or below the log start offset
    (``ProducerStateManager.truncateAndReload``) and replays from it (``UnifiedLog.rebuildProducerState``).
    So only the segments from ``first_replayed`` on count: a transaction whose last data batch is below them
    is forgotten, one that began below them restarts in them (Kafka: at its first batch there; here: at the
    first replayed segment's base offset, never above Kafka's). Without a recorded ``last_offset`` (an older
    manifest) it is kept, as a running broker keeps it: the last stable offset is then never above Kafka's."""
    replayed = first_replayed(segments, log_start_offset)
    known: list[OpenTransaction] = []
    for txn in transactions:
        if txn.last_offset is None:
            known.append(txn)
        elif replayed is not None and txn.last_offset >= replayed.base_offset:
            known.append(replace(txn, first_offset=max(txn.first_offset, replayed.base_offset)))
    return tuple(known)
