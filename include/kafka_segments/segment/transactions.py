"""Which transactions a segment aborts: the entries of its ``.txnindex``, replaying Kafka's producer-state
bookkeeping (``LogSegment.updateProducerState`` -> ``ProducerAppendInfo.append``).

A transactional data batch of a producer without an open transaction opens one; a COMMIT or ABORT marker
closes it, and only a non-empty aborted one becomes an ``AbortedTxn`` (``appendEndTxnMarker``). A control
batch without records (compacted away) is ignored. A non-transactional batch inside an open transaction,
which Kafka rejects, leaves it open: the caller validates.

**lastStableOffset of an aborted transaction** is computed *before* ``completeTxn``
(``ProducerStateManager.lastStableOffset``): the smallest first offset among the *other* producers' open
transactions (possibly below the aborted one's own), else marker + 1. We compute it batch by batch, as
``LogSegment.recover`` and a leader do (a follower may record a higher one; both stop the search correctly).
Transactions span segments: pass the open ones as ``ongoing`` and chain ``TxnScan.ongoing``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kafka_segments.errors import CorruptRecordError
from kafka_segments.records.batch import MAGIC_VALUE_V2, BatchHeader
from kafka_segments.records.control import ControlKey, ControlRecordError, ControlRecordType
from kafka_segments.records.log import Entry
from kafka_segments.segment.txn_index import AbortedTxn


@dataclass(frozen=True, slots=True)
class TxnScan:
    """The aborted transactions whose markers were seen, and the transactions still open at the end."""

    aborted: tuple[AbortedTxn, ...]
    ongoing: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    """Producer id -> first offset of its open transaction."""


class AbortedTxnTracker:
    """Feeds on a partition's entries in offset order and reports each aborted, non-empty transaction."""

    __slots__ = ("_ongoing",)

    def __init__(self, *, ongoing: Mapping[int, int] | None = None) -> None:
        self._ongoing: dict[int, int] = dict(ongoing or {})

    @property
    def ongoing(self) -> Mapping[int, int]:
        """A snapshot of the open transactions: producer id -> first offset."""
        return MappingProxyType(dict(self._ongoing))

    def observe(self, entry: Entry) -> AbortedTxn | None:
        """Account for one entry; return the ``AbortedTxn`` when it is the ABORT marker of a non-empty
        transaction.

        Raises:
            CorruptRecordError: a control batch whose first record has no valid control key.
        """
        return self.observe_batch(entry.header, lambda: entry)

    def observe_batch(self, header: BatchHeader, entry: Callable[[], Entry]) -> AbortedTxn | None:
        """``observe`` of the entry with ``header``, asked of ``entry()`` only for a control batch's key.

        Raises:
            CorruptRecordError: as ``observe``.
        """
        if header.magic < MAGIC_VALUE_V2 or not header.has_producer_id:
            return None
        producer_id = header.producer_id
        if not header.is_control:
            if header.is_transactional and producer_id not in self._ongoing:
                self._ongoing[producer_id] = header.base_offset
            return None
        marker = end_marker_type(entry())
        if marker is None:
            return None
        first_offset = self._ongoing.get(producer_id)
        if first_offset is None:
            return None  # an empty transaction: nothing to complete, nothing to index
        marker_offset = header.base_offset
        last_stable_offset = self._last_stable_offset(producer_id, marker_offset)
        del self._ongoing[producer_id]
        if marker is ControlRecordType.ABORT:
            return AbortedTxn(producer_id, first_offset, marker_offset, last_stable_offset)
        return None

    def _last_stable_offset(self, producer_id: int, marker_offset: int) -> int:
        others = [first for pid, first in self._ongoing.items() if pid != producer_id]
        return min(others) if others else marker_offset + 1


def collect_aborted_transactions(
    entries: Iterable[Entry], *, ongoing: Mapping[int, int] | None = None
) -> TxnScan:
    """The ``.txnindex`` entries of a segment holding ``entries`` (e.g. from ``iter_batches``).

    Args:
        ongoing: transactions open when the segment starts (producer id -> first offset), e.g. the
            ``ongoing`` of the previous segment's scan.
    """
    tracker = AbortedTxnTracker(ongoing=ongoing)
    aborted = [txn for entry in entries if (txn := tracker.observe(entry)) is not None]
    return TxnScan(tuple(aborted), tracker.ongoing)


def end_marker_type(entry: Entry) -> ControlRecordType | None:
    """COMMIT or ABORT for an end-transaction marker batch; ``None`` for any other entry (data, an empty
    control batch, another control type).

    Raises:
        CorruptRecordError: a control batch whose first record has no valid control key.
    """
    if not entry.header.is_control:
        return None
    records = entry.records
    if not records:
        return None
    try:
        control_type = ControlKey.parse(records[0].key).type
    except ControlRecordError as exc:
        header = entry.header
        raise CorruptRecordError(
            f"control batch has an invalid control record key: {exc}",
            segment=entry.segment,
            position=header.position,
            offset=header.base_offset,
        ) from exc
    if control_type in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        return control_type
    return None
