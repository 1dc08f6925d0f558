"""A partition's summary: the few numbers a format 2 root records per partition (docs/metadata-format-2.md,
"The summary"), so that a reader or a planner can answer "how big, from where to where, anything due, any
new object" without reading the partition's segments."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

from kafka_segments.state.manifest import PartitionState, SegmentEntry

LATER_FIELDS = frozenset(
    {
        "first_segment_base_offset",
        "first_segment_last_offset",
        "first_segment_bytes",
        "first_segment_largest_timestamp_ms",
        "live_sha256",
        "record_count",
        "largest_timestamp_min_ms",
        "largest_timestamp_max_ms",
        "last_stable_offset",
        "open_transactions",
        "run_id",
        "active_base_offset",
        "tail_sha256",
    }
)
"""Fields roots written before the planner read summaries lack (``None`` when read from such a root)."""


@dataclass(frozen=True, slots=True)
class PartitionSummary:
    """What a root says about one partition; every field follows from its ``PartitionState``. The
    ``first_segment_*`` fields are ``None`` for a partition without segments."""

    log_start_offset: int
    log_end_offset: int
    cleaner_checkpoint: int | None
    segments: int
    bytes: int
    first_segment_next_offset: int | None
    first_segment_max_timestamp_ms: int | None
    """The first segment's largest batch timestamp, ``-1`` when it has none."""
    newest_key: str | None
    """The ``.log`` key of the newest (active) segment."""
    first_segment_base_offset: int | None = None
    first_segment_last_offset: int | None = None
    """``None`` also for an empty first segment."""
    first_segment_bytes: int | None = None
    first_segment_largest_timestamp_ms: int | None = None
    """Kafka's ``LogSegment.largestTimestamp`` of the first segment (its mtime when it has no timestamp)."""
    live_sha256: str | None = None
    """``live_digest`` of the live segments' ``.log`` objects: a listing that gives the same digest shows
    every live object unchanged and nothing new (``None``: a root written before the field)."""
    record_count: int | None = None
    largest_timestamp_min_ms: int | None = None
    """The smallest and largest of the segments' ``largestTimestamp`` (``describe``'s range)."""
    largest_timestamp_max_ms: int | None = None
    last_stable_offset: int | None = None
    open_transactions: int | None = None
    """The open transactions Kafka knows after loading the log."""
    run_id: str | None = None
    """The run that last changed the partition."""
    active_base_offset: int | None = None
    """The base offset of the newest (active) segment: where the cleaner's dirty section ends at the
    latest."""
    tail_sha256: str | None = None
    """``live_digest`` of the live ``.log`` objects a run's listing of the partition's tail shows: those
    named after ``tail_start`` (the newest segment's). A listing of the tail that gives the same digest
    shows the newest segment unchanged (not regrown) and nothing new after it (``None``: a root written
    before the field, or a partition without segments; its folder is listed whole)."""

    @property
    def describes(self) -> bool:
        """Whether the root recorded what ``describe`` shows of the partition."""
        return self.record_count is not None and self.run_id is not None

    @property
    def complete(self) -> bool:
        """Whether the root recorded every field (a planner can skip the partition by it)."""
        return self.live_sha256 is not None and (self.segments == 0 or self.active_base_offset is not None)

    def to_dict(self) -> dict[str, Any]:
        return {field.name: getattr(self, field.name) for field in fields(self)}


def live_digest(objects: Iterable[tuple[str, int, str]]) -> str:
    """The sha256 of ``(key, size, etag)`` of a partition's ``.log`` objects, in key order: the same for the
    live segments of a state and for a listing that holds exactly those objects."""
    digest = hashlib.sha256()
    for key, size, etag in sorted(objects):
        digest.update(f"{key}\t{size}\t{etag}\n".encode())
    return digest.hexdigest()


def summarize(state: PartitionState) -> PartitionSummary:
    """The summary of ``state``."""
    first = state.segments[0] if state.segments else None
    timestamps = [segment.largest_timestamp_ms for segment in state.segments]
    return PartitionSummary(
        log_start_offset=state.log_start_offset,
        log_end_offset=state.log_end_offset,
        cleaner_checkpoint=state.cleaner_checkpoint,
        segments=len(state.segments),
        bytes=state.size_bytes,
        first_segment_next_offset=None if first is None else first.next_offset,
        first_segment_max_timestamp_ms=None if first is None else first.max_timestamp_ms,
        newest_key=None if first is None else state.segments[-1].key,
        first_segment_base_offset=None if first is None else first.base_offset,
        first_segment_last_offset=None if first is None else first.last_offset,
        first_segment_bytes=None if first is None else first.size,
        first_segment_largest_timestamp_ms=None if first is None else first.largest_timestamp_ms,
        live_sha256=live_digest((s.key, s.size, s.etag) for s in state.segments),
        record_count=state.record_count,
        largest_timestamp_min_ms=min(timestamps) if timestamps else None,
        largest_timestamp_max_ms=max(timestamps) if timestamps else None,
        last_stable_offset=state.last_stable_offset,
        open_transactions=len(state.loaded_open_transactions),
        run_id=state.run_id,
        active_base_offset=None if first is None else state.segments[-1].base_offset,
        tail_sha256=None if first is None else live_digest([_tail(state.segments[-1])]),
    )


def _tail(newest: SegmentEntry) -> tuple[str, int, str]:
    """The newest segment's ``.log`` object: the only live one named after its base offset's name (segment
    names sort by offset, and the others' base offsets are lower)."""
    return newest.key, newest.size, newest.etag
