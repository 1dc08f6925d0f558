"""The per-record rule of ``decisions.decide_record`` over whole columns of records (the round's hot loop).

Same rule, same precedence (``Cleaner.cleanInto``'s filter, then ``Cleaner.shouldRetainRecord``): records of a
discarded batch go; control records stay; records past the map's latest offset stay; unkeyed records go; a
record older than its key's mapped offset goes; the latest record stays if it has a value, or if deletes are
still retained. Only the keys that reach the map lookup are hashed (MD5, as ``SkimpyOffsetMap``); everything
else is numpy arithmetic over the record columns of ``records.fast``.
"""

from __future__ import annotations

import hashlib

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction.decisions import RecordDecision
from kafka_segments.compaction.offset_map import NO_OFFSET, OffsetLookup

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


def mapped_offsets(
    buffer: U8, key_start: I64, key_length: I32, rows: npt.NDArray[np.intp], offset_map: OffsetLookup
) -> I64:
    """The map's offset for the key of each of ``rows`` (-1 when absent)."""
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
) -> I64:
    """``mapped_offsets`` for the rows flagged in ``lookup``, -1 for the others."""
    found = np.full(len(lookup), NO_OFFSET, dtype=np.int64)
    rows = np.flatnonzero(lookup)
    if rows.size:
        found[rows] = mapped_offsets(buffer, key_start, key_length, rows, offset_map)
    return found
