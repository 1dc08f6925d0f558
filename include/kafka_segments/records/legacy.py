"""Legacy message sets v0/v1 (magic 0 and 1). INTERFACE PLACEHOLDER: being implemented."""

from __future__ import annotations

from kafka_segments.records.batch import BatchHeader
from kafka_segments.records.record import Record

RECORD_OVERHEAD_V0 = 14


class LegacyEntry:
    header: BatchHeader
    segment: str
    records: list[Record]

    def verify_crc(self) -> None:
        raise NotImplementedError

    def is_valid(self) -> bool:
        raise NotImplementedError


def read_legacy_entry(entry: memoryview, *, segment: str, position: int) -> LegacyEntry:
    raise NotImplementedError
