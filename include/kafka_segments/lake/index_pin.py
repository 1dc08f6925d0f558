"""A segment's ``.index`` pinned by the manifest, so a reader may split the segment into byte spans at its
entries (docs/reading.md, "Large segments and byte ranges").

An offset-index entry ``(O, P)`` says a batch starts at byte ``P`` and offset ``O`` is in it or after it:
Kafka appends (the append's largest offset, the position of its first batch) every
``index.interval.bytes`` (``LogSegment.append``). A span read starts at such a position without reading the
bytes before it, so it must be a batch boundary; the bytes after it cannot prove that (a record value may
hold whole Kafka batches, with valid CRC-32Cs, that chain to the span's end). So the index is never trusted
over the ``.log``. When a segment enters the lake (staged by a run, or adopted) its ``.index`` is checked
against the ``.log``'s batch headers: every entry's position is where a batch starts, the batches before it
hold offsets below the entry's and those from it on offsets above the previous entry's (what the spans cut
at it claim). Only an index whose every entry holds gets its sha256 recorded in the segment's manifest
entry (``SegmentEntry.index_sha256``). A reader splits at the entries only when the bytes it gets have that
sha256; otherwise (no pin, gone, replaced, a manifest written before the field) the segment is one task."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kafka_segments.errors import CorruptIndexError, ForeignObjectError, ObjectNotFoundError
from kafka_segments.lake.layout import index_keys
from kafka_segments.lake.scan import sha256_hex
from kafka_segments.segment.offset_index import ENTRY_SIZE, OffsetPosition, parse_offset_index
from kafka_segments.state import SegmentEntry
from kafka_segments.storage.base import ObjectStore

if TYPE_CHECKING:
    from kafka_segments.records.fast import HeaderTable

Buffer = bytes | bytearray | memoryview

__all__ = ["bounded_object", "checked_index_sha256", "pinned_index_entries", "stored_index_sha256"]


def checked_index_sha256(data: Buffer, table: HeaderTable, *, base_offset: int) -> str | None:
    """The sha256 of ``data`` (a ``.index``) when it parses, has entries, and every entry holds for the
    batches of ``table`` (the segment's headers); else ``None``."""
    try:
        index = parse_offset_index(data, base_offset=base_offset)
    except CorruptIndexError:
        return None
    if not index.entries or not _entries_hold(index.entries, table):
        return None
    return sha256_hex(data)


def stored_index_sha256(
    store: ObjectStore, log_key: str, table: HeaderTable, *, base_offset: int
) -> str | None:
    """``checked_index_sha256`` of the ``.index`` object beside ``log_key`` (``None`` when there is none, it
    is not a plain object, or it has more entries than its segment has batches: a broker's preallocated
    active index is not read past that bound).

    Raises:
        ObjectStoreError: the store could not be read.
    """
    data = bounded_object(store, index_keys(log_key)[0], bound=ENTRY_SIZE * len(table))
    return None if data is None else checked_index_sha256(data, table, base_offset=base_offset)


def bounded_object(store: ObjectStore, key: str, *, bound: int) -> bytes | None:
    """The object ``key`` when it has at most ``bound`` bytes (only ``bound + 1`` are read); ``None`` when
    larger, missing or not a plain object.

    Raises:
        ObjectStoreError: the store could not be read.
    """
    try:
        data = store.get_range(key, start=0, end=bound + 1)
    except (ObjectNotFoundError, ForeignObjectError):
        return None
    return data if len(data) <= bound else None


def _entries_hold(entries: tuple[OffsetPosition, ...], table: HeaderTable) -> bool:
    """Every entry ``(O, P)`` starts a batch at ``P``, the batch before ``P`` ends below ``O`` and the batch
    at ``P`` starts above the previous entry's offset (offsets grow along the segment)."""
    if len(table) == 0:
        return False
    bases = table.base_offset
    lasts = table.last_offset
    if bool(np.any(bases[1:] <= lasts[:-1])) or bool(np.any(lasts < bases)):
        return False  # offsets that do not grow: no span can claim a range of them
    positions = np.fromiter((entry.position for entry in entries), dtype=np.int64)
    offsets = np.fromiter((entry.offset for entry in entries), dtype=np.int64)
    batch = np.searchsorted(table.position, positions)
    if bool(np.any(batch >= len(table))) or bool(np.any(table.position[batch] != positions)):
        return False  # a position where no batch starts
    before = batch > 0
    if bool(np.any(lasts[batch[before] - 1] >= offsets[before])):
        return False
    return bool(np.all(bases[batch[1:]] > offsets[:-1]))


def pinned_index_entries(store: ObjectStore, segment: SegmentEntry) -> tuple[OffsetPosition, ...]:
    """The entries of the segment's ``.index`` when the manifest pinned it and the object still has those
    bytes, else none (no pin, gone, replaced: read no further than the pinned index could be long).

    Raises:
        ObjectStoreError: the store could not be read (a missing ``.index`` is not an error).
    """
    pin = segment.index_sha256
    if pin is None:
        return ()
    key = index_keys(segment.key)[0]
    data = bounded_object(store, key, bound=ENTRY_SIZE * segment.batch_count)
    if data is None or sha256_hex(data) != pin:
        return ()
    try:
        return parse_offset_index(data, base_offset=segment.base_offset, path=key).entries
    except CorruptIndexError:  # bytes it was checked with parse: only a colliding sha256 gets here
        return ()
