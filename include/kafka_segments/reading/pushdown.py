"""Filters Spark pushes down (``DataSourceReader.pushFilters``) used to skip work: tasks of other topics and
partitions, offsets outside the filtered range (and the byte spans of a split segment that cannot hold
them), segments whose largest timestamp is below a lower bound on ``timestamp``, and, inside a segment
whose ``.timeindex`` the manifest pins, the offsets (and so the spans) before that bound
(``lake.time_pin``). An upper bound on ``timestamp`` narrows nothing: CreateTime timestamps are not ordered
along a log, and nothing the lake records bounds a segment's smallest timestamp (docs/reading.md,
"Timestamps inside a segment"). Spark still evaluates every filter on the rows (all are handed back), so a
bound only has to be safe, never exact.
The compacted view only skips topics and partitions: an offset or
timestamp filter applies to its rows, after the latest record of each key is chosen."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kafka_segments.reading.tasks import SegmentTask, link_tasks
from kafka_segments.state import SegmentEntry

LARGEST_UTC_OFFSET_MS = 14 * 3_600_000
TimeFloor = Callable[[SegmentEntry, int], int]
"""``(segment, ms)`` -> the first offset of the segment that may hold a timestamp at or after ``ms``."""


@dataclass(frozen=True, slots=True)
class Narrowing:
    """What the pushed filters allow: ``None`` means no bound."""

    topics: frozenset[str] | None = None
    partitions: frozenset[int] | None = None
    offset_min: int | None = None
    offset_max: int | None = None
    """Inclusive."""
    timestamp_min_ms: int | None = None

    def with_filter(self, pushed: Any) -> Narrowing:
        """This narrowing and one ``pyspark.sql.datasource`` filter (unknown ones change nothing)."""
        attribute = getattr(pushed, "attribute", None)
        if attribute is None or len(attribute) != 1:
            return self
        name = attribute[0]
        kind = type(pushed).__name__
        value = getattr(pushed, "value", None)
        if kind == "In":
            values: tuple[Any, ...] = tuple(value or ())
        elif kind in ("EqualTo", "EqualNullSafe"):
            values = (value,)
        else:
            values = ()
        if values and name in ("topic", "partition"):
            return self._with_values(name, values)
        low, high = _bounds(kind, values, value)
        if name == "offset":
            return self._with_offsets(low, high)
        if name == "timestamp" and low is not None:
            ms = _timestamp_ms(low)
            if ms is not None:
                return dataclasses.replace(self, timestamp_min_ms=max(ms, self.timestamp_min_ms or ms))
        return self

    def _with_values(self, name: str, values: tuple[Any, ...]) -> Narrowing:
        if name == "topic":
            topics = frozenset(str(v) for v in values if isinstance(v, str))
            return dataclasses.replace(self, topics=topics if self.topics is None else self.topics & topics)
        numbers = frozenset(int(v) for v in values if isinstance(v, int))
        kept = numbers if self.partitions is None else self.partitions & numbers
        return dataclasses.replace(self, partitions=kept)

    def _with_offsets(self, low: Any, high: Any) -> Narrowing:
        narrowed = self
        if isinstance(low, int):
            narrowed = dataclasses.replace(narrowed, offset_min=max(low, self.offset_min or low))
        if isinstance(high, int):
            narrowed = dataclasses.replace(narrowed, offset_max=min(high, self.offset_max or high))
        return narrowed

    def narrow(
        self, tasks: Iterable[SegmentTask], *, records_too: bool, floor_of: TimeFloor | None = None
    ) -> list[SegmentTask]:
        """The tasks (clipped to the offset bounds) that may hold a row the filters keep; ``records_too``
        False keeps only the topic and partition bounds (the compacted view). ``floor_of(segment, ms)``: the
        first offset of the segment that may hold a timestamp at or after ``ms`` (``lake.time_pin``), which
        clips a lower ``timestamp`` bound's tasks of a split segment too (asked once per segment)."""
        floors = _floors(floor_of, self.timestamp_min_ms)
        kept: list[SegmentTask] = []
        for task in tasks:
            tp = task.topic_partition
            if self.topics is not None and tp.topic not in self.topics:
                continue
            if self.partitions is not None and tp.partition not in self.partitions:
                continue
            if not records_too:
                kept.append(task)
                continue
            start = max(task.start, self.offset_min) if self.offset_min is not None else task.start
            end = min(task.end, self.offset_max + 1) if self.offset_max is not None else task.end
            minimum = self.timestamp_min_ms
            if minimum is not None and task.segment.max_timestamp_ms < minimum:
                continue
            if floors is not None and task.span is not None:  # an unsplit segment is read whole anyway
                start = max(start, floors(task.segment))
            if start >= end:
                continue
            if task.span is not None and not task.span.meets(start, end):
                continue
            kept.append(dataclasses.replace(task, start=start, end=end))
        return link_tasks(kept)


def _floors(floor_of: TimeFloor | None, minimum: int | None) -> Callable[[SegmentEntry], int] | None:
    """``floor_of`` at ``minimum``, asked once per segment (its spans share it); ``None`` without both."""
    if floor_of is None or minimum is None:
        return None
    found: dict[str, int] = {}

    def floor(segment: SegmentEntry) -> int:
        if segment.key not in found:
            found[segment.key] = floor_of(segment, minimum)
        return found[segment.key]

    return floor


def _bounds(kind: str, values: tuple[Any, ...], value: Any) -> tuple[Any, Any]:
    """(lower, upper) inclusive bounds a comparison or equality gives (strict ones widened by one for
    integers; other values kept as they are, which only widens a timestamp bound)."""
    if values:
        ordered = [v for v in values if v is not None]
        try:
            return (min(ordered), max(ordered)) if ordered else (None, None)
        except TypeError:
            return None, None
    step = 1 if isinstance(value, int) and not isinstance(value, bool) else 0
    return {
        "GreaterThan": (value + step if step else value, None),
        "GreaterThanOrEqual": (value, None),
        "LessThan": (None, value - step if step else value),
        "LessThanOrEqual": (None, value),
    }.get(kind, (None, None))


def _timestamp_ms(value: Any) -> int | None:
    """Epoch milliseconds at or below a Spark timestamp value: a datetime; a naive one may be in any time
    zone, so the bound is moved back by the largest UTC offset."""
    if not isinstance(value, datetime):
        return None
    if value.tzinfo is None:
        return math.floor(value.replace(tzinfo=UTC).timestamp() * 1000) - LARGEST_UTC_OFFSET_MS
    return math.floor(value.timestamp() * 1000) - 1
