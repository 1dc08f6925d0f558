"""Helpers shared by the fixed-size-entry index files (``.index``, ``.timeindex``, ``.txnindex``).

Kafka preallocates an active segment's ``.index``/``.timeindex`` (``AbstractIndex``) and trims them on close;
opening one it assumes every slot is written. A copy of an active segment's index can still reach us
untrimmed: its unwritten slots are zero, and no written offset-index entry is all zeros, so entries are
counted up to the last non-zero slot (a last time-index entry ``(0, 0)`` would be taken for unused: pass
``trim_unused_slots=False`` for inactive segments). Stale entries of a reused index fail the checks; rebuild
such an index from the log, as Kafka's recovery does."""

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
