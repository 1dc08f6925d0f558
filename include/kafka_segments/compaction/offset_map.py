"""The offset map of a round: key -> offset of its latest record in the dirty range
(``Cleaner.buildOffsetMap``, ``buildOffsetMapForSegment``, ``SkimpyOffsetMap``; docs/compaction.md, "The
offset map").

A control batch only updates the transaction state (``TransactionState``); a batch of aborted data is skipped;
every other record with a key and an offset ``>= firstDirty`` is put, later offsets overwriting earlier ones.
Keys are their MD5s, so MD5 collisions count as one key, as in Kafka. ``latestOffset`` skips offset gaps
(after each segment the next segment's base offset - 1), so an unbounded map ends the round at
``firstUncleanableOffset``; a bounded one stops where it fills (``map_fill``)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction import batch_kinds
from kafka_segments.compaction.decoded import DecodedSegment, DecodedSegments, decode_segment
from kafka_segments.compaction.map_fill import latest_offset_at, stop_row
from kafka_segments.compaction.source import SourceSegment, segment_slice
from kafka_segments.compaction.txn_state import TransactionState, control_type_from_key
from kafka_segments.config.model import OffsetMapCapacity
from kafka_segments.records.fast import digest_bytes, last_of_each_id
from kafka_segments.segment.txn_index import AbortedTxn

NO_OFFSET = -1


def key_digest(key: bytes) -> bytes:
    """The key's identity in the map: its MD5, as ``SkimpyOffsetMap.hashInto``."""
    return hashlib.md5(key, usedforsecurity=False).digest()


class OffsetLookup(Protocol):
    """What a round needs from its offset map."""

    @property
    def latest_offset(self) -> int: ...

    def get(self, digest: bytes) -> int: ...


@dataclass(frozen=True, slots=True)
class OffsetMap:
    """The offset map of one round."""

    first_dirty_offset: int
    end_offset: int
    """The round's upper bound (segment-aligned first uncleanable offset)."""
    latest_offset: int
    """``SkimpyOffsetMap.latestOffset``: ``end_offset - 1`` for a non-empty dirty range whose keys all fit,
    less where a bounded map filled, -1 for an empty range."""
    entries: Mapping[bytes, int] = field(repr=False)
    """MD5 of the key -> offset of its latest mapped record."""

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def next_dirty_offset(self) -> int:
        """``latestOffset + 1``: the round's end offset, and the new cleaner checkpoint."""
        return self.latest_offset + 1

    def get(self, digest: bytes) -> int:
        """The key's latest offset, or -1 when the key is not in the map (``SkimpyOffsetMap.get``)."""
        return self.entries.get(digest, NO_OFFSET)


def build_offset_map(
    segments: Sequence[SourceSegment],
    *,
    first_dirty: int,
    end_offset: int,
    aborted: Iterable[AbortedTxn] = (),
    decoded: DecodedSegments | None = None,
    capacity: OffsetMapCapacity | None = None,
) -> OffsetMap:
    """The map of the keys over the dirty range ``[first_dirty, end_offset)``.

    Args:
        segments: the partition's segments (at least those of the dirty range), in offset order.
        aborted: the aborted transactions overlapping the range (``source.aborted_in_range``).
        decoded: where to decode the segments (a round shares one with its cleaning pass); ``None``: here.
        capacity: the bounded map of ``log.cleaner.dedupe.buffer.size`` (``TopicConfig.offset_map_capacity``);
            ``None``: unbounded.

    Raises:
        CorruptRecordError: a damaged batch in the dirty range.
        OffsetMapFullError: a new key finds every slot of a bounded map taken (load factor above 1).
    """
    dirty = segment_slice(segments, first_dirty, end_offset)
    entries: dict[bytes, int] = {}
    state = TransactionState(aborted)
    for index, segment in enumerate(dirty):
        found = decoded.get(segment) if decoded is not None else decode_segment(segment)
        rows = _rows_to_map(found, first_dirty, state, segment=segment.name)
        stop = None if capacity is None else stop_row(found, rows, entries, capacity, segment=segment.name)
        if stop is not None:
            before = segment.base_offset - 1 if index else NO_OFFSET
            latest = latest_offset_at(found, rows, stop, first_dirty=first_dirty, before=before)
            _put_last(found, rows[:stop], entries)
            return OffsetMap(first_dirty, end_offset, latest, MappingProxyType(entries))
        _put_last(found, rows, entries)
    latest = end_offset - 1 if dirty else NO_OFFSET
    return OffsetMap(first_dirty, end_offset, latest, MappingProxyType(entries))


def _rows_to_map(
    decoded: DecodedSegment, first_dirty: int, state: TransactionState, *, segment: str
) -> npt.NDArray[np.int64]:
    """The rows of the records one segment puts, in offset order, over its record columns
    (``records.fast``): the non-plain batch headers feed the transaction state in log order and the
    records to map are selected over columns."""
    columns = decoded.columns
    table = columns.batches
    first_row = np.searchsorted(columns.batch_index, np.arange(len(table)))
    # a plain batch (v2 data, neither transactional nor control) is never aborted data: mapped from
    # first_dirty; only the others go through the transaction state, in log order
    plain = batch_kinds.plain_batches(table)
    mapped = plain & (table.last_offset >= first_dirty)
    others = np.flatnonzero(~plain)
    for index, header in zip(others.tolist(), table.headers_at(others), strict=True):
        if header.is_control:
            control = None
            if header.records_count:
                key = decoded.control_key(int(first_row[index]))
                control = control_type_from_key(key, header, segment=segment)
            state.on_control_batch(header, control)
        elif not state.on_data_batch(header) and header.last_offset >= first_dirty:
            mapped[index] = True
    rows: npt.NDArray[np.int64] = np.flatnonzero(
        mapped[columns.batch_index] & (columns.key_length >= 0) & (columns.offset >= first_dirty)
    )
    return rows


def _put_last(decoded: DecodedSegment, rows: npt.NDArray[np.int64], entries: dict[bytes, int]) -> None:
    """Put ``rows``: among their key digests (MD5s computed in one numba call, ``decoded``) each distinct
    digest takes the offset of its last occurrence (later offsets overwrite, as ``put``)."""
    ids = decoded.key_id[rows]
    offsets = decoded.columns.offset[rows]
    # each key's last occurrence, in offset order: two keys with one MD5 then end at the later offset
    last = last_of_each_id(ids, decoded.key_ids)
    picked = ids[last]
    digests = digest_bytes(decoded.id_hi[picked], decoded.id_lo[picked])
    entries.update(zip(digests, offsets[last].tolist(), strict=True))
