"""The transaction index ``.txnindex`` (``TransactionIndex``, ``AbortedTxn``): one 34-byte entry per aborted,
non-empty transaction whose ABORT marker is in the segment, in increasing LastOffset order; created with its
first entry. Stricter than Kafka's reader: the whole int16 version must be 0 and a trailing partial entry is
reported."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial

from kafka_segments.errors import CorruptIndexError, SegmentWriteError
from kafka_segments.segment._slots import Buffer, check_entry_size, first_problem

ENTRY = struct.Struct(
    ">"
    "h"  # Version
    "q"  # ProducerId
    "q"  # FirstOffset
    "q"  # LastOffset
    "q"  # LastStableOffset
)
ENTRY_SIZE = ENTRY.size  # 34
PRODUCER_ID_OFFSET = struct.calcsize(">h")
FIRST_OFFSET_OFFSET = struct.calcsize(">hq")
LAST_OFFSET_OFFSET = struct.calcsize(">hqq")
LAST_STABLE_OFFSET_OFFSET = struct.calcsize(">hqqq")
CURRENT_VERSION = 0


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """An aborted transaction: producer, offsets of its first record and of its ABORT marker, and the LSO."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def to_bytes(self) -> bytes:
        return ENTRY.pack(
            CURRENT_VERSION, self.producer_id, self.first_offset, self.last_offset, self.last_stable_offset
        )


@dataclass(frozen=True, slots=True)
class TxnIndexSearchResult:
    """``TxnIndexSearchResult``: the overlapping aborted transactions, and whether later segments can be
    skipped (an entry's LSO reached the upper bound)."""

    aborted: tuple[AbortedTxn, ...]
    is_complete: bool


def parse_txn_index(
    data: Buffer, *, base_offset: int | None = None, path: str = "<memory>"
) -> tuple[AbortedTxn, ...]:
    """Parse and validate a ``.txnindex`` file.

    Args:
        base_offset: the segment's base offset; when given, every LastOffset must be at or above it.

    Raises:
        CorruptIndexError: a size that is not a multiple of 34, a version other than 0, FirstOffset above
            LastOffset, LastOffset not increasing, or below ``base_offset``.
    """
    check_entry_size(data, ENTRY_SIZE, path=path, what="transaction index")
    entries: list[AbortedTxn] = []
    for slot, (version, *fields) in enumerate(ENTRY.iter_unpack(data)):
        position = slot * ENTRY_SIZE
        if version != CURRENT_VERSION:
            raise CorruptIndexError(
                f"transaction index entry {slot}: unexpected version {version} (expected {CURRENT_VERSION})",
                path=path,
                position=position,
            )
        txn = AbortedTxn(*fields)
        problem = entry_problem(entries[-1] if entries else None, txn, base_offset=base_offset)
        if problem is not None:
            raise CorruptIndexError(
                f"transaction index entry {slot}: {problem}", path=path, position=position
            )
        entries.append(txn)
    return tuple(entries)


def build_txn_index(entries: Iterable[AbortedTxn], *, base_offset: int | None = None) -> bytes:
    """The ``.txnindex`` bytes for ``entries`` (empty bytes: Kafka would not create the file).

    Raises:
        SegmentWriteError: entries Kafka's ``append`` would refuse (names the entry number).
    """
    built = tuple(entries)
    found = first_problem(built, partial(entry_problem, base_offset=base_offset))
    if found is not None:
        number, problem = found
        raise SegmentWriteError(f"transaction index entry {number}: {problem}")
    return b"".join(txn.to_bytes() for txn in built)


def entry_problem(previous: AbortedTxn | None, txn: AbortedTxn, *, base_offset: int | None) -> str | None:
    """Why ``txn`` cannot follow ``previous`` in a transaction index, or ``None``."""
    if txn.first_offset > txn.last_offset:
        return f"first offset {txn.first_offset} is above the marker offset {txn.last_offset}"
    if base_offset is not None and txn.last_offset < base_offset:
        return f"marker offset {txn.last_offset} is below the segment base offset {base_offset}"
    if previous is not None and txn.last_offset <= previous.last_offset:
        return f"marker offset {txn.last_offset} is not above the previous entry's {previous.last_offset}"
    return None


def collect_aborted_txns(
    entries: Sequence[AbortedTxn], fetch_offset: int, upper_bound_offset: int
) -> TxnIndexSearchResult:
    """``TransactionIndex.collectAbortedTxns``: entries with ``last_offset >= fetch_offset`` and
    ``first_offset < upper_bound_offset`` (exclusive), stopping at the first entry whose LSO reaches the
    upper bound (then ``is_complete``: no later segment can hold a relevant abort)."""
    found: list[AbortedTxn] = []
    for txn in entries:
        if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound_offset:
            found.append(txn)
        if txn.last_stable_offset >= upper_bound_offset:
            return TxnIndexSearchResult(tuple(found), True)
    return TxnIndexSearchResult(tuple(found), False)


def collect_aborted_txns_from_segments(
    indexes: Iterable[Sequence[AbortedTxn]], fetch_offset: int, upper_bound_offset: int
) -> tuple[AbortedTxn, ...]:
    """``LocalLog.collectAbortedTransactions``: search the transaction indexes of the segment holding
    ``fetch_offset`` and the ones after it (in offset order), until a search is complete."""
    found: list[AbortedTxn] = []
    for entries in indexes:
        result = collect_aborted_txns(entries, fetch_offset, upper_bound_offset)
        found.extend(result.aborted)
        if result.is_complete:
            break
    return tuple(found)
