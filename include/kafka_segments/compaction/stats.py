"""What a cleaning round did, as Kafka's ``CleanerStats`` reports it (``LogCleaner.recordStats``), and more:
what the rules removed and the segments kept as they were (output byte-identical to their single source)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from kafka_segments.compaction.results import BatchAction, RoundResult


@dataclass(frozen=True, slots=True)
class PhaseTimes:
    """Seconds per phase of a partition's round (wall clock of the worker that ran it)."""

    read_s: float = 0.0
    """Reading the partition's segments from the store."""
    clean_s: float = 0.0
    """The round itself: offset map, decisions, rebuilt batches."""
    write_s: float = 0.0
    """Building the output segments' indexes and writing their objects."""

    @property
    def total_s(self) -> float:
        return self.read_s + self.clean_s + self.write_s


@dataclass(frozen=True, slots=True)
class CleanerStats:
    """One partition's round, counted."""

    segments_read: int
    """Segments recopied (every segment below the round's end offset, the clean section included)."""
    bytes_read: int
    """``.log`` bytes of the recopied segments (Kafka's ``bytesRead``)."""
    map_bytes_read: int
    """``.log`` bytes of the dirty segments the offset map was built from (Kafka's ``mapBytesRead``)."""
    map_keys: int
    """Distinct keys in the offset map."""
    messages_read: int
    """Records read from the recopied segments, as Kafka's ``messagesRead`` counts them: not the records of a
    batch the batch-retention check deletes whole (``MemoryRecords.filterTo`` skips its record loop; its
    bytes are still in ``bytes_read``)."""
    messages_written: int
    bytes_written: int
    """``.log`` bytes of the output segments, kept ones included."""
    segments_written: int
    """Output segments written as new objects."""
    segments_kept: int
    """Output segments byte-identical to their single source segment: the existing object stays live."""
    batches_copied: int
    batches_rebuilt: int
    batches_emptied: int
    """Batches kept as a 61-byte empty header (last batch of an active producer, end of the round)."""
    batches_deleted: int
    tombstones_read: int
    tombstones_kept: int
    aborted_records_removed: int
    unkeyed_records_removed: int
    """Kafka's ``invalidMessagesRead``."""
    horizons_stamped: int
    """Batches that got a delete horizon in this round (tombstones, markers of emptied transactions)."""
    times: PhaseTimes = PhaseTimes()
    buffer_utilization: float = 0.0
    """Kafka's ``bufferUtilization``: ``map_keys`` over the offset map's slots
    (``SkimpyOffsetMap.utilization``; an unbounded map counts against the slots of Kafka's default
    ``log.cleaner.dedupe.buffer.size``)."""

    @property
    def bytes_dropped(self) -> int:
        return self.bytes_read - self.bytes_written

    @property
    def messages_dropped(self) -> int:
        return self.messages_read - self.messages_written

    @property
    def tombstones_removed(self) -> int:
        return self.tombstones_read - self.tombstones_kept

    @classmethod
    def of(
        cls,
        result: RoundResult,
        *,
        bytes_read: int,
        map_bytes_read: int,
        map_keys: int,
        bytes_written: int,
        segments_written: int,
        segments_kept: int,
        times: PhaseTimes,
    ) -> CleanerStats:
        return cls(
            segments_read=len(result.replaced),
            bytes_read=bytes_read,
            map_bytes_read=map_bytes_read,
            map_keys=map_keys,
            messages_read=result.records_read,
            messages_written=result.records_retained,
            bytes_written=bytes_written,
            segments_written=segments_written,
            segments_kept=segments_kept,
            batches_copied=result.count(BatchAction.COPIED),
            batches_rebuilt=result.count(BatchAction.REBUILT),
            batches_emptied=result.count(BatchAction.EMPTY_HEADER),
            batches_deleted=result.count(BatchAction.DELETED),
            tombstones_read=result.tombstones_read,
            tombstones_kept=result.tombstones_retained,
            aborted_records_removed=result.aborted_removed,
            unkeyed_records_removed=result.unkeyed_dropped,
            horizons_stamped=result.horizons_stamped,
            times=times,
        )

    def to_dict(self) -> dict[str, Any]:
        document = asdict(self)
        document["times"] = {**asdict(self.times), "total_s": self.times.total_s}
        document["bytes_dropped"] = self.bytes_dropped
        document["messages_dropped"] = self.messages_dropped
        document["tombstones_removed"] = self.tombstones_removed
        return document
