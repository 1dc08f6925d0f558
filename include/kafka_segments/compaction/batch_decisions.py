"""The batch decisions of one segment, over its header columns: ``decisions.decide_batch`` without a Python
call for every plain batch (``batch_kinds``: v2 data, neither transactional nor control).

For a plain batch ``CleanedTransactionMetadata.onBatchRead`` only starts the aborted transactions up to it
(which the next transactional or control batch does anyway, the pending aborts being ordered by first offset)
and returns false, so ``checkBatchRetention`` reduces to ``RETAIN_EMPTY`` for the last batch of an active
producer or a batch ending at the round's upper bound, else ``DELETE_EMPTY``. Every other batch goes through
``decide`` one by one in log order. ``deletes_retained`` is ``decisions.retain_deletes`` over columns."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction import batch_kinds
from kafka_segments.compaction.batch_kinds import has_delete_horizon
from kafka_segments.compaction.decisions import BatchDecision, BatchReason, BatchRetention
from kafka_segments.compaction.producers import (
    NO_DATA_OFFSET,
    ProducerState,
    is_last_batch_of_active_producer,
)
from kafka_segments.records.batch import MAGIC_VALUE_V2, BatchHeader
from kafka_segments.records.fast import HeaderTable

Bools = npt.NDArray[np.bool_]

LAST_OF_ACTIVE = BatchDecision(
    BatchRetention.RETAIN_EMPTY, BatchReason.LAST_BATCH_OF_ACTIVE_PRODUCER, False, False
)
END_OF_ROUND = BatchDecision(BatchRetention.RETAIN_EMPTY, BatchReason.END_OF_ROUND, False, False)
RECORDS_DECIDE = BatchDecision(BatchRetention.DELETE_EMPTY, BatchReason.RECORDS_DECIDE, False, False)


def batch_decisions(
    table: HeaderTable,
    header: Callable[[int], BatchHeader],
    *,
    active: dict[int, ProducerState],
    upper_bound: int,
    decide: Callable[[int], BatchDecision],
) -> list[BatchDecision]:
    """The decision of every batch: plain batches here, the others by ``decide(index)``, in log order
    (``header(index)``: the batch's header, asked only for the few batches whose producer may be active)."""
    plain = batch_kinds.plain_batches(table)
    last_offset = table.last_offset
    decisions = [RECORDS_DECIDE] * len(table)
    for index in np.flatnonzero(last_offset + 1 == upper_bound).tolist():
        decisions[index] = END_OF_ROUND
    ends = [s.last_data_offset for s in active.values() if s.last_data_offset != NO_DATA_OFFSET]
    if ends:
        candidates = plain & table.has_producer_id & np.isin(last_offset, ends)
        for index in np.flatnonzero(candidates).tolist():
            if is_last_batch_of_active_producer(header(index), active):
                decisions[index] = LAST_OF_ACTIVE
    for index in np.flatnonzero(~plain).tolist():
        decisions[index] = decide(index)
    return decisions


def deletes_retained(
    table: HeaderTable, *, now_ms: int, segment_last_modified_ms: int, legacy_horizon_ms: int
) -> Bools:
    """``decisions.retain_deletes`` of every batch."""
    v2 = table.magic >= MAGIC_VALUE_V2
    current = ~has_delete_horizon(table) | (now_ms < table.base_timestamp)
    legacy = segment_last_modified_ms > legacy_horizon_ms
    retained: Bools = np.where(v2, current, legacy)
    return retained
