"""One cleaning round over a partition's segments: bytes in, cleaned segments out (``Cleaner.doClean``,
``cleanSegments``, ``cleanInto``; ``MemoryRecords.filterTo``; docs/compaction.md, step 4).

The offset map (``offset_map``) sets the round's end offset, ``map.latestOffset + 1``. **Every** segment below
it is recopied, the clean section included (that is how tombstones and markers there eventually go), grouped
by ``grouping``, with one transaction state (``txn_state``) shared by all groups. Each batch gets its
retention and each record its fate (``decisions``, over columns by ``fates``) and is written as ``filterTo``
writes it (``filtering``): untouched bytes when all is kept, rebuilt as v2 otherwise, the 61-byte empty header
for ``RETAIN_EMPTY``. A kept ABORT marker whose data was seen is re-indexed
(``output.cleaned_segment_files``).

Each dirty segment is decoded once for both passes when it fits the round's memory budget (``decoded``), or
not at all when it comes with its ``columns`` (``records.fast.StreamDecoder``), and written without a Python
call per record (``records.fast.rebuild_batches``). ``now`` is the run's logical time."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction.decisions import legacy_delete_horizon
from kafka_segments.compaction.decoded import DecodedSegments
from kafka_segments.compaction.errors import CompactionError
from kafka_segments.compaction.filtering import clean_group
from kafka_segments.compaction.gc_pause import cyclic_gc_paused
from kafka_segments.compaction.grouping import group_segments
from kafka_segments.compaction.offset_map import OffsetMap, build_offset_map
from kafka_segments.compaction.producers import ProducerState, active_producers, replay_producers
from kafka_segments.compaction.results import (
    BatchAction,
    BatchOutcome,
    BatchOutcomes,
    CleanedSegment,
    RoundContext,
    RoundResult,
)
from kafka_segments.compaction.source import (
    SourceSegment,
    aborted_from_markers,
    aborted_in_range,
    check_order,
    from_log_start,
)
from kafka_segments.compaction.txn_state import TransactionState
from kafka_segments.config.model import TopicConfig
from kafka_segments.records.batch import BatchHeader
from kafka_segments.records.fast import DigestTable
from kafka_segments.segment.txn_index import AbortedTxn

__all__ = ["BatchAction", "BatchOutcome", "CleanedSegment", "EmptyRoundError", "RoundResult", "clean_round"]


class EmptyRoundError(CompactionError):
    """The cleanable range is empty: Kafka never runs such a round."""


def clean_round(
    segments: Sequence[SourceSegment],
    *,
    first_dirty: int,
    end_offset: int,
    config: TopicConfig,
    now_ms: int,
    txn_indexes: Sequence[Sequence[AbortedTxn]] | None = None,
    log_start_offset: int | None = None,
    arena: npt.NDArray[np.uint8] | None = None,
) -> RoundResult:
    """Clean the partition whose whole log is ``segments`` (active segment included, in offset order).

    Args:
        first_dirty: the first dirty offset (``CleanableRange.first_dirty_offset``).
        end_offset: the round's upper bound (``CleanableRange.first_uncleanable_offset``).
        txn_indexes: each segment's ``.txnindex`` entries; ``None``: rebuilt from the markers.
        log_start_offset: the partition's log start offset; aborted transactions whose marker is below it
            are not seen (``source.from_log_start``), nor producers only in segments ending at or below it
            (``_replayed``). ``None``: every transaction and producer in ``segments`` is seen.
        arena: a writable uint8 buffer a worker reuses round after round to decompress a segment into
            (``records.fast.decode_record_columns``): on this project's VMs, writing ~1 GB into memory
            already touched is several times faster than into fresh pages. Free again when the round returns.
            Not to be given when a segment's ``columns`` (decoded while it was read) already occupy it.

    Raises:
        EmptyRoundError: ``first_dirty >= end_offset``.
        CompactionError: a legacy entry would have to be kept as an empty batch (Kafka fails the round);
            ``OffsetMapFullError``: a bounded map with a load factor above 1 ran out of slots.
        CorruptRecordError: a damaged batch; ``DecompressionLimitError``: a batch inflating past
            ``config.max_batch_decompressed_bytes``.
    """
    with cyclic_gc_paused():
        check_order(segments)
        indexes = tuple(txn_indexes) if txn_indexes is not None else aborted_from_markers(segments)
        if log_start_offset is not None:
            indexes = from_log_start(indexes, log_start_offset)
        decoded = DecodedSegments(arena=arena, max_batch_bytes=config.max_batch_decompressed_bytes)
        offset_map = _build_map(segments, indexes, first_dirty, end_offset, decoded, config)
        return _clean_with_map(
            segments,
            offset_map,
            indexes,
            config=config,
            now_ms=now_ms,
            decoded=decoded,
            log_start_offset=log_start_offset,
        )


def _clean_with_map(
    segments: Sequence[SourceSegment],
    offset_map: OffsetMap,
    indexes: Sequence[Sequence[AbortedTxn]],
    *,
    config: TopicConfig,
    now_ms: int,
    decoded: DecodedSegments,
    log_start_offset: int | None = None,
) -> RoundResult:
    """The round over ``offset_map`` (built by ``clean_round`` from the dirty range; Kafka's own cleaner tests
    also run rounds over maps built otherwise, ``LogCleanerTest``'s ``FakeOffsetMap``)."""
    first_dirty, end_offset = offset_map.first_dirty_offset, offset_map.end_offset
    round_end = offset_map.latest_offset + 1
    to_clean = [segment for segment in segments if segment.base_offset < round_end]
    if not to_clean:
        return RoundResult(first_dirty, round_end, (), BatchOutcomes.empty())
    context = RoundContext(
        offset_map=offset_map,
        active=dict(_active(_replayed(segments, log_start_offset), config, now_ms)),
        upper_bound=end_offset,
        now_ms=now_ms,
        delete_retention_ms=config.delete_retention_ms,
        legacy_horizon_ms=legacy_delete_horizon(
            [s.last_modified_ms for s in segments if s.base_offset < first_dirty],
            delete_retention_ms=config.delete_retention_ms,
        ),
        digest_table=DigestTable.of(offset_map.entries),
    )
    state = TransactionState(aborted_in_range(segments, indexes, to_clean[0].base_offset, round_end))
    groups = group_segments(
        to_clean,
        segment_bytes=config.segment_bytes,
        segment_index_bytes=config.segment_index_bytes,
        first_uncleanable_offset=end_offset,
    )
    outcomes: list[BatchOutcomes] = []
    cleaned = tuple(clean_group(group, context, state, outcomes, decoded) for group in groups)
    return RoundResult(first_dirty, round_end, cleaned, BatchOutcomes.concat(outcomes), len(offset_map))


def _build_map(
    segments: Sequence[SourceSegment],
    indexes: Sequence[Sequence[AbortedTxn]],
    first_dirty: int,
    end_offset: int,
    decoded: DecodedSegments,
    config: TopicConfig,
) -> OffsetMap:
    if first_dirty >= end_offset:
        raise EmptyRoundError(
            f"nothing to clean: first dirty offset {first_dirty} is not below the upper bound {end_offset}",
            location=segments[0].name if segments else "<no segments>",
        )
    aborted = aborted_in_range(segments, indexes, first_dirty, end_offset)
    return build_offset_map(
        segments,
        first_dirty=first_dirty,
        end_offset=end_offset,
        aborted=aborted,
        decoded=decoded,
        capacity=config.offset_map_capacity,
    )


def _producer_headers(segment: SourceSegment) -> list[BatchHeader]:
    """The headers ``replay_producers`` reads (v2, with a producer id), from a header scan of the segment."""
    table = segment.header_table()
    rows = np.flatnonzero(table.has_producer_id)
    return table.headers_at(rows)


def _active(segments: Sequence[SourceSegment], config: TopicConfig, now_ms: int) -> dict[int, ProducerState]:
    states = replay_producers(h for s in segments for h in _producer_headers(s))
    return dict(active_producers(states, now_ms=now_ms, expiration_ms=config.producer_id_expiration_ms))


def _replayed(segments: Sequence[SourceSegment], log_start_offset: int | None) -> Sequence[SourceSegment]:
    """The segments whose batches Kafka's producer state holds after loading the log: from the first whose
    next offset is above the log start offset (``state.manifest.open_after_load``: the rule, its source)."""
    if log_start_offset is None:
        return segments
    for index, segment in enumerate(segments):
        table = segment.header_table()
        next_offset = int(table.last_offset[-1]) + 1 if len(table) else segment.base_offset
        if next_offset > log_start_offset:
            return segments[index:]
    return ()
