"""Placing adopted segments on a partition's log (adoption rules 4, 6 and 7; see ``adoption``).

A ``PartitionLog`` starts from the partition's committed state (or empty at its first segment's base offset)
and is extended in place by ``regrow``, ``place`` and ``apply_checkpoint`` (bootstrap). Base offsets are
kept beside the segments, so an overlap is found by bisection."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_segments.lake.adoption_report import Ignored, Quarantine
from kafka_segments.lake.layout import LOG_START_OFFSET_CHECKPOINT_KEY
from kafka_segments.lake.scan import SegmentLayoutError, advance_open_transactions
from kafka_segments.state import OpenTransaction, PartitionState, SegmentEntry
from kafka_segments.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_segments.records.fast import HeaderTable

OVERLAP_ERROR = "SegmentOverlapError"
LOG_START_ERROR = "OffsetOutOfRangeError"
"""After Kafka's ``OffsetOutOfRangeException`` for a log start offset above the high watermark."""


@dataclass(slots=True)
class PartitionLog:
    """A partition's log being extended by adoption."""

    topic_partition: TopicPartition
    segments: list[SegmentEntry]
    bases: list[int]
    log_start: int
    log_end: int
    open_transactions: tuple[OpenTransaction, ...]

    @classmethod
    def of_state(cls, state: PartitionState) -> PartitionLog:
        """The committed log of ``state``."""
        return cls(
            topic_partition=state.topic_partition,
            segments=list(state.segments),
            bases=[segment.base_offset for segment in state.segments],
            log_start=state.log_start_offset,
            log_end=state.log_end_offset,
            open_transactions=state.open_transactions,
        )

    @classmethod
    def empty_at(cls, topic_partition: TopicPartition, offset: int) -> PartitionLog:
        """A new partition's log before its first segment (log start = log end = that segment's base)."""
        return cls(topic_partition, [], [], offset, offset, ())

    def grow(
        self,
        regrown: list[tuple[SegmentEntry, HeaderTable]],
        candidates: list[tuple[SegmentEntry, HeaderTable]],
        ignored: list[Ignored],
    ) -> tuple[list[SegmentEntry], Quarantine | None]:
        """``regrow`` the last segment by each of ``regrown``, then ``place`` the ``candidates``: the adopted
        entries, or the first quarantine (then nothing of the partition may be adopted)."""
        for entry, tail in regrown:
            problem = self.regrow(entry, tail)
            if problem is not None:
                return [], problem
        return self.place(candidates, ignored)

    def regrow(self, entry: SegmentEntry, tail: HeaderTable) -> Quarantine | None:
        """Replace the last segment by its grown ``entry``; ``tail`` holds the batches it gained. The
        quarantine when its batches cannot follow the partition's transactions (``_advance``)."""
        self.segments[-1] = entry
        self.log_end = max(self.log_end, entry.next_offset)
        return self._advance(entry, tail)

    def _advance(self, entry: SegmentEntry, table: HeaderTable) -> Quarantine | None:
        """The open transactions moved past ``entry``'s batches ``table``; the quarantine of a segment
        Kafka's log loading refuses (``advance_open_transactions``)."""
        try:
            self.open_transactions = advance_open_transactions(self.open_transactions, table, key=entry.key)
        except SegmentLayoutError as exc:
            return Quarantine(
                self.topic_partition,
                entry.key,
                exc.position,
                f"{exc.reason} at byte {exc.position}; nothing of the partition is adopted in this run",
                type(exc).__name__,
            )
        return None

    def place(
        self, candidates: list[tuple[SegmentEntry, HeaderTable]], ignored: list[Ignored]
    ) -> tuple[list[SegmentEntry], Quarantine | None]:
        """Append ``candidates`` (by base offset); the adopted entries, or the quarantine of the first
        overlap (then nothing of the partition may be adopted). Candidates below the log start offset go to
        ``ignored``."""
        adopted: list[SegmentEntry] = []
        for entry, table in candidates:
            if entry.base_offset >= self.log_end:
                self.segments.append(entry)
                self.bases.append(entry.base_offset)
                self.log_end = max(self.log_end, entry.next_offset)
                problem = self._advance(entry, table)
                if problem is not None:
                    return [], problem
                adopted.append(entry)
            elif _last_or_base(entry) < self.log_start:
                ignored.append(Ignored(entry.key, self._below_log_start(entry)))
            else:
                return [], self._overlap(entry, new_keys={item.key for item in adopted})
        return adopted, None

    def apply_checkpoint(self, checkpointed: int | None) -> Quarantine | None:
        """Bootstrap: take a checkpointed log start offset as ``UnifiedLog`` loads it; above the log end
        offset the partition is quarantined instead."""
        if checkpointed is None:
            return None
        if checkpointed > self.log_end:
            return Quarantine(
                self.topic_partition,
                LOG_START_OFFSET_CHECKPOINT_KEY,
                None,
                f"log-start-offset-checkpoint says log start offset {checkpointed} but the partition's "
                f"segments end at log end offset {self.log_end} (segments missing?); upload the missing "
                "segments or correct the checkpoint, then adopt again (Kafka would delete all the "
                "partition's segments)",
                LOG_START_ERROR,
            )
        self.log_start = max(checkpointed, self.log_start)
        return None

    def to_state(self, *, cleaner_checkpoint: int | None, run_id: str) -> PartitionState:
        return PartitionState(
            topic_partition=self.topic_partition,
            log_start_offset=self.log_start,
            log_end_offset=self.log_end,
            segments=tuple(self.segments),
            cleaner_checkpoint=cleaner_checkpoint,
            open_transactions=self.open_transactions,
            run_id=run_id,
        )

    def _below_log_start(self, entry: SegmentEntry) -> str:
        return (
            f"below the log start offset {self.log_start} ({_describe(entry)}): those records were already "
            "removed from the partition; adoption leaves the object alone"
        )

    def _overlap(self, entry: SegmentEntry, *, new_keys: set[str]) -> Quarantine:
        index = bisect_right(self.bases, _last_or_base(entry)) - 1
        other = self.segments[index] if index >= 0 else None
        if other is not None and other.last_offset is not None and other.last_offset >= entry.base_offset:
            new = " (also new in this run)" if other.key in new_keys else ""
            what = f"overlaps live offsets [{other.base_offset}, {other.last_offset}] of {other.key}{new}"
        else:
            what = f"starts below the log end offset {self.log_end} (only segments at or after it can append)"
        return Quarantine(
            self.topic_partition,
            entry.key,
            None,
            f"this segment ({_describe(entry)}) {what}; nothing of the partition is adopted in this run: "
            "remove the object (or the one it duplicates, if not yet adopted) and run adopt again",
            OVERLAP_ERROR,
        )


def _last_or_base(entry: SegmentEntry) -> int:
    return entry.base_offset if entry.last_offset is None else entry.last_offset


def _describe(entry: SegmentEntry) -> str:
    if entry.last_offset is None:
        return f"an empty segment at offset {entry.base_offset}"
    return f"offsets [{entry.base_offset}, {entry.last_offset}]"
