"""Rebuilding a segment's indexes from its ``.log``: Kafka's ``LogSegment.recover`` (checks every batch,
re-applies the append rule, truncates at the first invalid batch). Stricter in one way: offsets that do not
increase are an error (Kafka only notices when an index entry would go backwards)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka_segments.errors import CorruptRecordError
from kafka_segments.records.log import Buffer, iter_batches
from kafka_segments.segment.writer import DEFAULT_INDEX_INTERVAL_BYTES, SegmentFiles, SegmentWriter


@dataclass(frozen=True, slots=True)
class SegmentRecovery:
    """``rebuild_indexes``: the segment rebuilt from the valid prefix of a ``.log``, and what was cut off."""

    segment: SegmentFiles
    truncated_bytes: int
    damage: CorruptRecordError | None


def rebuild_indexes(
    log: Buffer,
    *,
    base_offset: int,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    segment_index_bytes: int | None = None,
    ongoing_txns: Mapping[int, int] | None = None,
    segment: str = "<memory>",
    verify_crc: bool = True,
) -> SegmentRecovery:
    """Kafka's ``LogSegment.recover``: rebuild ``.index``/``.timeindex``/``.txnindex`` from a ``.log``.

    Entries are read up to the first damaged one (bad size, magic, checksum or marker key), which Kafka
    truncates away; the rebuilt segment holds the valid prefix and the damage is reported.

    Raises:
        SegmentWriteError: offsets not increasing or below ``base_offset``; ``SegmentFullError`` when an
            offset overflows the relative offsets (Kafka splits such a segment) or an index limit is hit.
    """
    writer = SegmentWriter(
        base_offset=base_offset,
        index_interval_bytes=index_interval_bytes,
        segment_index_bytes=segment_index_bytes,
        ongoing_txns=ongoing_txns,
        segment=segment,
        verify_crc=False,
    )
    view = memoryview(log)
    damage: CorruptRecordError | None = None
    try:
        for entry in iter_batches(view, segment=segment, verify_crc=verify_crc):
            start = entry.header.position
            writer.append_entry(entry, view[start : start + entry.header.size_in_bytes])
    except CorruptRecordError as exc:
        damage = exc
    files = writer.close()
    return SegmentRecovery(files, len(view) - files.size, damage)
