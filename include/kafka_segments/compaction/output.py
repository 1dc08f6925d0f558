"""A cleaned segment as Kafka segment files: ``.log`` plus rebuilt ``.index``, ``.timeindex``, ``.txnindex``.

The offset and time indexes are built as any ``LogSegment.append`` builds them, in one columnar pass
(``segment.fast_writer``). The transaction index is *not* rebuilt from the markers: as in
``CleanedTransactionMetadata``, it holds the aborts whose ABORT marker the round kept because a batch of the
transaction was seen, even when that batch was then removed (``CleanedSegment.aborted``)."""

from __future__ import annotations

from dataclasses import replace

from kafka_segments.compaction.gc_pause import cyclic_gc_paused
from kafka_segments.compaction.results import CleanedSegment
from kafka_segments.config.model import TopicConfig
from kafka_segments.segment.fast_writer import write_segment_columns
from kafka_segments.segment.txn_index import build_txn_index
from kafka_segments.segment.writer import SegmentFiles, write_segment


def cleaned_segment_files(cleaned: CleanedSegment, config: TopicConfig) -> SegmentFiles:
    """The files of one cleaned segment (indexes per ``index.interval.bytes``; no size limit is applied:
    grouping already bounded the segment by ``segment.bytes`` and ``segment.index.bytes``).

    Raises:
        SegmentWriteError: the batches do not form a valid segment (offsets not increasing, an item of
            ``cleaned.batches`` that is not exactly one batch).
    """
    segment = f"cleaned {cleaned.base_offset}"
    with cyclic_gc_paused():
        files = write_segment_columns(
            cleaned.data,
            base_offset=cleaned.base_offset,
            index_interval_bytes=config.index_interval_bytes,
            segment=segment,
        )
        if files.batch_count != len(cleaned.batches):
            # an item holding several batches or part of one: the per-batch writer names it
            files = write_segment(
                cleaned.batches,
                base_offset=cleaned.base_offset,
                index_interval_bytes=config.index_interval_bytes,
                segment_index_bytes=None,
                segment=segment,
                verify_crc=False,
            )
    txn_index = build_txn_index(cleaned.aborted, base_offset=cleaned.base_offset)
    return replace(files, txn_index=txn_index, aborted_txns=cleaned.aborted)
