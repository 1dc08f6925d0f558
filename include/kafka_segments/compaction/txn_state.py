"""Transaction state while a round scans the log: Kafka's ``CleanedTransactionMetadata``.

The round is given the aborted transactions overlapping its range. An aborted transaction becomes *in
progress* for its producer once the scan reaches a batch whose last offset is at or past its first offset
(``consumeAbortedTxnsUpTo``), before that batch is judged. A transactional data batch of a producer with an
abort in progress is aborted data (``onBatchRead`` returns true), and that abort is marked as seen in this
round; any other transactional data batch marks its producer as having a committed transaction traversed.

A control batch (``onControlBatchRead``) is discardable when it has no records (an earlier round emptied it);
an ABORT ends the producer's abort in progress and is kept, its ``AbortedTxn`` going into the cleaned
segment's transaction index, only when a batch of it was seen in this round; a COMMIT is discardable iff no
batch of the producer's transaction was traversed in this round since its previous marker; any other control
type (LEADER_CHANGE, KRaft records) is never discardable.

The state is one object per round, shared across the segments and output groups of that round, so it is a
small mutable scanner rather than a value."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass

from kafka_segments.errors import CorruptRecordError
from kafka_segments.records.batch import BatchHeader
from kafka_segments.records.control import ControlKey, ControlRecordError, ControlRecordType
from kafka_segments.segment.txn_index import AbortedTxn


@dataclass(frozen=True, slots=True)
class ControlRead:
    """What reading one control batch decided."""

    discardable: bool
    """``onControlBatchRead``'s answer: the marker may go (after its delete horizon)."""
    retained_abort: AbortedTxn | None = None
    """The abort to re-index in the cleaned segment (an ABORT marker kept because its data was seen)."""


def control_type_from_key(key: bytes | None, header: BatchHeader, *, segment: str) -> ControlRecordType:
    """The control record type of a control batch's first record key (``ControlRecordType.parse``).

    Raises:
        CorruptRecordError: the key is not a control record key.
    """
    try:
        return ControlKey.parse(key).type
    except ControlRecordError as exc:
        raise CorruptRecordError(
            f"control batch has an invalid control record key: {exc}",
            segment=segment,
            position=header.position,
            offset=header.base_offset,
        ) from exc


class TransactionState:
    """``CleanedTransactionMetadata`` for one round: feed it every batch in log order."""

    __slots__ = ("_aborted_in_progress", "_committed_in_progress", "_pending", "_seen")

    def __init__(self, aborted: Iterable[AbortedTxn]) -> None:
        self._pending: list[tuple[int, int, AbortedTxn]] = [
            (txn.first_offset, order, txn) for order, txn in enumerate(aborted)
        ]
        heapq.heapify(self._pending)
        self._aborted_in_progress: dict[int, AbortedTxn] = {}
        self._seen: set[int] = set()
        """Producers whose in-progress abort had a batch observed in this round."""
        self._committed_in_progress: set[int] = set()

    def on_data_batch(self, header: BatchHeader) -> bool:
        """``onBatchRead``: True when the batch is aborted transactional data."""
        self._start_aborts_up_to(header.last_offset)
        if not header.is_transactional:
            return False
        producer_id = header.producer_id
        if producer_id in self._aborted_in_progress:
            self._seen.add(producer_id)
            return True
        self._committed_in_progress.add(producer_id)
        return False

    def on_control_batch(self, header: BatchHeader, control_type: ControlRecordType | None) -> ControlRead:
        """``onControlBatchRead``; ``control_type`` is ``None`` for a control batch without records."""
        self._start_aborts_up_to(header.last_offset)
        if control_type is None:
            return ControlRead(discardable=True)
        producer_id = header.producer_id
        if control_type is ControlRecordType.ABORT:
            txn = self._aborted_in_progress.pop(producer_id, None)
            if txn is not None and producer_id in self._seen:
                self._seen.discard(producer_id)
                return ControlRead(discardable=False, retained_abort=txn)
            self._seen.discard(producer_id)
            return ControlRead(discardable=True)
        if control_type is ControlRecordType.COMMIT:
            traversed = producer_id in self._committed_in_progress
            self._committed_in_progress.discard(producer_id)
            return ControlRead(discardable=not traversed)
        return ControlRead(discardable=False)

    def _start_aborts_up_to(self, offset: int) -> None:
        pending = self._pending
        while pending and pending[0][0] <= offset:
            _, _, txn = heapq.heappop(pending)
            self._aborted_in_progress.setdefault(txn.producer_id, txn)
