"""Key digests over whole record columns: the offset map's MD5s without a Python call per record.

Kafka's ``SkimpyOffsetMap`` identifies a key by its MD5 (``hashInto``); ``offset_map`` keeps that identity
(``key_digest``: 16 digest bytes). Here the digests of many keys are computed by one numba call
(``key_kernels.md5_spans``) and held as two uint64 columns, ``hi`` and ``lo`` (the digest's bytes 0..7 and
8..15 read big-endian), so that

* building a map part is one pass that keeps, per distinct digest, the last row (later offsets overwrite);
* a round's lookups go through ``fates.DigestTable``, an open-addressing table built once per round from
  the map's entries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction import group_kernels as _g
from kafka_segments.compaction import key_kernels as _k

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
U64 = npt.NDArray[np.uint64]


@dataclass(frozen=True, slots=True, eq=False)
class KeyIdentities:
    """The identity of every record's key in a segment: an id per record (equal key bytes, equal id, ids
    numbered by first appearance; -1 for an unkeyed record) and the MD5 (hi, lo) of every id."""

    key_id: I64
    id_hi: U64
    id_lo: U64


def key_digests(buffer: U8, key_start: I64, key_length: I32) -> tuple[U64, U64]:
    """The MD5 of every key span (lengths must be >= 0), as (hi, lo) columns."""
    count = len(key_start)
    hi = np.empty(count, dtype=np.uint64)
    lo = np.empty(count, dtype=np.uint64)
    if count:
        _k.md5_spans(buffer, key_start, key_length, hi, lo)
    return hi, lo


def distinct_key_digests(buffer: U8, key_start: I64, key_length: I32) -> tuple[U64, U64]:
    """``key_digests``, hashing each distinct key's bytes once (a compacted topic repeats its keys: the
    benchmark's 1,000,000 records hold ~81,000 keys). Keys are grouped by their bytes, not by a hash, so
    the result is exactly ``key_digests``'."""
    if not len(key_start):
        return key_digests(buffer, key_start, key_length)
    ids, firsts = _g.distinct_spans(buffer, key_start, key_length)
    hi, lo = key_digests(buffer, key_start[firsts], key_length[firsts])
    return hi[ids], lo[ids]


def key_identities(buffer: U8, key_start: I64, key_length: I32) -> tuple[I64, U64, U64]:
    """(id of every key, MD5 hi and lo of every id): equal key bytes share an id (``distinct_spans``), each
    id is hashed once. Ids are numbered in order of first appearance."""
    if not len(key_start):
        empty = np.empty(0, dtype=np.uint64)
        return np.empty(0, dtype=np.int64), empty, empty.copy()
    ids, firsts = _g.distinct_spans(buffer, key_start, key_length)
    hi, lo = key_digests(buffer, key_start[firsts], key_length[firsts])
    return ids, hi, lo


def digest_bytes(hi: U64, lo: U64) -> list[bytes]:
    """The 16-byte digests (``offset_map.key_digest`` values) of (hi, lo) columns."""
    pairs = np.empty((len(hi), 2), dtype=">u8")
    pairs[:, 0] = hi
    pairs[:, 1] = lo
    blob = pairs.tobytes()
    return [blob[start : start + 16] for start in range(0, len(blob), 16)]


def digest_columns(digests: Iterable[bytes]) -> tuple[U64, U64]:
    """(hi, lo) columns of 16-byte digests."""
    blob = b"".join(digests)
    pairs = np.frombuffer(blob, dtype=">u8").reshape(-1, 2)
    return pairs[:, 0].astype(np.uint64), pairs[:, 1].astype(np.uint64)


def key_parts(hi: U64, count: int) -> I64:
    """``offset_map.part_of`` of every digest."""
    out = np.empty(len(hi), dtype=np.int64)
    _k.part_of_hi(hi, count, out)
    return out


def last_of_each(hi: U64, lo: U64) -> I64:
    """For each distinct digest (in order of first appearance), the index of its last occurrence."""
    last: I64 = _k.last_rows(hi, lo)
    return last


def last_of_each_id(ids: I64, count: int) -> I64:
    """The index of the last occurrence of each id (ids in ``0 .. count - 1``) present in ``ids``, in
    ascending order (so a later index, a later offset, comes later)."""
    last: I64 = _k.last_of_ids(ids, count)
    return last
