"""Kafka segment files: names, the offset/time/transaction indexes, and writing or rebuilding a segment.

The public names are re-exported here; each module holds one concern (``files``, ``offset_index``,
``time_index``, ``txn_index``, ``transactions``, ``writer``, ``recovery``, ``check``)."""

from kafka_segments.segment.check import (
    IndexProblem,
    SegmentCheck,
    check_offset_index,
    check_segment,
    check_time_index,
    check_txn_index,
)
from kafka_segments.segment.files import (
    FileKind,
    SegmentFileName,
    TransientSuffix,
    filename_prefix,
    parse_partition_dir_name,
    parse_segment_file_name,
    partition_dir_name,
    segment_file_name,
)
from kafka_segments.segment.offset_index import (
    OffsetIndex,
    OffsetPosition,
    build_offset_index,
    parse_offset_index,
)
from kafka_segments.segment.recovery import SegmentRecovery, rebuild_indexes
from kafka_segments.segment.time_index import TimeIndex, TimestampOffset, build_time_index, parse_time_index
from kafka_segments.segment.transactions import (
    AbortedTxnTracker,
    TxnScan,
    collect_aborted_transactions,
    end_marker_type,
)
from kafka_segments.segment.txn_index import (
    AbortedTxn,
    TxnIndexSearchResult,
    build_txn_index,
    collect_aborted_txns,
    collect_aborted_txns_from_segments,
    parse_txn_index,
)
from kafka_segments.segment.writer import (
    DEFAULT_INDEX_INTERVAL_BYTES,
    DEFAULT_SEGMENT_INDEX_BYTES,
    SegmentFiles,
    SegmentWriter,
    write_segment,
    write_segments,
)

__all__ = [
    "DEFAULT_INDEX_INTERVAL_BYTES",
    "DEFAULT_SEGMENT_INDEX_BYTES",
    "AbortedTxn",
    "AbortedTxnTracker",
    "FileKind",
    "IndexProblem",
    "OffsetIndex",
    "OffsetPosition",
    "SegmentCheck",
    "SegmentFileName",
    "SegmentFiles",
    "SegmentRecovery",
    "SegmentWriter",
    "TimeIndex",
    "TimestampOffset",
    "TransientSuffix",
    "TxnIndexSearchResult",
    "TxnScan",
    "build_offset_index",
    "build_time_index",
    "build_txn_index",
    "check_offset_index",
    "check_segment",
    "check_time_index",
    "check_txn_index",
    "collect_aborted_transactions",
    "collect_aborted_txns",
    "collect_aborted_txns_from_segments",
    "end_marker_type",
    "filename_prefix",
    "parse_offset_index",
    "parse_partition_dir_name",
    "parse_segment_file_name",
    "parse_time_index",
    "parse_txn_index",
    "partition_dir_name",
    "rebuild_indexes",
    "segment_file_name",
    "write_segment",
    "write_segments",
]
