"""Where a bounded offset map fills: the end of a round with ``log.cleaner.dedupe.buffer.size`` set
(``Cleaner.buildOffsetMap``, ``buildOffsetMapForSegment``, ``SkimpyOffsetMap``; docs/compaction.md, "The
offset map"), the map's size from ``config.model.OffsetMapCapacity``.

The map fills record by record: before each record it would put, the number of distinct digests so far is
compared with ``maxDesiredMapSize``, and at it mapping stops right there (mid-batch, even at a known key).
``latestOffset`` is what was set last (a put, a completed batch, a fully mapped segment); the round ends at
``latestOffset + 1``. ``SkimpyOffsetMap.put`` refuses a new key when every slot is taken (a load factor above
1): Kafka marks the partition uncleanable, here the round fails with ``OffsetMapFullError``.

Counting distinct digests costs a Python step per distinct key of each segment, which only a bounded map pays:
with no dedupe buffer ``offset_map`` never calls this module."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction.decoded_segment import DecodedSegment
from kafka_segments.compaction.errors import CompactionError
from kafka_segments.config.model import OffsetMapCapacity
from kafka_segments.records.fast import digest_bytes

I64 = npt.NDArray[np.int64]


class OffsetMapFullError(CompactionError):
    """A round tried to put a new key into an offset map whose slots are all taken
    (``SkimpyOffsetMap.put``; only possible with ``log.cleaner.io.buffer.load.factor`` above 1)."""


def stop_row(
    decoded: DecodedSegment,
    rows: I64,
    entries: Mapping[bytes, int],
    capacity: OffsetMapCapacity,
    *,
    segment: str,
) -> int | None:
    """The index in ``rows`` (the segment's records to map, in offset order) of the record at which the map
    is full — mapping stops before it — or ``None`` when every row fits; ``entries``: the map so far.

    Raises:
        OffsetMapFullError: a new key before that point finds every slot taken.
    """
    if not len(rows):
        return None
    new = _new_keys(decoded, rows, entries)
    size_before = len(entries) + np.cumsum(new) - new
    full_at = int(np.searchsorted(size_before, capacity.max_entries, side="left"))
    overflow = np.flatnonzero(new[:full_at] & (size_before[:full_at] >= capacity.slots))
    if len(overflow):
        offset = int(decoded.columns.offset[rows[int(overflow[0])]])
        raise OffsetMapFullError(
            f"the offset map is full ({capacity.slots} slots) and the record at offset {offset} has a new "
            "key: log.cleaner.io.buffer.load.factor above 1 lets a round put more keys than the map has "
            "slots (SkimpyOffsetMap.put refuses it; Kafka marks the partition uncleanable)",
            location=segment,
        )
    return full_at if full_at < len(rows) else None


def latest_offset_at(decoded: DecodedSegment, rows: I64, stop: int, *, first_dirty: int, before: int) -> int:
    """``latestOffset`` when mapping stops at ``rows[stop]``: the last record put in that record's batch,
    else the last offset of the segment's last batch before it that reaches ``first_dirty``, else
    ``before`` (what the earlier segments left)."""
    columns = decoded.columns
    batch = int(columns.batch_index[rows[stop]])
    if stop > 0 and int(columns.batch_index[rows[stop - 1]]) == batch:
        return int(columns.offset[rows[stop - 1]])
    lasts = columns.batches.last_offset[:batch]
    completed = np.flatnonzero(lasts >= first_dirty)
    return int(lasts[completed[-1]]) if len(completed) else before


def _new_keys(decoded: DecodedSegment, rows: I64, entries: Mapping[bytes, int]) -> npt.NDArray[np.bool_]:
    """For each row: whether it puts a digest the map does not hold yet (its first occurrence, and not in
    ``entries``). Equal key bytes share an id; distinct keys with one MD5 are one key, as in Kafka."""
    ids = decoded.key_id[rows]
    unique, first = np.unique(ids, return_index=True)
    order = np.argsort(first, kind="stable")
    digests = digest_bytes(decoded.id_hi[unique[order]], decoded.id_lo[unique[order]])
    new = np.zeros(len(rows), dtype=np.bool_)
    seen: set[bytes] = set()
    for row, digest in zip(first[order].tolist(), digests, strict=True):
        if digest not in entries and digest not in seen:
            seen.add(digest)
            new[row] = True
    return new
