"""A large segment split at batch boundaries into byte spans, one task each (docs/reading.md, "Large
segments and byte ranges").

The boundaries come from the segment's ``.index`` object, as a broker's fetch finds a position
(``OffsetIndex.lookup``): an entry ``(offset, position)`` says a batch starts at ``position`` and
``offset`` is in it or after it. The index is never trusted over the ``.log``: it is used only when the
manifest pins its sha256, recorded when its entries were checked against the ``.log``'s batch headers
(``lake.index_pin``; a position inside a batch cannot be told from a boundary by the bytes after it). The
task that reads a span still checks its bytes (``span_read``) and falls back to the whole segment when they
do not hold. A segment without a pinned ``.index`` is one task, as before.

What a span claims about its offsets follows from the index's entries: the batches starting at or after an
entry's position hold offsets above the previous entry's offset, and those before it offsets below its own.
The planner keeps only the spans whose claimed offsets meet the range read; ``span_read`` checks the claim
at every end whose neighbour is not read by the same plan."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from kafka_segments.lake.index_pin import pinned_index_entries
from kafka_segments.reading.options import DEFAULT_MAX_BYTES_PER_PARTITION
from kafka_segments.segment.offset_index import OffsetPosition
from kafka_segments.state import SegmentEntry
from kafka_segments.storage.base import ObjectStore

__all__ = ["DEFAULT_MAX_BYTES_PER_PARTITION", "ByteSpan", "index_entries", "link_spans", "segment_spans"]


@dataclass(frozen=True, slots=True)
class ByteSpan:
    """Bytes ``[start, end)`` of a segment's ``.log``: the task reads the batches that start there.

    ``first_offset`` / ``end_offset`` are what the ``.index`` claims about their offsets (``[first, end)``);
    ``read_before`` / ``read_after``: the span ending at ``start`` / starting at ``end`` is read by a task of
    the same plan (whose walk over the batches proves the shared boundary)."""

    start: int
    end: int
    first_offset: int
    end_offset: int
    read_before: bool = False
    read_after: bool = False

    def meets(self, start: int, end: int) -> bool:
        """The span may hold an offset of ``[start, end)``."""
        return self.first_offset < end and start < self.end_offset


def segment_spans(store: ObjectStore, segment: SegmentEntry, *, max_bytes: int) -> tuple[ByteSpan, ...]:
    """The spans of ``segment`` (about ``max_bytes`` each), or ``()`` when it is not split: not larger than
    ``max_bytes``, empty, or without a ``.index`` the manifest pins (``lake.index_pin``).

    Raises:
        ObjectStoreError: the store could not be read (a missing ``.index`` is not an error).
    """
    if segment.is_empty or segment.size <= max_bytes:
        return ()
    entries = index_entries(store, segment)
    chosen = _split_entries(entries, size=segment.size, max_bytes=max_bytes)
    if not chosen:
        return ()
    starts = [0, *(entries[i].position for i in chosen)]
    ends = [*starts[1:], segment.size]
    firsts = [segment.base_offset, *(entries[i - 1].offset + 1 if i else segment.base_offset for i in chosen)]
    lasts = [*(entries[i].offset for i in chosen), segment.next_offset]
    return tuple(ByteSpan(*fields) for fields in zip(starts, ends, firsts, lasts, strict=True))


def index_entries(store: ObjectStore, segment: SegmentEntry) -> list[OffsetPosition]:
    """The entries of the segment's pinned ``.index`` inside its bytes and offsets (none without an index
    the manifest pins: ``lake.index_pin``)."""
    return [
        entry
        for entry in pinned_index_entries(store, segment)
        if 0 < entry.position < segment.size and entry.offset < segment.next_offset
    ]


def _split_entries(entries: list[OffsetPosition], *, size: int, max_bytes: int) -> list[int]:
    """Indexes of the entries to split at: each the last within ``max_bytes`` of the previous split (or the
    next one, when none is), until the rest of the segment fits."""
    positions = [entry.position for entry in entries]
    chosen: list[int] = []
    last = 0
    while size - last > max_bytes:
        within = bisect.bisect_right(positions, last + max_bytes) - 1
        after = bisect.bisect_right(positions, last)
        pick = within if within >= after else after
        if pick >= len(positions):
            break
        chosen.append(pick)
        last = positions[pick]
    return chosen


def link_spans(spans: list[ByteSpan | None], keys: list[str]) -> list[ByteSpan | None]:
    """``spans`` (of tasks in order, with their segments' keys) with ``read_before`` / ``read_after`` set
    from their neighbours: the adjacent span of the same segment is in the list."""
    linked: list[ByteSpan | None] = []
    for i, span in enumerate(spans):
        if span is None:
            linked.append(None)
            continue
        before = i > 0 and keys[i - 1] == keys[i] and _adjacent(spans[i - 1], span)
        after = i + 1 < len(spans) and keys[i + 1] == keys[i] and _adjacent(span, spans[i + 1])
        linked.append(_with_links(span, before=before, after=after))
    return linked


def _adjacent(first: ByteSpan | None, second: ByteSpan | None) -> bool:
    return first is not None and second is not None and first.end == second.start


def _with_links(span: ByteSpan, *, before: bool, after: bool) -> ByteSpan:
    return ByteSpan(span.start, span.end, span.first_offset, span.end_offset, before, after)
