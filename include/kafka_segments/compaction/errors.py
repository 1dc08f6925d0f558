"""The compaction errors: each names the partition or segment and what went wrong there."""

from __future__ import annotations

from kafka_segments.errors import LocatedError


class CompactionError(LocatedError):
    """A cleaning round cannot be computed as asked (``location``: the partition or segment concerned)."""


class SegmentOrderError(CompactionError):
    """The input segments are not in increasing, non-overlapping offset order."""
