"""The offset index ``.index`` (``OffsetIndex``, ``AbstractIndex``): 8-byte entries (relative offset,
position), strictly increasing. ``lookup(target)`` returns the largest entry at or below ``target``, or
``(baseOffset, 0)``. For preallocated (untrimmed) files see ``_slots.py``."""

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
    "i"  # RelativeOffset
    "i"  # Position
)
ENTRY_SIZE = ENTRY.size  # 8
POSITION_OFFSET = struct.calcsize(">i")
INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class OffsetPosition:
    """An offset-index entry with its absolute offset: ``offset`` is at or after ``position`` in the log."""

    offset: int
    position: int


@dataclass(frozen=True, slots=True)
class OffsetIndex:
    """A parsed (or built) offset index of the segment starting at ``base_offset``.

    ``unused_slots`` counts trailing unwritten slots of a preallocated file (0 for a trimmed one)."""

    base_offset: int
    entries: tuple[OffsetPosition, ...] = ()
    unused_slots: int = 0

    @property
    def last_offset(self) -> int:
        """Kafka's ``OffsetIndex.lastOffset``: the last entry's offset, or the base offset when empty."""
        return self.entries[-1].offset if self.entries else self.base_offset

    def lookup(self, target_offset: int) -> OffsetPosition:
        """The largest entry with offset <= ``target_offset``, else ``(base_offset, 0)``."""
        slot = bisect.bisect_right(self.entries, target_offset, key=_offset_of)
        if slot == 0:
            return OffsetPosition(self.base_offset, 0)
        return self.entries[slot - 1]

    def to_bytes(self) -> bytes:
        """The trimmed file: ``len(entries) * 8`` bytes."""
        buf = bytearray(ENTRY_SIZE * len(self.entries))
        for slot, entry in enumerate(self.entries):
            ENTRY.pack_into(buf, slot * ENTRY_SIZE, entry.offset - self.base_offset, entry.position)
        return bytes(buf)


def max_entries(segment_index_bytes: int) -> int:
    """How many entries an offset index of ``segment.index.bytes`` holds (``maxIndexSize / 8``)."""
    return segment_index_bytes // ENTRY_SIZE


def parse_offset_index(
    data: Buffer, *, base_offset: int, path: str = "<memory>", trim_unused_slots: bool = True
) -> OffsetIndex:
    """Parse and validate an ``.index`` file.

    Args:
        base_offset: the segment's base offset (from the file name).
        path: names the file in errors.
        trim_unused_slots: treat trailing all-zero slots as unwritten preallocated space.

    Raises:
        CorruptIndexError: a size that is not a multiple of 8, a negative relative offset or position, or
            entries not strictly increasing (names the byte position of the entry).
    """
    check_entry_size(data, ENTRY_SIZE, path=path, what="offset index")
    used = used_slots(data, ENTRY_SIZE, trim_unused_slots=trim_unused_slots)
    entries = tuple(
        OffsetPosition(base_offset + relative, position)
        for relative, position in ENTRY.iter_unpack(memoryview(data)[: used * ENTRY_SIZE])
    )
    found = first_problem(entries, partial(entry_problem, base_offset=base_offset))
    if found is not None:
        slot, problem = found
        raise CorruptIndexError(
            f"offset index entry {slot}: {problem}", path=path, position=slot * ENTRY_SIZE
        )
    return OffsetIndex(base_offset, entries, len(data) // ENTRY_SIZE - used)


def build_offset_index(entries: Iterable[OffsetPosition], *, base_offset: int) -> OffsetIndex:
    """An offset index from absolute entries, validated as Kafka's ``append`` would.

    Raises:
        SegmentWriteError: an entry Kafka would refuse (names the entry number).
    """
    built = tuple(entries)
    found = first_problem(built, partial(entry_problem, base_offset=base_offset))
    if found is not None:
        number, problem = found
        raise SegmentWriteError(f"offset index entry {number}: {problem}")
    return OffsetIndex(base_offset, built)


def entry_problem(previous: OffsetPosition | None, entry: OffsetPosition, *, base_offset: int) -> str | None:
    """Why ``entry`` cannot follow ``previous`` in an offset index, or ``None``."""
    relative = entry.offset - base_offset
    if relative < 0:
        return f"offset {entry.offset} is below the segment base offset {base_offset}"
    if relative > INT32_MAX:
        return f"offset {entry.offset} overflows the int32 relative offset of base offset {base_offset}"
    if not 0 <= entry.position <= INT32_MAX:
        return f"position {entry.position} is outside [0, {INT32_MAX}]"
    if previous is not None and entry.offset <= previous.offset:
        return f"offset {entry.offset} is not above the previous entry's offset {previous.offset}"
    if previous is not None and entry.position <= previous.position:
        return f"position {entry.position} is not above the previous entry's position {previous.position}"
    return None


def _offset_of(entry: OffsetPosition) -> int:
    return entry.offset
