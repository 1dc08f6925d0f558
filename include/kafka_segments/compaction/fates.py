"""The per-record rule of ``decisions.decide_record`` over whole columns of records (the round's hot loop).

Same rule, same precedence (``Cleaner.cleanInto``'s filter, then ``Cleaner.shouldRetainRecord``): records of a
discarded batch go; control records stay; records past the map's latest offset stay; unkeyed records go; a
record older than its key's mapped offset goes; the latest record stays if it has a value, or if deletes are
still retained. Only the keys that reach the map lookup are hashed (MD5, as ``SkimpyOffsetMap``), all of a
segment's in one numba call (``digests``), and looked up in one call in a ``DigestTable`` built once per round
from the map's entries; everything else is numpy arithmetic over the record columns of ``records.fast``.

A digest absent from the table is absent from the map when the map is a complete ``OffsetMap``; otherwise
(a partitioned or partial map) the map's own ``get`` answers the table's misses, so a partial map still raises
``KeyOutsideMapError`` for the first key of a part it does not cover, exactly as a per-key lookup does. A
caller's own ``OffsetLookup`` (no entries to build a table from) is asked key by key.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction import key_kernels as _k
from kafka_segments.compaction.decisions import RecordDecision
from kafka_segments.compaction.digests import digest_bytes, digest_columns, key_digests
from kafka_segments.compaction.offset_map import NO_OFFSET, OffsetLookup, OffsetMap, PartitionedOffsetMap

FATES = tuple(RecordDecision)
"""Fate code -> decision (codes are positions in this tuple)."""
_CODE = {decision: code for code, decision in enumerate(FATES)}
RETAINED_CODES = np.array([decision.retained for decision in FATES], dtype=np.bool_)
"""Fate code -> whether the record is kept."""

Bools = npt.NDArray[np.bool_]
I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
U8 = npt.NDArray[np.uint8]
Codes = npt.NDArray[np.int8]
U64 = npt.NDArray[np.uint64]


@dataclass(frozen=True, slots=True, eq=False)
class DigestTable:
    """A round's offset map as an open-addressing table: digest -> offset of its latest mapped record."""

    slots: I64
    hi: U64
    lo: U64
    offsets: I64
    complete: bool
    """Every digest absent from the table is absent from the map (no need to ask the map)."""

    @classmethod
    def of(cls, offset_map: OffsetLookup) -> DigestTable | None:
        """The table of a map whose entries are known (``OffsetMap``, ``PartitionedOffsetMap``), else None."""
        if isinstance(offset_map, OffsetMap):
            maps: Sequence[OffsetMap] = (offset_map,)
            complete = offset_map.is_complete
        elif isinstance(offset_map, PartitionedOffsetMap):
            maps, complete = offset_map.parts, False
        else:
            return None
        count = sum(len(part.entries) for part in maps)
        offsets = np.fromiter(  # one C-level pass per part: no generator over the entries
            itertools.chain.from_iterable(part.entries.values() for part in maps), dtype=np.int64, count=count
        )
        hi, lo = digest_columns(itertools.chain.from_iterable(part.entries for part in maps))
        slots, _, _, _ = _k.build_table(hi, lo, offsets)
        return cls(slots, hi, lo, offsets, complete)

    def lookup(self, hi: U64, lo: U64, offset_map: OffsetLookup) -> I64:
        """The map's offset of every digest (-1 when absent), asking ``offset_map`` for the table's misses
        unless the table is complete."""
        found = np.empty(len(hi), dtype=np.int64)
        misses = _k.lookup_table(self.slots, self.hi, self.lo, self.offsets, hi, lo, found)
        if misses and not self.complete:
            rows = np.flatnonzero(found < 0)
            get = offset_map.get
            answers = [get(digest) for digest in digest_bytes(hi[rows], lo[rows])]
            found[rows] = np.array(answers, dtype=np.int64)
        return found


def mapped_offsets(
    buffer: U8,
    key_start: I64,
    key_length: I32,
    rows: npt.NDArray[np.intp],
    offset_map: OffsetLookup,
    *,
    table: DigestTable | None = None,
) -> I64:
    """The map's offset for the key of each of ``rows`` (-1 when absent); ``table``: the map's
    ``DigestTable`` (``None``: the map is asked key by key)."""
    if table is not None:
        hi, lo = key_digests(buffer, key_start[rows], key_length[rows])
        return table.lookup(hi, lo, offset_map)
    view = buffer.data
    md5 = hashlib.md5
    get = offset_map.get
    starts = key_start[rows].tolist()
    ends = (key_start[rows] + key_length[rows]).tolist()
    found = [get(md5(view[s:e], usedforsecurity=False).digest()) for s, e in zip(starts, ends, strict=True)]
    return np.array(found, dtype=np.int64)


def record_fates(
    *,
    offset: I64,
    has_key: Bools,
    has_value: Bools,
    is_control: Bools,
    discard: Bools,
    deletes_retained: Bools,
    found: I64,
    latest_offset: int,
) -> Codes:
    """The fate code of every record (one row per record; per-batch flags already broadcast to rows).

    ``found`` is the map's offset of the record's key where it was looked up, -1 elsewhere.
    """
    conditions = [
        discard,
        is_control,
        offset > latest_offset,
        ~has_key,
        offset < found,
        has_value,
        deletes_retained,
    ]
    choices = [
        _CODE[RecordDecision.DROP_BATCH_DISCARDED],
        _CODE[RecordDecision.KEEP_CONTROL],
        _CODE[RecordDecision.KEEP_BEYOND_MAP],
        _CODE[RecordDecision.DROP_UNKEYED],
        _CODE[RecordDecision.DROP_SUPERSEDED],
        _CODE[RecordDecision.KEEP_LATEST],
        _CODE[RecordDecision.KEEP_TOMBSTONE],
    ]
    codes = np.select(conditions, choices, default=_CODE[RecordDecision.DROP_EXPIRED_TOMBSTONE])
    return codes.astype(np.int8)


def needs_lookup(
    *, offset: I64, has_key: Bools, is_control: Bools, discard: Bools, latest_offset: int
) -> Bools:
    """The records whose fate depends on the map: data records with a key, within the map, not discarded."""
    return ~discard & ~is_control & has_key & (offset <= latest_offset)


def found_offsets(
    buffer: U8,
    key_start: I64,
    key_length: I32,
    lookup: Bools,
    offset_map: OffsetLookup,
    *,
    table: DigestTable | None = None,
) -> I64:
    """``mapped_offsets`` for the rows flagged in ``lookup``, -1 for the others."""
    found = np.full(len(lookup), NO_OFFSET, dtype=np.int64)
    rows = np.flatnonzero(lookup)
    if rows.size:
        found[rows] = mapped_offsets(buffer, key_start, key_length, rows, offset_map, table=table)
    return found
