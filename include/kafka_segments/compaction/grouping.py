"""Which segments of a round are cleaned into one new segment: ``Cleaner.groupSegmentsBySize``.

Kafka's rule (``storage/.../log/Cleaner.java`` ``groupSegmentsBySize``, ``lastOffsetForFirstSegment``): oldest
first, a group starts with the next segment and takes the following segment while

* the summed ``.log`` sizes stay ``<= segment.bytes``,
* the summed ``.index`` sizes and the summed ``.timeindex`` sizes each stay ``<= segment.index.bytes``, and
* the candidate is empty, or its estimated last offset (the next segment's base offset - 1, or the first
  uncleanable offset - 1 for the last segment of the list) minus the base offset of the group's first
  segment fits an int32 (``<= Integer.MAX_VALUE``), so 4-byte relative index offsets cannot overflow.

Sizes are those of the source files before cleaning. Each group becomes one segment whose base offset is the
group's first base offset and whose mtime is the group's last segment's mtime (``Cleaner.cleanSegments``).
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka_segments.compaction.source import SourceSegment

INT32_MAX = 2**31 - 1


def group_segments(
    segments: Sequence[SourceSegment],
    *,
    segment_bytes: int,
    segment_index_bytes: int,
    first_uncleanable_offset: int,
) -> tuple[tuple[SourceSegment, ...], ...]:
    """The groups of ``segments`` (in order), each cleaned into one output segment."""
    groups: list[tuple[SourceSegment, ...]] = []
    index = 0
    while index < len(segments):
        group = [segments[index]]
        log_size = group[0].size
        offset_index = group[0].offset_index_bytes
        time_index = group[0].time_index_bytes
        index += 1
        while index < len(segments):
            candidate = segments[index]
            if (
                log_size + candidate.size > segment_bytes
                or offset_index + candidate.offset_index_bytes > segment_index_bytes
                or time_index + candidate.time_index_bytes > segment_index_bytes
                or not _span_fits(segments, index, group[0].base_offset, first_uncleanable_offset)
            ):
                break
            group.append(candidate)
            log_size += candidate.size
            offset_index += candidate.offset_index_bytes
            time_index += candidate.time_index_bytes
            index += 1
        groups.append(tuple(group))
    return tuple(groups)


def _span_fits(
    segments: Sequence[SourceSegment], index: int, group_base: int, first_uncleanable: int
) -> bool:
    candidate = segments[index]
    if candidate.size == 0:
        return True
    estimated_last = (
        segments[index + 1].base_offset - 1 if index + 1 < len(segments) else first_uncleanable - 1
    )
    return estimated_last - group_base <= INT32_MAX
