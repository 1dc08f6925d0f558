"""Compaction in a run: which partitions get a cleaning round, the round itself, and the state it leaves.

Per partition, in the order of Kafka's cleaner thread (Part L): at most one cleaning round, when the
partition is eligible (``compaction.eligibility``: dirty ratio or max.compaction.lag.ms), then the deletion
passes — the retention plan is made over the state the round leaves, and both are committed together.

A round (``compact_partition``) reads the partition's live segments, cleans every segment below the round's
end offset (``compaction.rewrite.clean_round``) and stages the output segments under the run's unique
object names (``<base>-<run id>.log`` + indexes). An output segment whose bytes equal its single source
segment keeps the existing object (same records, fewer writes; counted as ``segments_kept``). The replaced
segments are retired with the reason ``compaction``; the cleaner checkpoint moves to the round's end offset.
A round that fails on bad data quarantines the partition for this run (Kafka marks it uncleanable): neither
compaction nor retention touch it, and the report names the error; a failing store is raised (retriable).

Partitions run as tasks on the run's ``TaskRunner`` (the Spark engine ships ``compaction_task`` to its
executors, which read and write the segment objects themselves); the inline engine calls
``compact_partition`` with its own store. Both produce the same objects and entries.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from kafka_segments.compaction.eligibility import (
    CompactionBudget,
    CompactionCandidate,
    Eligibility,
    assess,
    take_within_budget,
)
from kafka_segments.compaction.errors import CompactionError
from kafka_segments.compaction.output import cleaned_segment_files
from kafka_segments.compaction.range import (
    CheckpointState,
    cleanable_range,
    first_dirty_offset,
    segments_between,
)
from kafka_segments.compaction.results import CleanedSegment, RoundResult
from kafka_segments.compaction.rewrite import clean_round
from kafka_segments.compaction.source import SourceSegment, aborted_from_markers
from kafka_segments.compaction.stats import CleanerStats, PhaseTimes
from kafka_segments.config import Config
from kafka_segments.config.model import TopicConfig
from kafka_segments.errors import (
    CorruptRecordError,
    SegmentObjectMismatchError,
    SegmentWriteError,
    UnsupportedCodecError,
)
from kafka_segments.lake.commit import retire, stage_segment
from kafka_segments.lake.history import location_of
from kafka_segments.lake.layout import segment_key
from kafka_segments.lake.manifest import PartitionState, RetiredObject, SegmentEntry, SegmentOrigin
from kafka_segments.lake.reader import read_segment
from kafka_segments.lake.runs import RunRecord
from kafka_segments.lake.scan import summarize_segment
from kafka_segments.segment.files import FileKind
from kafka_segments.segment.index_sizes import index_sizes
from kafka_segments.segment.txn_index import AbortedTxn
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition

COMPACTION_REASON = "compaction"
"""The reason a segment replaced by a round's output is retired with."""

BUDGET_BYTES = "kafka_segments.compaction.max.bytes.per.run"
BUDGET_PARTITIONS = "kafka_segments.compaction.max.partitions.per.run"

UNCLEANABLE_ERRORS = (
    CompactionError,
    CorruptRecordError,
    UnsupportedCodecError,
    SegmentWriteError,
    SegmentObjectMismatchError,
)
"""What makes a partition uncleanable in a run (bad data, not a failing store: that one is raised)."""


class CompactionStatus(Enum):
    """What a run did about one partition of a compacted topic."""

    CLEANED = "cleaned"
    """A cleaning round ran."""
    SKIPPED = "skipped"
    """Not eligible (see the eligibility: dirty ratio, empty log, cleaner disabled …)."""
    DEFERRED = "deferred"
    """Eligible, but the run's compaction budget was used up by partitions ahead of it."""
    QUARANTINED = "quarantined"
    """The round failed on the partition's data: neither compaction nor retention touch it in this run."""


@dataclass(frozen=True, slots=True)
class PartitionCompaction:
    """What the run did about one partition of a compacted topic, and the state it leaves."""

    topic_partition: TopicPartition
    status: CompactionStatus
    eligibility: Eligibility
    checkpoint_before: int | None
    checkpoint_after: int | None
    """The cleaner checkpoint the run stores: the round's end offset, or a reset invalid checkpoint."""
    checkpoint_state: CheckpointState | None = None
    first_dirty_offset: int | None = None
    first_uncleanable_offset: int | None = None
    dirty_ratio_before: float = 0.0
    dirty_ratio_after: float = 0.0
    compaction_delay_ms: int = 0
    """Kafka's ``maxCompactionDelay``: how far past max.compaction.lag.ms the dirty section is."""
    end_offset: int | None = None
    """The round's end offset (``map.latestOffset + 1``); every segment below it was recopied."""
    segments: tuple[SegmentEntry, ...] = ()
    """The live segments below the round's end offset after the round (written or kept), in order."""
    replaced: tuple[SegmentEntry, ...] = ()
    """The segments the round's output replaced (retired with the reason ``compaction``)."""
    kept: frozenset[str] = frozenset()
    """Keys of the segments the round left as they were (their cleaned bytes equal their own)."""
    stats: CleanerStats | None = None
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.status is CompactionStatus.CLEANED or self.checkpoint_after != self.checkpoint_before

    def new_state(self, state: PartitionState, *, run_id: str) -> PartitionState:
        """``state`` after the round (or with its reset checkpoint); ``state`` itself when nothing changed."""
        if not self.changed:
            return state
        segments = state.segments
        if self.status is CompactionStatus.CLEANED and self.end_offset is not None:
            end = self.end_offset
            segments = self.segments + tuple(s for s in state.segments if s.base_offset >= end)
        return replace(state, segments=segments, cleaner_checkpoint=self.checkpoint_after, run_id=run_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic_partition.topic,
            "partition": self.topic_partition.partition,
            "status": self.status.value,
            "eligibility": self.eligibility.value,
            "checkpoint": {
                "before": self.checkpoint_before,
                "after": self.checkpoint_after,
                "state": None if self.checkpoint_state is None else self.checkpoint_state.value,
            },
            "first_dirty_offset": self.first_dirty_offset,
            "first_uncleanable_offset": self.first_uncleanable_offset,
            "end_offset": self.end_offset,
            "dirty_ratio": {"before": self.dirty_ratio_before, "after": self.dirty_ratio_after},
            "max_compaction_delay_ms": self.compaction_delay_ms,
            "max_compaction_delay_secs": self.compaction_delay_ms / 1000,
            "segments_replaced": [segment.key for segment in self.replaced],
            "segments_written": [s.key for s in self.segments if s.key not in self.kept],
            "segments_kept": sorted(self.kept),
            "stats": None if self.stats is None else self.stats.to_dict(),
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """The compaction part of a run, one entry per partition of a compacted topic it looked at."""

    partitions: tuple[PartitionCompaction, ...] = ()
    budget: CompactionBudget = field(default_factory=CompactionBudget)

    @property
    def changed(self) -> bool:
        return any(partition.changed for partition in self.partitions)

    def partition(self, topic_partition: TopicPartition) -> PartitionCompaction | None:
        for partition in self.partitions:
            if partition.topic_partition == topic_partition:
                return partition
        return None

    def quarantined(self) -> dict[TopicPartition, str]:
        """The partitions whose round failed, with the reason (retention leaves them alone too)."""
        return {
            p.topic_partition: f"uncleanable: {p.error}"
            for p in self.partitions
            if p.status is CompactionStatus.QUARANTINED
        }

    def states_after(self, states: Sequence[PartitionState], *, run_id: str) -> list[PartitionState]:
        by_tp = {partition.topic_partition: partition for partition in self.partitions}
        return [
            state
            if (found := by_tp.get(state.topic_partition)) is None
            else found.new_state(state, run_id=run_id)
            for state in states
        ]

    def retired(self, run: RunRecord, config: Config) -> list[RetiredObject]:
        """The replaced segments as retired objects (kept, unchanged segments are not replaced)."""
        return [
            retire(
                segment,
                partition.topic_partition,
                run,
                reason=COMPACTION_REASON,
                delete_delay_ms=config.for_topic(partition.topic_partition.topic).file_delete_delay_ms,
            )
            for partition in self.partitions
            for segment in partition.replaced
        ]

    def to_dict(self) -> dict[str, Any]:
        cleaned = [p for p in self.partitions if p.stats is not None]
        return {
            "budget": {"max_bytes": self.budget.max_bytes, "max_partitions": self.budget.max_partitions},
            "totals": {
                "partitions": len(self.partitions),
                "cleaned": len(cleaned),
                "deferred": sum(1 for p in self.partitions if p.status is CompactionStatus.DEFERRED),
                "quarantined": sum(1 for p in self.partitions if p.status is CompactionStatus.QUARANTINED),
                "bytes_read": sum(p.stats.bytes_read for p in cleaned if p.stats),
                "bytes_written": sum(p.stats.bytes_written for p in cleaned if p.stats),
                "messages_read": sum(p.stats.messages_read for p in cleaned if p.stats),
                "messages_written": sum(p.stats.messages_written for p in cleaned if p.stats),
                "max_compaction_delay_secs": max(
                    (p.compaction_delay_ms / 1000 for p in self.partitions), default=0.0
                ),
            },
            "partitions": [partition.to_dict() for partition in self.partitions],
        }


def compaction_budget(config: Config) -> CompactionBudget:
    """The run's budget from the broker section (``kafka_segments.compaction.max.*.per.run``)."""
    values = {setting.name: setting.value for setting in config.settings(None)}
    max_bytes, max_partitions = values.get(BUDGET_BYTES, -1), values.get(BUDGET_PARTITIONS, -1)
    return CompactionBudget(
        max_bytes=max_bytes if isinstance(max_bytes, int) else -1,
        max_partitions=max_partitions if isinstance(max_partitions, int) else -1,
    )


@dataclass(frozen=True, slots=True)
class CompactionTask:
    """One partition's round, as shipped to a worker (plain values; the worker opens ``lake``)."""

    lake: str
    run: RunRecord
    state: PartitionState
    config: TopicConfig
    candidate: CompactionCandidate
    write: bool = True
    """Stage the output objects (``False``: a dry run computes the entries and writes nothing)."""


def compaction_task(task: CompactionTask) -> PartitionCompaction:
    """``compact_partition`` on the worker's store (the function a runner maps)."""
    from kafka_segments.pipeline.runners import worker_store

    store = worker_store(task.lake)
    return compact_partition(store, task.run, task.state, task.config, task.candidate, write=task.write)


def plan_candidates(
    states: Sequence[PartitionState],
    config: Config,
    *,
    now_ms: int,
    budget: CompactionBudget,
) -> tuple[list[CompactionCandidate], list[CompactionCandidate], list[PartitionCompaction]]:
    """Assess every partition of a compacted topic: (rounds to run, deferred, the rest as results)."""
    assessed = []
    for state in states:
        topic_config = config.for_topic(state.topic_partition.topic)
        if topic_config.compact:
            assessed.append(assess(state, topic_config, now_ms=now_ms))
    taken, deferred = take_within_budget(assessed, budget)
    chosen = {candidate.topic_partition for candidate in (*taken, *deferred)}
    by_tp = {state.topic_partition: state for state in states}
    idle = [
        _without_round(by_tp[c.topic_partition], c, CompactionStatus.SKIPPED)
        for c in assessed
        if c.topic_partition not in chosen
    ]
    return list(taken), list(deferred), idle


def compact_states(
    states: Sequence[PartitionState],
    config: Config,
    *,
    run: RunRecord,
    compact: Callable[[Sequence[CompactionTask]], list[PartitionCompaction]],
    lake: str = "",
    write: bool = True,
) -> CompactionResult:
    """The compaction part of a run over ``states`` (quarantined partitions already left out).

    ``compact`` runs the rounds (``runner.map(compaction_task, tasks)``, or in-process on a store).
    """
    budget = compaction_budget(config)
    taken, deferred, idle = plan_candidates(states, config, now_ms=run.now_ms, budget=budget)
    by_tp = {state.topic_partition: state for state in states}
    tasks = [
        CompactionTask(
            lake,
            run,
            by_tp[candidate.topic_partition],
            config.for_topic(candidate.topic_partition.topic),
            candidate,
            write,
        )
        for candidate in taken
    ]
    rounds = compact(tasks) if tasks else []
    later = [_without_round(by_tp[c.topic_partition], c, CompactionStatus.DEFERRED) for c in deferred]
    order = {state.topic_partition: index for index, state in enumerate(states)}
    done = sorted([*rounds, *later, *idle], key=lambda p: order[p.topic_partition])
    return CompactionResult(tuple(done), budget)


def in_process(store: ObjectStore) -> Callable[[Sequence[CompactionTask]], list[PartitionCompaction]]:
    """Run the rounds one after the other in this process, on ``store``."""

    def run_all(tasks: Sequence[CompactionTask]) -> list[PartitionCompaction]:
        return [compact_partition(store, t.run, t.state, t.config, t.candidate, write=t.write) for t in tasks]

    return run_all


def _without_round(
    state: PartitionState, candidate: CompactionCandidate, status: CompactionStatus
) -> PartitionCompaction:
    """A partition that gets no round; an invalid checkpoint is still reset (``forceUpdateCheckpoint``)."""
    cleanable = candidate.range
    after = state.cleaner_checkpoint
    if cleanable is not None and cleanable.force_update_checkpoint:
        after = cleanable.first_dirty_offset
    return PartitionCompaction(
        topic_partition=state.topic_partition,
        status=status,
        eligibility=candidate.eligibility,
        checkpoint_before=state.cleaner_checkpoint,
        checkpoint_after=after,
        checkpoint_state=None if cleanable is None else cleanable.checkpoint,
        first_dirty_offset=None if cleanable is None else cleanable.first_dirty_offset,
        first_uncleanable_offset=None if cleanable is None else cleanable.first_uncleanable_offset,
        dirty_ratio_before=candidate.cleanable_ratio,
        dirty_ratio_after=candidate.cleanable_ratio,
        compaction_delay_ms=candidate.compaction_delay_ms,
    )


def compact_partition(
    store: ObjectStore,
    run: RunRecord,
    state: PartitionState,
    config: TopicConfig,
    candidate: CompactionCandidate,
    *,
    write: bool = True,
) -> PartitionCompaction:
    """One cleaning round over ``state`` (an eligible candidate), its output staged unless ``write`` is off.

    Raises:
        ObjectStoreError: the store failed (retriable; nothing of the round is referenced yet).
    """
    cleanable = candidate.range
    if cleanable is None:
        raise ValueError(f"{state.topic_partition} is not a compaction candidate ({candidate.eligibility})")
    try:
        return _compact(store, run, state, config, candidate, write=write)
    except UNCLEANABLE_ERRORS as exc:
        failed = _without_round(state, candidate, CompactionStatus.QUARANTINED)
        return replace(failed, checkpoint_after=state.cleaner_checkpoint, error=str(exc))


def _compact(
    store: ObjectStore,
    run: RunRecord,
    state: PartitionState,
    config: TopicConfig,
    candidate: CompactionCandidate,
    *,
    write: bool,
) -> PartitionCompaction:
    cleanable = candidate.range
    if cleanable is None:  # checked by the caller; narrows the type
        raise ValueError("no cleanable range")
    started = time.perf_counter()
    sources = [_source(store, entry, config) for entry in state.segments]
    read_done = time.perf_counter()
    result = clean_round(
        sources,
        first_dirty=cleanable.first_dirty_offset,
        end_offset=cleanable.first_uncleanable_offset,
        config=config,
        now_ms=run.now_ms,
    )
    clean_done = time.perf_counter()
    output = _output_segments(store, run, state, config, sources, result, write=write)
    write_done = time.perf_counter()
    kept = {segment.key for segment in output} & set(result.replaced)
    replaced = tuple(s for s in state.segments if s.key in set(result.replaced) - kept)
    dirty = segments_between(state.segments, cleanable.first_dirty_offset, cleanable.first_uncleanable_offset)
    stats = CleanerStats.of(
        result,
        bytes_read=sum(source.size for source in sources if source.base_offset < result.end_offset),
        map_bytes_read=sum(segment.size for segment in dirty),
        map_keys=result.map_keys,
        bytes_written=sum(segment.size for segment in output),
        segments_written=len(output) - len(kept),
        segments_kept=len(kept),
        times=PhaseTimes(read_done - started, clean_done - read_done, write_done - clean_done),
    )
    cleaned_state = replace(
        state,
        segments=output + tuple(s for s in state.segments if s.base_offset >= result.end_offset),
        cleaner_checkpoint=result.end_offset,
    )
    after = cleanable_range(cleaned_state, config, now_ms=run.now_ms).cleanable_ratio
    return PartitionCompaction(
        topic_partition=state.topic_partition,
        status=CompactionStatus.CLEANED,
        eligibility=candidate.eligibility,
        checkpoint_before=state.cleaner_checkpoint,
        checkpoint_after=result.end_offset,
        checkpoint_state=cleanable.checkpoint,
        first_dirty_offset=cleanable.first_dirty_offset,
        first_uncleanable_offset=cleanable.first_uncleanable_offset,
        dirty_ratio_before=cleanable.cleanable_ratio,
        dirty_ratio_after=after,
        compaction_delay_ms=candidate.compaction_delay_ms,
        end_offset=result.end_offset,
        segments=output,
        replaced=replaced,
        kept=frozenset(kept),
        stats=stats,
    )


def _source(store: ObjectStore, entry: SegmentEntry, config: TopicConfig) -> SourceSegment:
    """The segment's bytes, with the index sizes its rebuilt indexes have (for segment.index.bytes)."""
    data = read_segment(store, entry)
    sizes = index_sizes(data, index_interval_bytes=config.index_interval_bytes, segment=entry.key)
    return SourceSegment(
        name=entry.key,
        base_offset=entry.base_offset,
        data=data,
        last_modified_ms=entry.last_modified_ms,
        offset_index_bytes=sizes.offset_index_bytes,
        time_index_bytes=sizes.time_index_bytes,
    )


def _output_segments(
    store: ObjectStore,
    run: RunRecord,
    state: PartitionState,
    config: TopicConfig,
    sources: Sequence[SourceSegment],
    result: RoundResult,
    *,
    write: bool,
) -> tuple[SegmentEntry, ...]:
    """The entries of the round's output: the existing entry for a single-segment group whose output is
    byte-identical to it (same ``.log`` bytes, same aborted transactions), else a new segment (staged unless
    ``write`` is off)."""
    entries = {segment.key: segment for segment in state.segments}
    by_name = {source.name: source for source in sources}
    markers: dict[str, tuple[AbortedTxn, ...]] = {}

    def aborts_of(name: str) -> tuple[AbortedTxn, ...]:
        if not markers:  # rebuilt once per round, only when some group is byte-identical
            markers.update(zip(by_name, aborted_from_markers(sources), strict=True))
        return markers[name]

    out: list[SegmentEntry] = []
    for cleaned in result.segments:
        if len(cleaned.sources) == 1:
            name = cleaned.sources[0]
            if cleaned.data == bytes(by_name[name].data) and aborts_of(name) == cleaned.aborted:
                out.append(entries[name])
                continue
        out.append(_new_segment(store, run, state.topic_partition, config, cleaned, write=write))
    return tuple(out)


def settle_checkpoint(state: PartitionState, config: TopicConfig) -> PartitionState:
    """Reset a cleaner checkpoint the deletion passes left invalid (below the new log start offset) to the
    log start offset, as the cleaner's next look at the partition would right away (``cleanableOffsets``'
    ``forceUpdateCheckpoint``; silent for compact,delete topics): a rerun then finds nothing to change."""
    if not (config.compact and config.cleaner_enabled) or state.cleaner_checkpoint is None:
        return state
    first_dirty, checkpoint = first_dirty_offset(state)
    if checkpoint is CheckpointState.VALID:
        return state
    return replace(state, cleaner_checkpoint=first_dirty)


def _new_segment(
    store: ObjectStore,
    run: RunRecord,
    topic_partition: TopicPartition,
    config: TopicConfig,
    cleaned: CleanedSegment,
    *,
    write: bool,
) -> SegmentEntry:
    files = cleaned_segment_files(cleaned, config)
    if write:
        return stage_segment(
            store,
            run,
            topic_partition=topic_partition,
            base_offset=cleaned.base_offset,
            files=files.by_kind(),
            last_modified_ms=cleaned.last_modified_ms,
        )
    key = segment_key(topic_partition, cleaned.base_offset, FileKind.LOG, run_id=run.run_id)
    summary = summarize_segment(files.log, key=location_of(store, key), base_offset=cleaned.base_offset)
    return summary.entry(
        key=key,
        base_offset=cleaned.base_offset,
        etag="",
        last_modified_ms=cleaned.last_modified_ms,
        origin=SegmentOrigin.WRITTEN,
        run_id=run.run_id,
    )


__all__ = [
    "COMPACTION_REASON",
    "CompactionResult",
    "CompactionStatus",
    "CompactionTask",
    "PartitionCompaction",
    "compact_partition",
    "compact_states",
    "compaction_budget",
    "compaction_task",
    "in_process",
    "settle_checkpoint",
]
