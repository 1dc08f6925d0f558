"""Which segments of a round are cleaned into one new segment: ``Cleaner.groupSegmentsBySize``,
``lastOffsetForFirstSegment``.

Oldest first, a group takes the next segment while the summed ``.log`` sizes stay ``<= segment.bytes``, the
summed ``.index`` and ``.timeindex`` sizes each ``<= segment.index.bytes``, and the candidate is empty or its
estimated last offset minus the group's base offset fits an int32 (4-byte relative index offsets). Sizes are
those of the source files; the new segment takes the group's last mtime (``Cleaner.cleanSegments``)."""

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
