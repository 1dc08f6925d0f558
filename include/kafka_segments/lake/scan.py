"""What a header-only scan of one ``.log`` object tells the manifest (no record is decoded but the markers
of transactions, which Kafka's log loading reads too).

Every batch's CRC is checked (the only way to know an uploaded object is intact). A segment Kafka could not
have written (a batch below its base offset, offsets not increasing) is a ``SegmentLayoutError``."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from kafka_segments.errors import CorruptRecordError
from kafka_segments.records.attributes import (
    COMPRESSION_CODEC_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from kafka_segments.records.control import ControlRecordError, EndTransactionMarker
from kafka_segments.records.log import read_entry
from kafka_segments.state import OpenTransaction, SegmentEntry, SegmentOrigin

if TYPE_CHECKING:
    from kafka_segments.records.fast import HeaderTable

Buffer = bytes | bytearray | memoryview
Bools = npt.NDArray[np.bool_]


class SegmentLayoutError(CorruptRecordError):
    """A segment's batches are valid one by one but not as a Kafka segment (offsets below the segment's base
    offset, or not increasing)."""


@dataclass(frozen=True, slots=True)
class SegmentSummary:
    """The facts a manifest keeps about one ``.log`` (see ``SegmentEntry``)."""

    size: int
    sha256: str
    facts: HeaderFacts
    table: HeaderTable

    @property
    def last_offset(self) -> int | None:
        return self.facts.last_offset

    @property
    def record_count(self) -> int:
        return self.facts.record_count

    @property
    def batch_count(self) -> int:
        return self.facts.batch_count

    @property
    def max_timestamp_ms(self) -> int:
        return self.facts.max_timestamp_ms

    @property
    def first_batch_max_timestamp_ms(self) -> int:
        return self.facts.first_batch_max_timestamp_ms

    def entry(
        self,
        *,
        key: str,
        base_offset: int,
        etag: str,
        last_modified_ms: int,
        origin: SegmentOrigin,
        run_id: str,
        time_index_sha256: str | None = None,
        index_sha256: str | None = None,
    ) -> SegmentEntry:
        return SegmentEntry(
            key=key,
            base_offset=base_offset,
            last_offset=self.last_offset,
            size=self.size,
            sha256=self.sha256,
            etag=etag,
            record_count=self.record_count,
            batch_count=self.batch_count,
            max_timestamp_ms=self.max_timestamp_ms,
            first_batch_max_timestamp_ms=self.first_batch_max_timestamp_ms,
            last_modified_ms=last_modified_ms,
            origin=origin,
            run_id=run_id,
            time_index_sha256=time_index_sha256,
            index_sha256=index_sha256,
        )


def sha256_hex(data: Buffer) -> str:
    return hashlib.sha256(data).hexdigest()


def summarize_segment(
    data: Buffer, *, key: str, base_offset: int, sha256: str | None = None
) -> SegmentSummary:
    """Scan ``data`` (a whole ``.log``) and summarize it; ``sha256``: the bytes' sha256 when the caller
    knows it (a local store's etag of an unchanged file), else they are hashed.

    Raises:
        CorruptRecordError: a damaged or truncated entry (``TruncatedSegmentError``, ``InvalidCrcError``),
            naming ``key`` and the byte position.
        SegmentLayoutError: offsets below ``base_offset`` or not increasing.
    """
    from kafka_segments.records.fast import scan_header_table  # numba: loaded only when segments are scanned

    table = scan_header_table(data, segment=key, verify_crc=True)
    _check_layout(table, key=key, base_offset=base_offset)
    _check_markers(table, data, key=key)
    digest = sha256 or sha256_hex(data)
    return SegmentSummary(size=len(data), sha256=digest, facts=header_facts(table), table=table)


@dataclass(frozen=True, slots=True)
class HeaderFacts:
    """What a manifest entry records of a segment's batch headers (``SegmentEntry``'s fields of the same
    names)."""

    last_offset: int | None
    record_count: int
    batch_count: int
    max_timestamp_ms: int
    first_batch_max_timestamp_ms: int

    @classmethod
    def of_entry(cls, entry: SegmentEntry) -> HeaderFacts:
        """The facts ``entry`` records."""
        return cls(
            last_offset=entry.last_offset,
            record_count=entry.record_count,
            batch_count=entry.batch_count,
            max_timestamp_ms=entry.max_timestamp_ms,
            first_batch_max_timestamp_ms=entry.first_batch_max_timestamp_ms,
        )


def header_facts(table: HeaderTable) -> HeaderFacts:
    """The entry's facts of a segment whose batch headers are ``table``."""
    count = len(table)
    return HeaderFacts(
        last_offset=int(table.last_offset[-1]) if count else None,
        record_count=int(table.records_count.sum(dtype=np.int64)),
        batch_count=count,
        max_timestamp_ms=max(int(table.max_timestamp.max()), -1) if count else -1,
        first_batch_max_timestamp_ms=max(int(table.max_timestamp[0]), -1) if count else -1,
    )


def _check_layout(table: HeaderTable, *, key: str, base_offset: int) -> None:
    if not len(table):
        return
    first = int(table.base_offset[0])
    if first < base_offset:
        raise SegmentLayoutError(
            f"first batch offset {first} is below the segment's base offset {base_offset}",
            segment=key,
            position=int(table.position[0]),
            offset=first,
        )
    backwards = np.flatnonzero(table.base_offset[1:] <= table.last_offset[:-1])
    if backwards.size:
        row = int(backwards[0]) + 1
        raise SegmentLayoutError(
            f"batch offset {int(table.base_offset[row])} does not follow the previous batch's last offset "
            f"{int(table.last_offset[row - 1])}",
            segment=key,
            position=int(table.position[row]),
            offset=int(table.base_offset[row]),
        )


def _check_markers(table: HeaderTable, data: Buffer, *, key: str) -> None:
    """Kafka's log loading reads the first record of every producer's non-empty control batch as an end
    transaction marker (``ProducerAppendInfo.append``, ``EndTransactionMarker.deserialize``): a COMMIT or
    ABORT key, a value of at least 6 bytes, versions >= 0. Any other makes the log unloadable.

    Raises:
        SegmentLayoutError: such a control batch (Kafka cannot load the partition).
        CorruptRecordError: its records cannot be decoded.
    """
    rows = np.flatnonzero(table.is_control & table.has_producer_id & (table.records_count > 0))
    rows = rows[~_written_as_kafka_writes(table, data, rows)]
    for row in rows.tolist():
        position = int(table.position[row])
        records = read_entry(data, position, segment=key).records
        try:
            EndTransactionMarker.parse(records[0])
        except ControlRecordError as exc:
            raise SegmentLayoutError(
                f"the control batch of producer {int(table.producer_id[row])} holds no transaction marker "
                f"Kafka's log loading reads ({exc})",
                segment=key,
                position=position,
                offset=int(table.base_offset[row]),
            ) from None


_MARKER_BATCH_BYTES = 78
"""A marker batch as Kafka writes it (``MemoryRecords.withEndTransactionMarker``): the 61-byte header, then
one uncompressed record of 17 bytes."""
_MARKER_RECORD = np.array(
    # length 16, attributes, timestamp delta 0, offset delta 0, key length 4, key version (high byte), key
    # version (low), type (high), type (low), value length 6, value version (high): -1 = any byte, -2 = a
    # version byte below 0x80 (not negative), -3 = a type byte that is 0 or 1
    [0x20, -1, 0x00, 0x00, 0x08, -2, -1, 0x00, -3, 0x0C, -2, -1, -1, -1, -1, -1, 0x00],
    dtype=np.int16,
)


def _written_as_kafka_writes(table: HeaderTable, data: Buffer, rows: npt.NDArray[np.int64]) -> Bools:
    """Of the control batches ``rows``, those laid out as Kafka writes a COMMIT or ABORT marker (read over
    columns: a log of many transactions has a marker every few batches); the others are decoded."""
    fits: Bools = (table.size_in_bytes[rows] == _MARKER_BATCH_BYTES) & (table.records_count[rows] == 1)
    fits &= (table.attributes[rows] & COMPRESSION_CODEC_MASK) == 0
    if not fits.any():
        return fits
    array = np.frombuffer(data, dtype=np.uint8)
    starts = table.position[rows[fits]] + (_MARKER_BATCH_BYTES - len(_MARKER_RECORD))
    record = array[starts[:, None] + np.arange(len(_MARKER_RECORD))].astype(np.int16)
    exact = _MARKER_RECORD >= 0
    ok = (record[:, exact] == _MARKER_RECORD[exact]).all(axis=1)
    ok &= (record[:, _MARKER_RECORD == -2] < 0x80).all(axis=1)
    ok &= (record[:, _MARKER_RECORD == -3] <= 1).all(axis=1)
    fits[np.flatnonzero(fits)[~ok]] = False
    return fits


def advance_open_transactions(
    open_transactions: Iterable[OpenTransaction], table: HeaderTable, *, key: str = "<memory>"
) -> tuple[OpenTransaction, ...]:
    """The transactions open after the batches of ``table``, given those open before it, as Kafka's log
    loading replays them (``ProducerAppendInfo.append``).

    A transactional data batch of a producer without an open transaction opens one at its base offset, and
    every one moves its ``last_offset`` to the batch's last offset; a control batch of the producer with a
    record (COMMIT or ABORT) closes it, an empty one changes nothing ("the entire transaction has been
    cleaned from the log"). Sorted by first offset. A batch without a producer id (below 0: Kafka's
    ``RecordBatch.hasProducerId`` is false) is no producer's, as Kafka's producer state ignores it.

    Raises:
        SegmentLayoutError: a non-transactional data batch of a producer whose transaction is open (Kafka's
            loading of the log fails: ``InvalidTxnStateException``).
    """
    state = {txn.producer_id: txn for txn in open_transactions}
    is_control = table.is_control
    transactional = (table.attributes & TRANSACTIONAL_FLAG_MASK) != 0
    rows = np.flatnonzero(table.has_producer_id & ~(is_control & (table.records_count <= 0)))
    if not state:  # no transaction can be open before a transactional batch: start at the first one
        rows = rows[np.argmax(transactional[rows]) :] if transactional[rows].any() else rows[:0]
    columns = zip(  # the columns of those batches, each taken once (not a column per batch)
        rows.tolist(),
        table.producer_id[rows].tolist(),
        is_control[rows].tolist(),
        transactional[rows].tolist(),
        table.producer_epoch[rows].tolist(),
        table.base_offset[rows].tolist(),
        table.last_offset[rows].tolist(),
        strict=True,
    )
    for row, producer_id, control, in_transaction, epoch, base_offset, last_offset in columns:
        txn = state.get(producer_id)
        if control:
            state.pop(producer_id, None)
        elif in_transaction:
            state[producer_id] = (
                OpenTransaction(producer_id, epoch, base_offset, last_offset)
                if txn is None
                else replace(txn, last_offset=last_offset)
            )
        elif txn is not None:
            raise SegmentLayoutError(
                f"a non-transactional batch of producer {producer_id} while its transaction from offset "
                f"{txn.first_offset} is open (Kafka's log loading refuses it: InvalidTxnStateException)",
                segment=key,
                position=int(table.position[row]),
                offset=base_offset,
            )
    return tuple(sorted(state.values(), key=lambda txn: txn.first_offset))
