"""The time index ``.timeindex`` (``TimeIndex``, ``AbstractIndex``): 12-byte entries (timestamp, relative
offset); ``(T, O)`` means any record with a timestamp above T comes after O. ``maybeAppend`` appends only
above the last timestamp; an inactive segment's last entry is its largest timestamp
(``onBecomeInactiveSegment``), which time retention reads, and one slot is reserved for it (``isFull``)."""

from __future__ import annotations

import bisect
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial

from kafka_segments.errors import CorruptIndexError, SegmentWriteError
from kafka_segments.segment._slots import Buffer, check_entry_size, first_problem, used_slots

ENTRY = struct.Struct(
    ">"
    "q"  # Timestamp
    "i"  # RelativeOffset
)
ENTRY_SIZE = ENTRY.size  # 12
RELATIVE_OFFSET_OFFSET = struct.calcsize(">q")
NO_TIMESTAMP = -1
INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class TimestampOffset:
    """A time-index entry with its absolute offset."""

    timestamp: int
    offset: int


@dataclass(frozen=True, slots=True)
class TimeIndex:
    """A parsed (or built) time index of the segment starting at ``base_offset``."""

    base_offset: int
    entries: tuple[TimestampOffset, ...] = ()
    unused_slots: int = 0

    @property
    def last_entry(self) -> TimestampOffset:
        """Kafka's ``lastEntry``: the last entry, or ``(NO_TIMESTAMP, base_offset)`` when empty."""
        return self.entries[-1] if self.entries else TimestampOffset(NO_TIMESTAMP, self.base_offset)

    def lookup(self, target_timestamp: int) -> TimestampOffset:
        """The entry with the largest timestamp <= ``target_timestamp``, else
        ``(NO_TIMESTAMP, base_offset)``."""
        slot = bisect.bisect_right(self.entries, target_timestamp, key=_timestamp_of)
        if slot == 0:
            return TimestampOffset(NO_TIMESTAMP, self.base_offset)
        return self.entries[slot - 1]

    def to_bytes(self) -> bytes:
        """The trimmed file: ``len(entries) * 12`` bytes."""
        buf = bytearray(ENTRY_SIZE * len(self.entries))
        for slot, entry in enumerate(self.entries):
            ENTRY.pack_into(buf, slot * ENTRY_SIZE, entry.timestamp, entry.offset - self.base_offset)
        return bytes(buf)


def max_entries(segment_index_bytes: int) -> int:
    """How many entries a time index of ``segment.index.bytes`` holds (``maxIndexSize / 12``)."""
    return segment_index_bytes // ENTRY_SIZE


def is_full(entry_count: int, segment_index_bytes: int) -> bool:
    """``TimeIndex.isFull``: one slot stays reserved for the entry added when the segment is rolled."""
    return entry_count >= max_entries(segment_index_bytes) - 1


def parse_time_index(
    data: Buffer, *, base_offset: int, path: str = "<memory>", trim_unused_slots: bool = True
) -> TimeIndex:
    """Parse and validate a ``.timeindex`` file.

    Raises:
        CorruptIndexError: a size that is not a multiple of 12, a negative relative offset, a timestamp not
            above the previous one (or not above -1), or an offset below the previous one.
    """
    check_entry_size(data, ENTRY_SIZE, path=path, what="time index")
    used = used_slots(data, ENTRY_SIZE, trim_unused_slots=trim_unused_slots)
    entries = tuple(
        TimestampOffset(timestamp, base_offset + relative)
        for timestamp, relative in ENTRY.iter_unpack(memoryview(data)[: used * ENTRY_SIZE])
    )
    found = first_problem(entries, partial(entry_problem, base_offset=base_offset))
    if found is not None:
        slot, problem = found
        raise CorruptIndexError(f"time index entry {slot}: {problem}", path=path, position=slot * ENTRY_SIZE)
    return TimeIndex(base_offset, entries, len(data) // ENTRY_SIZE - used)


def build_time_index(entries: Iterable[TimestampOffset], *, base_offset: int) -> TimeIndex:
    """A time index from absolute entries, validated as Kafka's ``maybeAppend`` would append them.

    Raises:
        SegmentWriteError: an entry Kafka would refuse or skip (names the entry number).
    """
    built = tuple(entries)
    found = first_problem(built, partial(entry_problem, base_offset=base_offset))
    if found is not None:
        number, problem = found
        raise SegmentWriteError(f"time index entry {number}: {problem}")
    return TimeIndex(base_offset, built)


def entry_problem(
    previous: TimestampOffset | None, entry: TimestampOffset, *, base_offset: int
) -> str | None:
    """Why ``entry`` cannot follow ``previous`` in a time index, or ``None``."""
    relative = entry.offset - base_offset
    if relative < 0:
        return f"offset {entry.offset} is below the segment base offset {base_offset}"
    if relative > INT32_MAX:
        return f"offset {entry.offset} overflows the int32 relative offset of base offset {base_offset}"
    last_timestamp = previous.timestamp if previous is not None else NO_TIMESTAMP
    if entry.timestamp <= last_timestamp:
        return f"timestamp {entry.timestamp} is not above the previous timestamp {last_timestamp}"
    if previous is not None and entry.offset < previous.offset:
        return f"offset {entry.offset} is below the previous entry's offset {previous.offset}"
    return None


def _timestamp_of(entry: TimestampOffset) -> int:
    return entry.timestamp
