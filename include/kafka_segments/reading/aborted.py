"""Which records a read_committed consumer drops: the data batches of aborted transactions.

A transactional data batch belongs to its producer's transaction that the producer's next end marker
(COMMIT or ABORT) closes, as a consumer matches batches to the fetch response's aborted transactions
(``CompletedFetch.nextFetchedRecord``). A transaction still open past the segment is settled by the
partition's later segments, read only then; one still open at the log end lies at or past the last stable
offset, which read_committed never reaches. Control batches are never returned anyway."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import numpy.typing as npt

from kafka_segments.errors import CorruptRecordError
from kafka_segments.records.attributes import TRANSACTIONAL_FLAG_MASK
from kafka_segments.records.batch import MAGIC_VALUE_V2
from kafka_segments.records.control import ControlKey, ControlRecordError, ControlRecordType
from kafka_segments.records.fast import RecordColumns

Bools = npt.NDArray[np.bool_]


def aborted_rows(
    columns: RecordColumns, *, segment: str, following: Callable[[], Iterable[tuple[RecordColumns, str]]]
) -> Bools:
    """One flag per record of ``columns``: it belongs to an aborted transaction.

    Args:
        following: the partition's later segments as decoded columns with their names, in offset order.

    Raises:
        CorruptRecordError: a control batch whose first record has no valid control key.
    """
    pending: dict[int, list[int]] = {}
    aborted = np.zeros(len(columns.batches), dtype=np.bool_)
    for _, rows, is_abort in _transactions(columns, segment, pending):
        aborted[rows] = is_abort
    if pending:
        for later, name in following():
            for producer_id, _, is_abort in _transactions(later, name, {}, only=pending):
                aborted[pending.pop(producer_id)] = is_abort
            if not pending:
                break
    flags: Bools = aborted[columns.batch_index]
    return flags


def _transactions(
    columns: RecordColumns,
    segment: str,
    pending: dict[int, list[int]],
    *,
    only: dict[int, list[int]] | None = None,
) -> Iterable[tuple[int, list[int], bool]]:
    """Each end marker of ``columns`` in order: (producer id, the batches it closes, whether it aborts).

    Data batches left open are in ``pending`` afterwards. With ``only``, markers of other producers and
    data batches are skipped (settling transactions of an earlier segment)."""
    table = columns.batches
    transactional = (table.magic >= MAGIC_VALUE_V2) & ((table.attributes & TRANSACTIONAL_FLAG_MASK) != 0)
    first_rows = np.searchsorted(columns.batch_index, np.arange(len(table)))
    is_control = table.is_control
    for batch in np.flatnonzero(transactional).tolist():
        producer_id = int(table.producer_id[batch])
        if only is not None and producer_id not in only:
            continue
        if not is_control[batch]:
            if only is None:
                pending.setdefault(producer_id, []).append(batch)
            continue
        marker = _marker(columns, batch, int(first_rows[batch]), segment)
        if marker is None:
            continue
        yield producer_id, pending.pop(producer_id, []), marker is ControlRecordType.ABORT
        if only is not None:
            only = {pid: rows for pid, rows in only.items() if pid != producer_id}
            if not only:
                return


def _marker(columns: RecordColumns, batch: int, row: int, segment: str) -> ControlRecordType | None:
    """ABORT or COMMIT for an end-transaction marker batch; ``None`` for an empty or other control batch."""
    if row >= len(columns) or int(columns.batch_index[row]) != batch:
        return None  # a control batch without records (compacted away)
    try:
        kind = ControlKey.parse(columns.key(row)).type
    except ControlRecordError as exc:
        table = columns.batches
        raise CorruptRecordError(
            f"control batch has an invalid control record key: {exc}",
            segment=segment,
            position=int(table.position[batch]),
            offset=int(table.base_offset[batch]),
        ) from exc
    return kind if kind in (ControlRecordType.ABORT, ControlRecordType.COMMIT) else None
