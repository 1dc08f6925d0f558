"""Which producers are still active, for the empty batches a round keeps (``ProducerStateManager``).

Kafka keeps the last batch of every producer it still tracks, even when all its records are cleaned away, so a
retrying producer is still recognised (``Cleaner.cleanInto``: ``isBatchLastRecordOfProducer``). On a lake the
producer state is derived from the log itself (docs/compaction.md, "How it maps onto a lake"), replaying
``ProducerAppendInfo.append`` for every v2 batch with a producer id, in log order:

* a data batch: a new epoch clears the producer's batch metadata (``maybeUpdateProducerEpoch``); the batch
  becomes its last data batch and its maxTimestamp the last timestamp; a transactional batch opens a
  transaction if none is open;
* a control batch with a record (an end marker): the same epoch rule, closes the open transaction, and the
  marker's timestamp becomes the last timestamp; one without records (emptied earlier) changes nothing.

A producer is active while it has an open transaction or ``now - lastTimestamp < producer.id.expiration.ms``
(``isProducerExpired``). A batch is the last of its active producer when its last offset is the producer's
last data offset, or, when it has none (only markers since its epoch), when it is a control batch of the
producer's current epoch."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from kafka_segments.records.batch import MAGIC_VALUE_V2, BatchHeader

NO_DATA_OFFSET = -1


@dataclass(frozen=True, slots=True)
class ProducerState:
    """What the log says about one producer at its end."""

    producer_id: int
    producer_epoch: int
    last_data_offset: int
    """Last offset of its last data batch in its current epoch, or -1 (only markers since)."""
    last_timestamp_ms: int
    in_transaction: bool

    def is_active(self, *, now_ms: int, expiration_ms: int) -> bool:
        return self.in_transaction or now_ms - self.last_timestamp_ms < expiration_ms


def replay_producers(headers: Iterable[BatchHeader]) -> dict[int, ProducerState]:
    """The producer states at the end of a log whose batch headers are ``headers`` (in log order)."""
    states: dict[int, ProducerState] = {}
    for header in headers:
        if header.magic < MAGIC_VALUE_V2 or not header.has_producer_id:
            continue
        if header.is_control and header.records_count == 0:
            continue
        states[header.producer_id] = _advance(states.get(header.producer_id), header)
    return states


def _advance(state: ProducerState | None, header: BatchHeader) -> ProducerState:
    if state is None:
        state = ProducerState(header.producer_id, header.producer_epoch, NO_DATA_OFFSET, -1, False)
    elif state.producer_epoch != header.producer_epoch:
        state = replace(state, producer_epoch=header.producer_epoch, last_data_offset=NO_DATA_OFFSET)
    if header.is_control:
        return replace(state, last_timestamp_ms=header.max_timestamp, in_transaction=False)
    return replace(
        state,
        last_data_offset=header.last_offset,
        last_timestamp_ms=header.max_timestamp,
        in_transaction=state.in_transaction or header.is_transactional,
    )


def active_producers(
    states: Mapping[int, ProducerState], *, now_ms: int, expiration_ms: int
) -> Mapping[int, ProducerState]:
    """The producers not expired at ``now_ms`` (``lastRecordsOfActiveProducers``)."""
    return MappingProxyType(
        {
            pid: state
            for pid, state in states.items()
            if state.is_active(now_ms=now_ms, expiration_ms=expiration_ms)
        }
    )


def is_last_batch_of_active_producer(header: BatchHeader, active: Mapping[int, ProducerState]) -> bool:
    """``isBatchLastRecordOfProducer`` of ``Cleaner.cleanInto``."""
    state = active.get(header.producer_id)
    if state is None:
        return False
    if state.last_data_offset != NO_DATA_OFFSET:
        return header.last_offset == state.last_data_offset
    return header.is_control and header.producer_epoch == state.producer_epoch
