"""Helpers shared by the fixed-size-entry index files (``.index``, ``.timeindex``, ``.txnindex``).

Preallocation (``AbstractIndex``): while a segment is active Kafka sizes ``.index``/``.timeindex`` to
``segment.index.bytes`` rounded down to a multiple of the entry size, and keeps the number of written
entries in memory; the file is trimmed to ``entries * entrySize`` when the segment becomes inactive or is
closed. When Kafka *opens* an existing index it does not search for the last written entry: it sets
``entries = length / entrySize`` (``createMappedBuffer``: "assume it is valid"). It never has to
interpret a preallocated file's unwritten slots, because a cleanly closed index is trimmed and after an
unclean shutdown every segment from the recovery point on (always including the active one) goes through
``LogSegment.recover``, which resets and rebuilds its indexes from the log.

A copy of an active segment's index can still reach us untrimmed. Its unwritten slots are zero (a fresh
preallocated file is sparse/zero-filled), and no written entry is all zeros in an offset index (Kafka never
indexes the batch at position 0), so we count entries up to the last slot holding a non-zero byte and
report the rest as unused slots. (A time-index entry ``(timestamp 0, relative offset 0)`` would be taken
for an unused slot when it is the last one; pass ``trim_unused_slots=False`` for files known to be trimmed,
i.e. those of an inactive segment, as ``check_segment`` does.
An index that was truncated and then reused can keep stale, non-zero entries past the written ones: they
fail validation or the consistency check against the log, and the index should be rebuilt from the log,
which is what Kafka's recovery does.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from kafka_segments.errors import CorruptIndexError

Buffer = bytes | bytearray | memoryview
EntryT = TypeVar("EntryT")
ProblemOf = Callable[[EntryT | None, EntryT], str | None]


def check_entry_size(data: Buffer, entry_size: int, *, path: str, what: str) -> None:
    """``sanityCheck``: the file length must be a multiple of the entry size."""
    size = len(data)
    if size % entry_size:
        raise CorruptIndexError(
            f"{what} is {size} bytes, which is not a multiple of the {entry_size}-byte entry size",
            path=path,
            position=size - size % entry_size,
        )


def used_slots(data: Buffer, entry_size: int, *, trim_unused_slots: bool) -> int:
    """How many slots hold entries: all of them, or up to the last slot with a non-zero byte."""
    slots = len(data) // entry_size
    if not trim_unused_slots:
        return slots
    last_nonzero = len(bytes(data).rstrip(b"\x00"))
    return -(-last_nonzero // entry_size)


def first_problem(entries: Sequence[EntryT], problem_of: ProblemOf[EntryT]) -> tuple[int, str] | None:
    """The number of the first entry that cannot follow the one before it, and why; ``None`` if all can."""
    previous: EntryT | None = None
    for number, entry in enumerate(entries):
        problem = problem_of(previous, entry)
        if problem is not None:
            return number, problem
        previous = entry
    return None
