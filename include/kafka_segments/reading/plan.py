"""A lake read planned on one committed manifest: the options parsed, the state chosen (head or time
travel), the partitions and their offset ranges resolved, and the tasks that read them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka_segments.reading.options import ReadOptions, View, parse_options
from kafka_segments.reading.ranges import PartitionRange, resolve_ranges, selected_states
from kafka_segments.reading.spans import ByteSpan, segment_spans
from kafka_segments.reading.tasks import SegmentTask, SpansOf, segment_tasks
from kafka_segments.reading.timetravel import check_objects_exist, root_as_of
from kafka_segments.state import SegmentEntry
from kafka_segments.storage.base import ObjectStore


@dataclass(frozen=True, slots=True)
class ReadPlan:
    """What a read covers: the manifest version, each partition's offsets, and the tasks."""

    version: int
    options: ReadOptions
    ranges: tuple[PartitionRange, ...]
    tasks: tuple[SegmentTask, ...]


def as_options(options: Mapping[str, object] | ReadOptions) -> ReadOptions:
    return options if isinstance(options, ReadOptions) else parse_options(options)


def plan_read(store: ObjectStore, options: Mapping[str, object] | ReadOptions) -> ReadPlan:
    """The plan of a read of ``store`` with ``options`` (Spark's Kafka option names).

    Raises:
        ReadOptionError: a bad option; DataLossError: a requested offset the lake does not hold (with
            failOnDataLoss); NoCommittedStateError, ManifestVersionNotFoundError: no such state;
        VersionGoneError: a time-travel read of a version whose segments were deleted.
    """
    parsed = as_options(options)
    travelling = parsed.version is not None or parsed.timestamp_as_of is not None
    root = root_as_of(store, version=parsed.version, timestamp_ms=parsed.timestamp_as_of)
    states = selected_states(root, parsed)
    if travelling:
        check_objects_exist(store, root.version, states)
    ranges = resolve_ranges(store, states, parsed)
    drop_aborted = parsed.read_committed or parsed.view is View.LATEST
    tasks = segment_tasks(ranges, drop_aborted=drop_aborted, spans_of=_spans_of(store, parsed))
    return ReadPlan(root.version, parsed, ranges, tuple(tasks))


def _spans_of(store: ObjectStore, options: ReadOptions) -> SpansOf | None:
    """How a large segment is split; the compacted view reads each partition in one task: not split."""
    if options.view is View.LATEST:
        return None

    def spans_of(segment: SegmentEntry) -> tuple[ByteSpan, ...]:
        return segment_spans(store, segment, max_bytes=options.max_bytes_per_partition)

    return spans_of
