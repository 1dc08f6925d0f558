"""Checking a segment's indexes against its ``.log`` (the log is the source of truth).

The checks ask whether Kafka's readers would be served correctly, not whether the index is byte-identical
to a rebuild (several indexes are valid for one log: ``index.interval.bytes`` is a topic setting). An index
entry must not make a lookup skip a record; a time entry must carry the largest timestamp so far; the
``.txnindex`` must list the aborts ``collect_aborted_transactions`` finds."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate

from kafka_segments.errors import CorruptIndexError, CorruptRecordError
from kafka_segments.records.batch import BatchHeader
from kafka_segments.records.control import ControlRecordType
from kafka_segments.records.log import Buffer, Entry, iter_batches
from kafka_segments.segment.offset_index import OffsetIndex, parse_offset_index
from kafka_segments.segment.time_index import NO_TIMESTAMP, TimeIndex, parse_time_index
from kafka_segments.segment.transactions import collect_aborted_transactions, end_marker_type
from kafka_segments.segment.txn_index import AbortedTxn, parse_txn_index


@dataclass(frozen=True, slots=True)
class IndexProblem:
    """One disagreement between an index and the log."""

    file: str
    """``"log"``, ``"offset index"``, ``"time index"`` or ``"transaction index"``."""
    entry: int | None
    """The index entry number, ``None`` for the file as a whole."""
    reason: str

    def __str__(self) -> str:
        where = self.file if self.entry is None else f"{self.file} entry {self.entry}"
        return f"{where}: {self.reason}"


@dataclass(frozen=True, slots=True)
class SegmentCheck:
    """The outcome of ``check_segment``: no problems means the indexes can be used as they are."""

    problems: tuple[IndexProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def check_offset_index(index: OffsetIndex, batches: Sequence[BatchHeader]) -> tuple[IndexProblem, ...]:
    """Problems of ``index`` against the headers of the segment's batches (in log order)."""
    slots = {header.position: slot for slot, header in enumerate(batches)}
    log_end = batches[-1].position + batches[-1].size_in_bytes if batches else 0
    last_offset = batches[-1].last_offset if batches else None
    problems = []
    for number, entry in enumerate(index.entries):
        slot = slots.get(entry.position)
        if slot is None:
            where = "past the end of the log" if entry.position >= log_end else "not the start of a batch"
            problems.append(_problem("offset index", number, f"position {entry.position} is {where}"))
            continue
        if slot > 0 and batches[slot - 1].last_offset >= entry.offset:
            reason = (
                f"offset {entry.offset} is not above the last offset {batches[slot - 1].last_offset} of the "
                f"batch before position {entry.position}"
            )
            problems.append(_problem("offset index", number, reason))
        elif last_offset is not None and entry.offset > last_offset:
            reason = f"offset {entry.offset} is past the log's last offset {last_offset}"
            problems.append(_problem("offset index", number, reason))
    return tuple(problems)


def check_time_index(
    index: TimeIndex, batches: Sequence[BatchHeader], *, inactive: bool = True
) -> tuple[IndexProblem, ...]:
    """Problems of ``index`` against the headers of the segment's batches (in log order).

    Args:
        inactive: the segment is closed, so its last entry must carry the largest timestamp.
    """
    base_offsets = [header.base_offset for header in batches]
    running_max = list(accumulate((header.max_timestamp for header in batches), max, initial=NO_TIMESTAMP))
    last_offset = batches[-1].last_offset if batches else None
    problems = []
    for number, entry in enumerate(index.entries):
        count = bisect.bisect_right(base_offsets, entry.offset)
        if last_offset is None or count == 0 or entry.offset > last_offset:
            problems.append(_problem("time index", number, f"offset {entry.offset} is not in the log"))
        elif running_max[count] != entry.timestamp:
            reason = (
                f"timestamp {entry.timestamp} is not the largest batch timestamp {running_max[count]} "
                f"up to offset {entry.offset}"
            )
            problems.append(_problem("time index", number, reason))
    largest = running_max[-1]
    if inactive and largest > index.last_entry.timestamp:
        reason = (
            f"the last entry's timestamp {index.last_entry.timestamp} is below the segment's largest "
            f"timestamp {largest}: the closing entry is missing"
        )
        problems.append(_problem("time index", None, reason))
    return tuple(problems)


def check_txn_index(
    entries: Sequence[AbortedTxn],
    log_entries: Sequence[Entry],
    *,
    ongoing: Mapping[int, int] | None = None,
    base_offset: int | None = None,
) -> tuple[IndexProblem, ...]:
    """Problems of a ``.txnindex`` against the segment's entries.

    Args:
        ongoing: transactions open at the segment start (producer id -> first offset); ``None`` when
            unknown, which limits the check to what this segment shows.
        base_offset: the segment's base offset (defaults to the first batch's).

    Raises:
        CorruptRecordError: a control batch of the log has an invalid marker key.
    """
    expected = collect_aborted_transactions(log_entries, ongoing=ongoing).aborted
    if ongoing is not None:
        return _compare_exactly(entries, expected)
    aborts = {
        entry.header.base_offset: entry.header.producer_id
        for entry in log_entries
        if end_marker_type(entry) is ControlRecordType.ABORT
    }
    if base_offset is None and log_entries:
        base_offset = log_entries[0].header.base_offset
    by_marker = {txn.last_offset: txn for txn in expected}
    problems = []
    for number, txn in enumerate(entries):
        reason = _unverified_entry_problem(txn, aborts, by_marker.get(txn.last_offset), base_offset)
        if reason is not None:
            problems.append(_problem("transaction index", number, reason))
    indexed = {txn.last_offset for txn in entries}
    problems.extend(
        _problem("transaction index", None, f"missing entry for the aborted transaction {txn}")
        for txn in expected
        if txn.last_offset not in indexed
    )
    return tuple(problems)


def check_segment(
    log: Buffer,
    *,
    base_offset: int,
    offset_index: Buffer | None = None,
    time_index: Buffer | None = None,
    txn_index: Buffer | None = None,
    ongoing: Mapping[int, int] | None = None,
    inactive: bool = True,
    segment: str = "<memory>",
) -> SegmentCheck:
    """Check whichever index files are given against ``log``.

    Unparseable index files and log damage are reported as problems, never raised; after damage the
    valid prefix of the log is what the indexes are checked against.

    Args:
        inactive: the segment is closed: its indexes are trimmed (every slot is an entry) and the time
            index must end with the largest timestamp. An active segment's indexes may be preallocated.
        segment: the files' common path prefix for messages, e.g. ``"t-0/00000000000000000100"``.
    """
    log_entries, damage = _read_log(log, f"{segment}.log")
    problems: list[IndexProblem] = []
    if damage is not None:
        problems.append(_problem("log", None, str(damage)))
    headers = [entry.header for entry in log_entries]
    if offset_index is not None:
        problems.extend(
            _guarded(
                "offset index",
                lambda: check_offset_index(
                    parse_offset_index(
                        offset_index,
                        base_offset=base_offset,
                        path=f"{segment}.index",
                        trim_unused_slots=not inactive,
                    ),
                    headers,
                ),
            )
        )
    if time_index is not None:
        problems.extend(
            _guarded(
                "time index",
                lambda: check_time_index(
                    parse_time_index(
                        time_index,
                        base_offset=base_offset,
                        path=f"{segment}.timeindex",
                        trim_unused_slots=not inactive,
                    ),
                    headers,
                    inactive=inactive,
                ),
            )
        )
    if txn_index is not None:
        problems.extend(
            _guarded(
                "transaction index",
                lambda: check_txn_index(
                    parse_txn_index(txn_index, base_offset=base_offset, path=f"{segment}.txnindex"),
                    log_entries,
                    ongoing=ongoing,
                    base_offset=base_offset,
                ),
            )
        )
    return SegmentCheck(tuple(problems))


def _guarded(file: str, check: Callable[[], tuple[IndexProblem, ...]]) -> tuple[IndexProblem, ...]:
    """Run one file's check; a file that cannot be parsed (or a bad marker key) is itself the problem."""
    try:
        return check()
    except (CorruptIndexError, CorruptRecordError) as exc:
        return (_problem(file, None, str(exc)),)


def _read_log(log: Buffer, segment: str) -> tuple[list[Entry], CorruptRecordError | None]:
    entries: list[Entry] = []
    try:
        entries.extend(iter_batches(log, segment=segment, verify_crc=True))
    except CorruptRecordError as exc:
        return entries, exc
    return entries, None


def _compare_exactly(
    entries: Sequence[AbortedTxn], expected: Sequence[AbortedTxn]
) -> tuple[IndexProblem, ...]:
    wanted = set(expected)
    problems = [
        _problem("transaction index", number, f"{txn} is not an abort the log shows")
        for number, txn in enumerate(entries)
        if txn not in wanted
    ]
    present = set(entries)
    problems.extend(
        _problem("transaction index", None, f"missing entry {txn}") for txn in expected if txn not in present
    )
    return tuple(problems)


def _unverified_entry_problem(
    txn: AbortedTxn, aborts: Mapping[int, int], seen: AbortedTxn | None, base_offset: int | None
) -> str | None:
    if aborts.get(txn.last_offset) != txn.producer_id:
        return (
            f"offset {txn.last_offset} is not an ABORT marker of producer {txn.producer_id} in this segment"
        )
    if seen is not None and txn.first_offset > seen.first_offset:
        return (
            f"first offset {txn.first_offset} is after the transaction's first batch at {seen.first_offset}"
        )
    if seen is None and base_offset is not None and txn.first_offset >= base_offset:
        producer = txn.producer_id
        return f"no transactional batch of producer {producer} at or after first offset {txn.first_offset}"
    return None


def _problem(file: str, entry: int | None, reason: str) -> IndexProblem:
    return IndexProblem(file, entry, reason)
