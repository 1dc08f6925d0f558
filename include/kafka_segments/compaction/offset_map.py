"""The offset map of a round: key -> offset of its latest record in the dirty range.

Kafka's rules (``storage/.../log/Cleaner.java`` ``buildOffsetMap``, ``buildOffsetMapForSegment``;
``SkimpyOffsetMap.java``):

* The dirty segments are ``log.logSegments(firstDirty, firstUncleanableOffset)``; the aborted transactions
  overlapping that range feed a ``CleanedTransactionMetadata`` (here ``TransactionState``).
* For each batch in order: a control batch only updates the transaction state and is never mapped; a data
  batch of an aborted transaction is skipped entirely; otherwise every record **with a key** and an offset
  ``>= firstDirty`` is put, later offsets overwriting earlier ones. Unkeyed records are never mapped.
* Keys are identified by the MD5 of their bytes (16 bytes); MD5 collisions count as the same key, exactly as
  in Kafka.
* ``latestOffset``: after each batch its last offset, after each segment the next segment's base offset - 1
  (the round's upper bound - 1 for the last dirty segment), so offset gaps are skipped. With no dedupe-buffer
  limit (docs/compaction.md) the map never fills, so ``latestOffset = firstUncleanableOffset - 1`` whenever
  the dirty range holds a segment, and the round's end offset / new checkpoint is ``firstUncleanableOffset``.

**Building in parts.** Whether a record survives depends only on the map entry of *its own* key and on the
map's latest offset, never on other keys. So the 128-bit key-hash space can be cut into ``count`` disjoint
parts (``KeyHashRange``: the top 64 bits of the MD5, scaled to ``count`` buckets); each part's map is built by
its own pass over the dirty range, mapping only the keys that hash into it, and holds at most a budget of
keys (``OffsetMapFullError`` otherwise: use more parts). Parts of one round merge by union
(``merge_offset_maps``), or stay separate (``PartitionedOffsetMap``) so a caller can decide the records of one
part at a time — e.g. a distributed job that routes each record to its key's part. Either way the result is
Kafka's with a dedupe buffer large enough for every key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

import numpy as np

from kafka_segments.compaction import batch_kinds
from kafka_segments.compaction.decoded import DecodedSegment, DecodedSegments, decode_segment
from kafka_segments.compaction.digests import digest_bytes, key_parts, last_of_each_id
from kafka_segments.compaction.errors import CompactionError, KeyOutsideMapError, OffsetMapFullError
from kafka_segments.compaction.source import SourceSegment, segment_slice
from kafka_segments.compaction.txn_state import TransactionState, control_type_from_key
from kafka_segments.segment.txn_index import AbortedTxn

NO_OFFSET = -1
_HASH_BITS = 64


def key_digest(key: bytes) -> bytes:
    """The key's identity in the map: its MD5, as ``SkimpyOffsetMap.hashInto``."""
    return hashlib.md5(key, usedforsecurity=False).digest()


@dataclass(frozen=True, slots=True)
class KeyHashRange:
    """Part ``index`` of ``count`` equal parts of the key-hash space."""

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"key-hash part {self.index} of {self.count} does not exist")

    def contains(self, digest: bytes) -> bool:
        return part_of(digest, self.count) == self.index

    @staticmethod
    def split(count: int) -> tuple[KeyHashRange, ...]:
        """All ``count`` parts of the key-hash space."""
        return tuple(KeyHashRange(index, count) for index in range(count))


def part_of(digest: bytes, count: int) -> int:
    """The part (of ``count``) a key digest falls in: its top 64 bits scaled to ``count`` buckets."""
    return (int.from_bytes(digest[:8], "big") * count) >> _HASH_BITS


class OffsetLookup(Protocol):
    """What a round needs from its offset map."""

    @property
    def latest_offset(self) -> int: ...

    def get(self, digest: bytes) -> int: ...


@dataclass(frozen=True, slots=True)
class OffsetMap:
    """The offset map of one round (or of one key-hash part of it)."""

    first_dirty_offset: int
    end_offset: int
    """The round's upper bound (segment-aligned first uncleanable offset)."""
    latest_offset: int
    """``SkimpyOffsetMap.latestOffset``: ``end_offset - 1`` for a non-empty dirty range, else -1."""
    entries: Mapping[bytes, int] = field(repr=False)
    """MD5 of the key -> offset of its latest mapped record."""
    part_count: int = 1
    parts: frozenset[int] = frozenset({0})
    """Which key-hash parts (of ``part_count``) this map covers."""

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def is_complete(self) -> bool:
        return len(self.parts) == self.part_count

    @property
    def next_dirty_offset(self) -> int:
        """``latestOffset + 1``: the round's end offset, and the new cleaner checkpoint."""
        return self.latest_offset + 1

    def covers(self, digest: bytes) -> bool:
        return self.part_count == 1 or part_of(digest, self.part_count) in self.parts

    def get(self, digest: bytes) -> int:
        """The key's latest offset, or -1 when the key is not in the map (``SkimpyOffsetMap.get``).

        Raises:
            KeyOutsideMapError: the key's hash part is not covered by this (partial) map.
        """
        found = self.entries.get(digest)
        if found is not None:
            return found
        if not self.covers(digest):
            raise KeyOutsideMapError(
                f"key hash part {part_of(digest, self.part_count)} of {self.part_count} is not in this map",
                location=f"offset map [{self.first_dirty_offset}, {self.end_offset})",
            )
        return NO_OFFSET


@dataclass(frozen=True, slots=True)
class PartitionedOffsetMap:
    """The parts of one round's map kept apart; a lookup goes to the key's part."""

    parts: tuple[OffsetMap, ...]

    @property
    def latest_offset(self) -> int:
        return self.parts[0].latest_offset

    def get(self, digest: bytes) -> int:
        return self.parts[part_of(digest, len(self.parts))].get(digest)


def build_offset_map(
    segments: Sequence[SourceSegment],
    *,
    first_dirty: int,
    end_offset: int,
    aborted: Iterable[AbortedTxn] = (),
    key_range: KeyHashRange = KeyHashRange(),
    max_keys: int | None = None,
    decoded: DecodedSegments | None = None,
) -> OffsetMap:
    """The map of the keys in ``key_range`` over the dirty range ``[first_dirty, end_offset)``.

    Args:
        segments: the partition's segments (at least those of the dirty range), in offset order.
        aborted: the aborted transactions overlapping the range (``source.aborted_in_range``).
        max_keys: the most distinct keys this part may hold (``None``: unbounded).
        decoded: where to decode the segments (a round shares one with its cleaning pass); ``None``: here.

    Raises:
        OffsetMapFullError: more than ``max_keys`` distinct keys fall in ``key_range``.
        CorruptRecordError: a damaged batch in the dirty range.
    """
    dirty = segment_slice(segments, first_dirty, end_offset)
    entries: dict[bytes, int] = {}
    state = TransactionState(aborted)
    for segment in dirty:
        found = decoded.get(segment) if decoded is not None else decode_segment(segment)
        _map_segment(segment, found, first_dirty, state, entries, key_range, max_keys)
    latest = end_offset - 1 if dirty else NO_OFFSET
    return OffsetMap(
        first_dirty,
        end_offset,
        latest,
        MappingProxyType(entries),
        key_range.count,
        frozenset({key_range.index}),
    )


def _map_segment(
    segment: SourceSegment,
    decoded: DecodedSegment,
    first_dirty: int,
    state: TransactionState,
    entries: dict[bytes, int],
    key_range: KeyHashRange,
    max_keys: int | None,
) -> None:
    """Map one segment over its record columns (``records.fast``): the non-plain batch headers feed the
    transaction state in log order, the records to map are selected over columns, and among their key
    digests (MD5s computed in one numba call, ``decoded``) each distinct digest takes the offset of its last
    occurrence (later offsets overwrite, as ``put``). The map holds distinct keys only, so it overflows
    ``max_keys`` in this segment exactly when the per-record ``put`` would have."""
    columns = decoded.columns
    table = columns.batches
    first_row = np.searchsorted(columns.batch_index, np.arange(len(table)))
    # a plain batch (v2 data, neither transactional nor control) is never aborted data: mapped from
    # first_dirty; only the others go through the transaction state, in log order
    plain = batch_kinds.plain_batches(table)
    mapped = plain & (table.last_offset >= first_dirty)
    for index in np.flatnonzero(~plain).tolist():
        header = table.header(index)
        if header.is_control:
            control = None
            if header.records_count:
                key = columns.key(int(first_row[index]))
                control = control_type_from_key(key, header, segment=segment.name)
            state.on_control_batch(header, control)
        elif not state.on_data_batch(header) and header.last_offset >= first_dirty:
            mapped[index] = True
    rows = np.flatnonzero(
        mapped[columns.batch_index] & (columns.key_length >= 0) & (columns.offset >= first_dirty)
    )
    ids = decoded.key_id[rows]
    offsets = columns.offset[rows]
    if key_range.count > 1:
        mine = key_parts(decoded.id_hi, key_range.count)[ids] == key_range.index
        ids, offsets = ids[mine], offsets[mine]
    # each key's last occurrence, in offset order: two keys with one MD5 then end at the later offset
    last = last_of_each_id(ids, decoded.key_ids)
    picked = ids[last]
    digests = digest_bytes(decoded.id_hi[picked], decoded.id_lo[picked])
    entries.update(zip(digests, offsets[last].tolist(), strict=True))
    if max_keys is not None and len(entries) > max_keys:
        raise _full(first_dirty, segment.name, key_range, max_keys)


def build_offset_map_in_parts(
    segments: Sequence[SourceSegment],
    *,
    first_dirty: int,
    end_offset: int,
    aborted: Sequence[AbortedTxn] = (),
    max_keys_per_part: int,
) -> PartitionedOffsetMap:
    """The whole map as parts of at most ``max_keys_per_part`` keys each: starts with one part and doubles
    the number of parts whenever one overflows (each part is one pass over the dirty range)."""
    if max_keys_per_part < 1:
        raise ValueError(f"max_keys_per_part must be >= 1, not {max_keys_per_part}")
    count = 1
    while True:
        try:
            parts = tuple(
                build_offset_map(
                    segments,
                    first_dirty=first_dirty,
                    end_offset=end_offset,
                    aborted=aborted,
                    key_range=key_range,
                    max_keys=max_keys_per_part,
                )
                for key_range in KeyHashRange.split(count)
            )
        except OffsetMapFullError:
            count *= 2
            continue
        return PartitionedOffsetMap(parts)


def merge_offset_maps(maps: Iterable[OffsetMap]) -> OffsetMap:
    """The union of disjoint key-hash parts of the same round.

    Raises:
        CompactionError: the maps belong to different rounds, cut the hash space differently, or overlap.
    """
    pieces = list(maps)
    if not pieces:
        raise CompactionError("nothing to merge", location="offset map")
    first = pieces[0]
    entries: dict[bytes, int] = {}
    parts: set[int] = set()
    for piece in pieces:
        shape = (piece.first_dirty_offset, piece.end_offset, piece.latest_offset, piece.part_count)
        if shape != (first.first_dirty_offset, first.end_offset, first.latest_offset, first.part_count):
            raise CompactionError(f"map {shape} is not of the same round as {first!r}", location="offset map")
        if parts & piece.parts:
            raise CompactionError(
                f"key-hash parts {sorted(parts & piece.parts)} overlap", location="offset map"
            )
        parts |= piece.parts
        entries.update(piece.entries)
    return OffsetMap(
        first.first_dirty_offset,
        first.end_offset,
        first.latest_offset,
        MappingProxyType(entries),
        first.part_count,
        frozenset(parts),
    )


def _full(first_dirty: int, segment: str, key_range: KeyHashRange, max_keys: int) -> OffsetMapFullError:
    return OffsetMapFullError(
        f"more than {max_keys} distinct keys in key-hash part {key_range.index} of {key_range.count} "
        f"(mapping from offset {first_dirty})",
        location=segment,
        max_keys=max_keys,
    )
