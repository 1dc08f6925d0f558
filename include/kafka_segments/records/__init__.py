"""Kafka's on-disk record formats: record batch v2, legacy message sets v0/v1, compression, control records.

The public names are re-exported here; the modules each hold one concern (schema, record, builder, ...)."""

from kafka_segments.records.attributes import CompressionType, TimestampType
from kafka_segments.records.batch import BatchHeader, RecordBatch
from kafka_segments.records.builder import build_batch, empty_batch_header, rebuild_batch
from kafka_segments.records.control import (
    ControlKey,
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker,
)
from kafka_segments.records.legacy import LegacyEntry
from kafka_segments.records.log import (
    Entry,
    SegmentScan,
    iter_batches,
    iter_records,
    read_entry,
    scan_headers,
    scan_valid_prefix,
)
from kafka_segments.records.record import Header, Record

__all__ = [
    "BatchHeader",
    "CompressionType",
    "ControlKey",
    "ControlRecordType",
    "EndTransactionMarker",
    "Entry",
    "Header",
    "LegacyEntry",
    "Record",
    "RecordBatch",
    "SegmentScan",
    "TimestampType",
    "build_batch",
    "build_end_transaction_marker",
    "empty_batch_header",
    "iter_batches",
    "iter_records",
    "read_entry",
    "rebuild_batch",
    "scan_headers",
    "scan_valid_prefix",
]
