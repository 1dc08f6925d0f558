"""One cleaning round over a partition of the lake: read its segments (``pipeline.compaction.sources``), clean
them (``compaction.rewrite.clean_round``), stage the output under the run's unique object names (``<base>-<run
id>.log`` + indexes, invisible until a commit lists them).

A single-segment group whose cleaned bytes and aborted transactions equal its own keeps the existing object
(same records, fewer writes). A round that fails on bad data quarantines the partition for the run (Kafka
marks it uncleanable); a failing store is raised."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from kafka_segments.compaction.decoded import DEFAULT_BUDGET_BYTES
from kafka_segments.compaction.eligibility import CompactionCandidate
from kafka_segments.compaction.errors import CompactionError
from kafka_segments.compaction.output import cleaned_segment_files
from kafka_segments.compaction.range import CleanableRange, cleanable_range, segments_between
from kafka_segments.compaction.results import CleanedSegment, RoundResult
from kafka_segments.compaction.rewrite import clean_round
from kafka_segments.compaction.source import SourceSegment, aborted_from_markers
from kafka_segments.compaction.stats import CleanerStats, PhaseTimes
from kafka_segments.config.model import OffsetMapCapacity, TopicConfig
from kafka_segments.errors import (
    CorruptRecordError,
    SegmentObjectMismatchError,
    SegmentWriteError,
    UnsupportedCodecError,
)
from kafka_segments.lake.layout import segment_key
from kafka_segments.lake.runs import RunRecord
from kafka_segments.lake.scan import summarize_segment
from kafka_segments.lake.staging import stage_segment
from kafka_segments.pipeline.compaction.results import CompactionStatus, PartitionCompaction
from kafka_segments.pipeline.compaction.sources import plain_source, streamed_source
from kafka_segments.segment.files import FileKind
from kafka_segments.segment.index_sizes import index_sizes_of
from kafka_segments.segment.txn_index import AbortedTxn
from kafka_segments.state import PartitionState, SegmentEntry, SegmentOrigin
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition

UNCLEANABLE_ERRORS = (
    CompactionError,
    CorruptRecordError,
    UnsupportedCodecError,
    SegmentWriteError,
    SegmentObjectMismatchError,
)
"""What makes a partition uncleanable in a run (bad data, not a failing store: that one is raised)."""


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
        return _compact(store, run, state, config, candidate, cleanable, write=write)
    except UNCLEANABLE_ERRORS as exc:
        failed = PartitionCompaction.without_round(state, candidate, CompactionStatus.QUARANTINED)
        return replace(failed, checkpoint_after=state.cleaner_checkpoint, error=str(exc))


def _compact(
    store: ObjectStore,
    run: RunRecord,
    state: PartitionState,
    config: TopicConfig,
    candidate: CompactionCandidate,
    cleanable: CleanableRange,
    *,
    write: bool,
) -> PartitionCompaction:
    started = time.perf_counter()
    sources = _sources(store, state.segments, config, decode_below=cleanable.first_uncleanable_offset)
    read_done = time.perf_counter()
    result = clean_round(
        sources,
        first_dirty=cleanable.first_dirty_offset,
        end_offset=cleanable.first_uncleanable_offset,
        config=config,
        now_ms=run.now_ms,
        log_start_offset=state.log_start_offset,
    )
    clean_done = time.perf_counter()
    output = _output_segments(store, run, state, config, sources, result, write=write)
    write_done = time.perf_counter()
    sources_replaced = set(result.replaced)
    kept = {segment.key for segment in output} & sources_replaced
    replaced = tuple(s for s in state.segments if s.key in sources_replaced - kept)
    dirty = segments_between(state.segments, cleanable.first_dirty_offset, cleanable.first_uncleanable_offset)
    stats = replace(
        CleanerStats.of(
            result,
            bytes_read=sum(source.size for source in sources if source.base_offset < result.end_offset),
            map_bytes_read=sum(segment.size for segment in dirty),
            map_keys=result.map_keys,
            bytes_written=sum(segment.size for segment in output),
            segments_written=len(output) - len(kept),
            segments_kept=len(kept),
            times=PhaseTimes(read_done - started, clean_done - read_done, write_done - clean_done),
        ),
        buffer_utilization=result.map_keys / _map_slots(config),
    )
    cleaned = PartitionCompaction(
        topic_partition=state.topic_partition,
        status=CompactionStatus.CLEANED,
        eligibility=candidate.eligibility,
        checkpoint_before=state.cleaner_checkpoint,
        checkpoint_after=result.end_offset,
        checkpoint_state=cleanable.checkpoint,
        first_dirty_offset=cleanable.first_dirty_offset,
        first_uncleanable_offset=cleanable.first_uncleanable_offset,
        dirty_ratio_before=cleanable.cleanable_ratio,
        compaction_delay_ms=candidate.compaction_delay_ms,
        cleanable_bytes=cleanable.cleanable_bytes,
        end_offset=result.end_offset,
        segments=output,
        replaced=replaced,
        kept=frozenset(kept),
        stats=stats,
    )
    after = cleaned.new_state(state, run_id=run.run_id)
    return replace(
        cleaned, dirty_ratio_after=cleanable_range(after, config, now_ms=run.now_ms).cleanable_ratio
    )


KAFKA_DEDUPE_BUFFER_SIZE = 134_217_728
"""Kafka's default ``log.cleaner.dedupe.buffer.size`` (128 MiB): what an unbounded map's utilization is of."""


def _map_slots(config: TopicConfig) -> int:
    capacity = config.offset_map_capacity or OffsetMapCapacity.of(
        buffer_size=KAFKA_DEDUPE_BUFFER_SIZE,
        load_factor=config.dedupe_buffer_load_factor,
        threads=config.cleaner_threads,
    )
    return max(capacity.slots, 1)


def _sources(
    store: ObjectStore, entries: Sequence[SegmentEntry], config: TopicConfig, *, decode_below: int
) -> list[SourceSegment]:
    """Every segment of the partition, each with the index sizes its rebuilt indexes have (for
    segment.index.bytes). The segments the round will decode (base offset below ``decode_below``) are
    decoded, and their keys grouped, while they are read (``compaction.streamed``), up to the round's
    decoding budget; the others are read as they are."""
    budget = DEFAULT_BUDGET_BYTES
    sources = []
    for entry in entries:
        streamed = entry.base_offset < decode_below and 0 < entry.size <= budget
        source = (
            streamed_source(store, entry, max_batch_bytes=config.max_batch_decompressed_bytes)
            if streamed
            else plain_source(store, entry)
        )
        if source.decoded is not None:
            budget -= source.decoded.nbytes
        sizes = index_sizes_of(source.header_table(), index_interval_bytes=config.index_interval_bytes)
        sources.append(
            replace(
                source, offset_index_bytes=sizes.offset_index_bytes, time_index_bytes=sizes.time_index_bytes
            )
        )
    return sources


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
            if _same_bytes(cleaned, by_name[name]) and aborts_of(name) == cleaned.aborted:
                out.append(entries[name])
                continue
        out.append(_new_segment(store, run, state.topic_partition, config, cleaned, write=write))
    return tuple(out)


def _same_bytes(cleaned: CleanedSegment, source: SourceSegment) -> bool:
    """Whether the cleaned ``.log`` equals the source's (lengths first: most groups differ there)."""
    if sum(len(batch) for batch in cleaned.batches) != source.size:
        return False
    return cleaned.data == source.data


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
    summary = summarize_segment(files.log, key=store.location(key), base_offset=cleaned.base_offset)
    return summary.entry(
        key=key,
        base_offset=cleaned.base_offset,
        etag="",
        last_modified_ms=cleaned.last_modified_ms,
        origin=SegmentOrigin.WRITTEN,
        run_id=run.run_id,
    )
