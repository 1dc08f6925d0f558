"""A read as independent tasks: one per segment holding offsets of a partition's range (a Spark input
partition each), or one per byte span of a large segment (``spans``), pinned to the manifest's entries: a
task reads the object version its ``SegmentEntry`` names (its etag, or its size and sha256), so it sees that
version whatever commits meanwhile."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kafka_segments.reading.ranges import PartitionRange
from kafka_segments.reading.spans import ByteSpan, link_spans
from kafka_segments.state import SegmentEntry
from kafka_segments.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class SegmentTask:
    """Offsets ``[start, end)`` of one segment of ``topic_partition`` (of its batches in ``span`` only, when
    the segment is split).

    ``following`` are the partition's later segments, for a transaction whose marker lies past this one
    (read only when ``drop_aborted`` and such a transaction is found)."""

    topic_partition: TopicPartition
    segment: SegmentEntry
    start: int
    end: int
    drop_aborted: bool
    following: tuple[SegmentEntry, ...] = ()
    span: ByteSpan | None = None


SpansOf = Callable[[SegmentEntry], tuple[ByteSpan, ...]]


def segment_tasks(
    ranges: Iterable[PartitionRange], *, drop_aborted: bool, spans_of: SpansOf | None = None
) -> list[SegmentTask]:
    """The tasks of every range, partition by partition, in offset order (empty ranges give none); a
    segment ``spans_of`` splits gives one task per span that may hold offsets of the range."""
    tasks: list[SegmentTask] = []
    for covered in ranges:
        segments = covered.state.segments
        for index, segment in enumerate(segments):
            if segment.is_empty or segment.next_offset <= covered.start or segment.base_offset >= covered.end:
                continue
            tasks.append(
                SegmentTask(
                    topic_partition=covered.topic_partition,
                    segment=segment,
                    start=max(covered.start, segment.base_offset),
                    end=min(covered.end, segment.next_offset),
                    drop_aborted=drop_aborted,
                    following=segments[index + 1 :] if drop_aborted else (),
                )
            )
    return split_tasks(tasks, spans_of) if spans_of is not None else tasks


def split_tasks(tasks: list[SegmentTask], spans_of: SpansOf) -> list[SegmentTask]:
    """Each task of a segment ``spans_of`` splits as one task per span meeting its offsets, linked."""
    split: list[SegmentTask] = []
    for task in tasks:
        meeting = [span for span in spans_of(task.segment) if span.meets(task.start, task.end)]
        if not meeting:  # not split (or an index that claims none of the offsets: read it whole)
            split.append(task)
            continue
        split.extend(dataclasses.replace(task, span=span) for span in meeting)
    return link_tasks(split)


def link_tasks(tasks: list[SegmentTask]) -> list[SegmentTask]:
    """``tasks`` with each span's ``read_before`` / ``read_after`` saying whether the neighbouring span of
    its segment is among them (after planning, and again after pushed filters dropped some)."""
    spans = link_spans([task.span for task in tasks], [task.segment.key for task in tasks])
    return [
        task if span is task.span else dataclasses.replace(task, span=span)
        for task, span in zip(tasks, spans, strict=True)
    ]


def tasks_by_partition(tasks: tuple[SegmentTask, ...]) -> list[list[SegmentTask]]:
    """The tasks grouped by partition (they come partition by partition)."""
    groups: list[list[SegmentTask]] = []
    for task in tasks:
        if groups and groups[-1][0].topic_partition == task.topic_partition:
            groups[-1].append(task)
        else:
            groups.append([task])
    return groups
