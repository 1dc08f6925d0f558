"""A read as independent tasks: one per segment holding offsets of a partition's range (a Spark input
partition each), pinned to the manifest's entries: a task reads the object its ``SegmentEntry`` names and
checks it against the recorded size and sha256, so it sees that version whatever commits meanwhile."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kafka_segments.reading.ranges import PartitionRange
from kafka_segments.state import SegmentEntry
from kafka_segments.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class SegmentTask:
    """Offsets ``[start, end)`` of one segment of ``topic_partition``.

    ``following`` are the partition's later segments, for a transaction whose marker lies past this one
    (read only when ``drop_aborted`` and such a transaction is found)."""

    topic_partition: TopicPartition
    segment: SegmentEntry
    start: int
    end: int
    drop_aborted: bool
    following: tuple[SegmentEntry, ...] = ()


def segment_tasks(ranges: Iterable[PartitionRange], *, drop_aborted: bool) -> list[SegmentTask]:
    """The tasks of every range, partition by partition, in offset order (empty ranges give none)."""
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
    return tasks


def tasks_by_partition(tasks: tuple[SegmentTask, ...]) -> list[list[SegmentTask]]:
    """The tasks grouped by partition (they come partition by partition)."""
    groups: list[list[SegmentTask]] = []
    for task in tasks:
        if groups and groups[-1][0].topic_partition == task.topic_partition:
            groups[-1].append(task)
        else:
            groups.append([task])
    return groups
