"""Control records: transaction markers and the other control types, as Kafka's ``ControlRecordType`` and
``EndTransactionMarker``. An unknown type's record is kept opaque."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.batch import NO_SEQUENCE
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record

CONTROL_KEY = struct.Struct(">hh")  # version, type
END_TXN_MARKER_VALUE = struct.Struct(">hi")  # version, coordinator epoch
CURRENT_CONTROL_KEY_VERSION = 0
CURRENT_END_TXN_MARKER_VERSION = 0


class ControlRecordType(IntEnum):
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6
    UNKNOWN = -1


class ControlRecordError(ValueError):
    """A control record's key or marker value is malformed."""


@dataclass(frozen=True, slots=True)
class ControlKey:
    version: int
    type_id: int

    @property
    def type(self) -> ControlRecordType:
        try:
            return ControlRecordType(self.type_id)
        except ValueError:
            return ControlRecordType.UNKNOWN

    @classmethod
    def parse(cls, key: bytes | None) -> ControlKey:
        if key is None or len(key) < CONTROL_KEY.size:
            raise ControlRecordError(f"control record key must be at least {CONTROL_KEY.size} bytes: {key!r}")
        version, type_id = CONTROL_KEY.unpack_from(key)
        if version < 0:
            raise ControlRecordError(f"negative control record key version {version}")
        return cls(version, type_id)

    def build(self) -> bytes:
        return CONTROL_KEY.pack(self.version, self.type_id)


@dataclass(frozen=True, slots=True)
class EndTransactionMarker:
    """A COMMIT or ABORT marker's content."""

    type: ControlRecordType
    coordinator_epoch: int
    version: int = CURRENT_END_TXN_MARKER_VERSION

    @classmethod
    def parse(cls, record: Record) -> EndTransactionMarker:
        control_type = ControlKey.parse(record.key).type
        if control_type not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
            raise ControlRecordError(f"control record type {control_type.name} is not a transaction marker")
        value = record.value
        if value is None or len(value) < END_TXN_MARKER_VALUE.size:
            raise ControlRecordError(f"end transaction marker value too short: {value!r}")
        version, coordinator_epoch = END_TXN_MARKER_VALUE.unpack_from(value)
        if version < 0:
            raise ControlRecordError(f"negative end transaction marker version {version}")
        return cls(control_type, coordinator_epoch, version)

    def key_bytes(self) -> bytes:
        return ControlKey(CURRENT_CONTROL_KEY_VERSION, int(self.type)).build()

    def value_bytes(self) -> bytes:
        return END_TXN_MARKER_VALUE.pack(self.version, self.coordinator_epoch)


def build_end_transaction_marker(
    marker: EndTransactionMarker,
    *,
    offset: int,
    timestamp: int,
    producer_id: int,
    producer_epoch: int,
    partition_leader_epoch: int = -1,
) -> bytes:
    """A control batch with one COMMIT/ABORT record, as ``MemoryRecords.writeEndTransactionalMarker``:
    transactional, control, uncompressed, baseSequence -1."""
    record = Record(offset, timestamp, marker.key_bytes(), marker.value_bytes())
    return build_batch(
        [record],
        compression=CompressionType.NONE,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=NO_SEQUENCE,
        is_transactional=True,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
    )
