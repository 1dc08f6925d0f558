"""Key digests over whole record columns: the offset map's MD5s (Kafka's ``SkimpyOffsetMap.hashInto``) without
a Python call per record, held as two uint64 columns ``hi`` and ``lo`` (bytes 0..7 and 8..15, big-endian).
Equal key bytes are grouped first, so each distinct key is hashed once; ``DigestTable`` is a round's map as
an open-addressing table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kafka_segments.records.fast import group_kernels as _g
from kafka_segments.records.fast import key_kernels as _k

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
    """The 16-byte digests (``compaction.offset_map.key_digest`` values) of (hi, lo) columns."""
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


def last_of_each_id(ids: I64, count: int) -> I64:
    """The index of the last occurrence of each id (ids in ``0 .. count - 1``) present in ``ids``, in
    ascending order (so a later index, a later offset, comes later)."""
    last: I64 = _k.last_of_ids(ids, count)
    return last


@dataclass(frozen=True, slots=True, eq=False)
class DigestTable:
    """Digest -> offset (a round's offset map) as an open-addressing table, built once per round."""

    slots: I64
    hi: U64
    lo: U64
    offsets: I64

    @classmethod
    def of(cls, entries: Mapping[bytes, int]) -> DigestTable:
        """The table of ``entries``: 16-byte digest -> offset."""
        offsets = np.fromiter(entries.values(), dtype=np.int64, count=len(entries))
        hi, lo = digest_columns(entries)
        slots, _, _, _ = _k.build_table(hi, lo, offsets)
        return cls(slots, hi, lo, offsets)

    def lookup(self, hi: U64, lo: U64) -> I64:
        """The offset of every digest (hi, lo), -1 when absent."""
        found = np.empty(len(hi), dtype=np.int64)
        _k.lookup_table(self.slots, self.hi, self.lo, self.offsets, hi, lo, found)
        return found


class SpanGroups:
    """``group_kernels.group_spans`` over spans added step after step (the steps of a segment decoded while
    it is read): equal bytes get equal ids across steps, numbered by first appearance."""

    def __init__(self, rows_hint: int) -> None:
        self._slots, self._store_at, self._store, self._firsts, self._counts = _g.new_span_groups(rows_hint)

    @property
    def distinct(self) -> int:
        """How many ids were given so far."""
        return int(self._counts[1])

    @property
    def firsts(self) -> I64:
        """The row of the first span of each id (a view: ``add`` may replace it, callers may write it)."""
        firsts: I64 = self._firsts[: self.distinct]
        return firsts

    def add(self, buffer: U8, starts: I64, lengths: I32, row_base: int) -> I64:
        """The id of each span ``buffer[starts[i] : starts[i] + lengths[i]]`` (lengths >= 0); a new id's
        first row is recorded as ``row_base + i``."""
        ids = np.empty(len(starts), dtype=np.int64)
        self._slots, self._store_at, self._store, self._firsts = _g.group_spans(
            buffer,
            starts,
            lengths,
            row_base,
            ids,
            self._slots,
            self._store_at,
            self._store,
            self._firsts,
            self._counts,
        )
        return ids
