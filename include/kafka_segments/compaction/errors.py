"""The compaction errors: each names the partition or segment and what went wrong there."""

from __future__ import annotations

from kafka_segments.errors import LocatedError


class CompactionError(LocatedError):
    """A cleaning round cannot be computed as asked (``location``: the partition or segment concerned)."""


class OffsetMapFullError(CompactionError):
    """A key-hash part of the offset map holds more distinct keys than its budget allows: build the map in
    more (smaller) parts. Nothing is wrong with the data."""

    def __init__(self, reason: str, *, location: str, max_keys: int) -> None:
        self.max_keys = max_keys
        super().__init__(reason, location=location)


class KeyOutsideMapError(CompactionError):
    """A key was looked up in a partial offset map whose key-hash parts do not cover it."""


class SegmentOrderError(CompactionError):
    """The input segments are not in increasing, non-overlapping offset order."""
