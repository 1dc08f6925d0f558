"""Where a bounded offset map fills: the end of a round with ``log.cleaner.dedupe.buffer.size`` set.

Kafka's rule (``storage/.../log/Cleaner.java`` ``buildOffsetMap``, ``buildOffsetMapForSegment``;
``SkimpyOffsetMap.java``; ``LogCleaner.java`` ``CleanerThread``), with the map's size from
``config.model.OffsetMapCapacity``:

* The dirty segments are mapped in order, each from its first batch; the map is filled **record by record**,
  not segment by segment: before every record it would put (a keyed record of a non-aborted data batch at or
  past the first dirty offset), the map's size (its distinct key digests so far) is compared with
  ``maxDesiredMapSize``. Below it, the record is put; at it, mapping stops right there — even in the middle
  of a batch, even when that record's key is already in the map. Records already put, including those of
  the batch being read, stay in the map.
* ``latestOffset`` is whatever was set last: each put sets it to the record's offset, the end of each batch
  (whose last offset is at or past the first dirty offset) to the batch's last offset, the end of each
  fully mapped segment to the next segment's base offset - 1. The round's end offset — and the new cleaner
  checkpoint — is ``latestOffset + 1``: past the last record put, or the last batch completed.
* Records past ``latestOffset`` that are read by the cleaning pass are kept (``decisions``: "past latest
  offset"), so a full map keeps more records and the next round starts where this one stopped.
* ``SkimpyOffsetMap.put`` refuses a new key when every slot is taken ("Attempted to add a new entry to a full
  offset map"); that can only happen with a load factor above 1. Kafka's cleaner thread then marks the
  partition uncleanable (``LogCleaningException``); here the round fails with ``OffsetMapFullError``, which
  leaves the partition uncleaned for the run.

Counting distinct digests costs a Python step per distinct key of each segment, which only a bounded map
pays: with no dedupe buffer ``offset_map`` never calls this module.
"""

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
    is full — mapping stops before it — or ``None`` when every row fits.

    ``entries`` is the map so far (the earlier segments).

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
