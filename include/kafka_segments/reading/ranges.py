"""The offsets a read covers per partition: its options resolved against one committed manifest, with the
meanings of Spark's Kafka source (docs/reading.md, "Options").

``earliest`` is the log start offset; ``latest`` the high watermark, or the last stable offset under
read_committed (as ``ListOffsets`` with that isolation level). Per-partition JSON must name exactly the
partitions the read covers, as Spark's Kafka source asserts. A start below the log start offset (or an end
past latest) is lost data: ``DataLossError`` with failOnDataLoss, else the range is clipped."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.lake.roots import VersionRoot
from kafka_segments.reading.errors import DataLossError, ReadOptionError
from kafka_segments.reading.options import EARLIEST, LATEST, Bound, BoundKind, ReadOptions
from kafka_segments.reading.timestamps import offset_for_timestamp
from kafka_segments.state import PartitionState
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class PartitionRange:
    """Offsets ``[start, end)`` of one partition's committed log."""

    state: PartitionState
    start: int
    end: int

    @property
    def topic_partition(self) -> TopicPartition:
        return self.state.topic_partition


def selected_states(root: VersionRoot, options: ReadOptions) -> tuple[PartitionState, ...]:
    """The partitions of ``root``'s version the subscription covers (no other partition's pieces are read).

    Raises:
        ReadOptionError: ``assign`` names a partition the manifest does not have.
    """
    subscription = options.subscription
    missing = sorted(subscription.assigned - root.topic_partitions())
    if missing:
        raise ReadOptionError(
            "assign",
            f"partition(s) {', '.join(map(str, missing))} are not in the lake "
            f"(manifest version {root.version})",
        )
    return root.load(subscription.selects)


def resolve_ranges(
    store: ObjectStore, states: tuple[PartitionState, ...], options: ReadOptions
) -> tuple[PartitionRange, ...]:
    """``[start, end)`` of every partition in ``states``.

    Raises:
        ReadOptionError: per-partition JSON that does not name exactly these partitions, a start after the
            end, a starting timestamp no record reaches (startingOffsetsByTimestampStrategy=error).
        DataLossError: a start below the log start offset or an end past latest, with failOnDataLoss.
    """
    covered = {state.topic_partition for state in states}
    for bound in (options.starting, options.ending):
        _check_partitions(bound, covered)
    return tuple(_range(store, state, options) for state in states)


def _check_partitions(bound: Bound, covered: set[TopicPartition]) -> None:
    if bound.kind not in (BoundKind.OFFSETS, BoundKind.TIMESTAMPS):
        return
    named = set(bound.values)
    if named == covered:
        return
    missing = ", ".join(map(str, sorted(covered - named))) or "none"
    extra = ", ".join(map(str, sorted(named - covered))) or "none"
    raise ReadOptionError(
        bound.option,
        "must name every partition the read covers, and only those "
        f"(missing: {missing}; not covered: {extra})",
    )


def _latest(state: PartitionState, options: ReadOptions) -> int:
    return state.last_stable_offset if options.read_committed else state.high_watermark


def _range(store: ObjectStore, state: PartitionState, options: ReadOptions) -> PartitionRange:
    latest = _latest(state, options)
    start = _resolve(
        store, state, options.starting, latest=latest, unmatched_latest=options.starting_strategy_latest
    )
    end = _resolve(store, state, options.ending, latest=latest, unmatched_latest=True)
    tp = state.topic_partition
    if start < state.log_start_offset:
        if options.fail_on_data_loss:
            raise DataLossError(
                f"{tp}: starting offset {start} is below the log start offset {state.log_start_offset} "
                "(those records were deleted); set failOnDataLoss=false to start at the log start offset",
                location=store.describe(),
            )
        start = state.log_start_offset
    if end > latest:
        if options.fail_on_data_loss:
            raise DataLossError(
                f"{tp}: ending offset {end} is past the latest offset {latest}; "
                "set failOnDataLoss=false to end at the latest offset",
                location=store.describe(),
            )
        end = latest
    if start > end and options.fail_on_data_loss:
        raise ReadOptionError(
            options.starting.option, f"{tp}: the starting offset {start} is after the ending offset {end}"
        )
    return PartitionRange(state, start, max(start, end))


def _resolve(
    store: ObjectStore, state: PartitionState, bound: Bound, *, latest: int, unmatched_latest: bool
) -> int:
    tp = state.topic_partition
    if bound.kind is BoundKind.EARLIEST:
        return state.log_start_offset
    if bound.kind is BoundKind.LATEST:
        return latest
    if bound.kind is BoundKind.OFFSETS:
        offset = bound.values[tp]
        return state.log_start_offset if offset == EARLIEST else latest if offset == LATEST else offset
    timestamp = bound.timestamp if bound.kind is BoundKind.TIMESTAMP else bound.values[tp]
    found = offset_for_timestamp(store, state, timestamp, fetchable_end=latest)
    if found is not None:
        return found
    if not unmatched_latest:
        raise ReadOptionError(
            bound.option,
            f"{tp}: no record at or after timestamp {timestamp} "
            "(set startingOffsetsByTimestampStrategy=latest to start at the latest offset)",
        )
    return latest
