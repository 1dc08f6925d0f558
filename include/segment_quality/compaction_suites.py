"""The compaction suites: what a run's cleaning rounds must leave, checked against the manifests
(docs/validation.md, "The suites and the Kafka rules"). Only the round's status and end offset are the plan's
claims, and those are what the suites check. A round's checkpoint is its end offset even when a deletion pass
then moved the log start past it (``deleteOldSegments`` leaves it)."""

from __future__ import annotations

from kafka_segments.compaction import COMPACTION_REASON

from segment_quality.spec import SuiteSpec, When, equal, known, one_of, pair, zero
from segment_quality.staged.columns import COMPACTION, SEGMENTS
from segment_quality.staged.compaction import CLEANED

__all__ = [
    "CLEANED",
    "COMPACTION_PARTITIONS",
    "COMPACTION_REASON",
    "COMPACTION_SEGMENTS",
    "COMPACTION_SUITES",
]

ROUND = When("compaction_status", "==", CLEANED)
NO_ROUND = When("compaction_status", "!=", CLEANED)
WRITTEN = When("written_by_run", "==", True)

COMPACTION_PARTITIONS = SuiteSpec(
    "compaction.partitions",
    COMPACTION,
    (
        one_of(
            "round-only-for-compacted-topics",
            "LogCleanerManager.grabFilthiestCompactedLog only considers logs with compact in cleanup.policy",
            "compact_policy",
            (True,),
            when=ROUND,
        ),
        one_of(
            "round-only-with-the-cleaner-enabled",
            "log.cleaner.enable=false: no cleaner thread runs, no log is cleaned",
            "cleaner_enabled",
            (True,),
            when=ROUND,
        ),
        one_of(
            "round-only-in-a-planned-partition",
            "a partition outside the run's selection, or quarantined, gets no round",
            "plan_status",
            ("planned",),
            when=ROUND,
        ),
        known(
            "round-has-an-end-offset", "a cleaned partition has a round end offset", "end_offset", when=ROUND
        ),
        pair(
            "round-ends-at-or-below-the-active-segment",
            "LogCleanerManager.cleanableOffsets: the first uncleanable offset is at most the active "
            "segment's base offset (the active segment is never cleaned)",
            "active_segment_base_offset",
            "end_offset",
            when=ROUND,
        ),
        pair(
            "round-ends-at-or-below-the-last-stable-offset",
            "LogCleanerManager.cleanableOffsets: the first uncleanable offset is at most the last stable "
            "offset (the first offset of the earliest open transaction, else the high watermark)",
            "last_stable_offset",
            "end_offset",
            when=ROUND,
        ),
        known(
            "cleaned-partition-has-a-checkpoint",
            "LogCleanerManager.doneCleaning writes the round's end offset to the cleaner checkpoint",
            "checkpoint_after",
            when=ROUND,
        ),
        equal(
            "checkpoint-is-the-round-end-offset",
            "doneCleaning: checkpoint = end offset; a deletion pass that then moves the log start offset "
            "past it leaves it there (UnifiedLog.deleteOldSegments does not touch the cleaner checkpoint)",
            "checkpoint_after",
            "round_checkpoint",
            when=ROUND,
        ),
        pair(
            "checkpoint-at-or-after-the-log-start-offset",
            "a round's checkpoint is at least the log start offset the round started from (cleanableOffsets: "
            "the first dirty offset is at least the log start offset)",
            "checkpoint_after",
            "old_log_start_offset",
            when=ROUND,
        ),
        pair(
            "checkpoint-at-or-before-the-log-end-offset",
            "a valid cleaner checkpoint is at most the log end offset (cleanableOffsets)",
            "log_end_offset",
            "checkpoint_after",
            when=ROUND,
        ),
        equal(
            "round-keeps-the-first-segment-base",
            "Cleaner.doClean recopies every segment from the start of the log, and a group's output keeps "
            "the base offset of its first segment: the log after the round starts where it started",
            "first_base_offset_after_round",
            "first_base_offset_before",
            when=ROUND,
        ),
        equal(
            "round-keeps-the-log-start-offset",
            "a cleaning round never moves the log start offset; only a deletion (UnifiedLog.deleteSegments) "
            "does: with no deletion in the run it stays",
            "new_log_start_offset",
            "old_log_start_offset",
            when=(ROUND, When("segments_deleted", "==", 0)),
        ),
        equal(
            "round-keeps-segments-from-its-end",
            "Cleaner.doClean recopies only the segments below the end offset: every segment from it on is "
            "still there, the same object",
            "segments_from_end_kept",
            "segments_from_end_before",
            when=ROUND,
        ),
        equal(
            "round-adds-no-segment-from-its-end",
            "the round's output lies below its end offset: from the end offset on the log is the input's",
            "segments_from_end_after",
            "segments_from_end_kept",
            when=ROUND,
        ),
        pair(
            "replaced-segments-below-the-round-end",
            "Cleaner.doClean replaces only segments below the end offset (log.logSegments(0, endOffset))",
            "end_offset",
            "max_replaced_next_offset",
            when=ROUND,
        ),
        zero(
            "no-replacement-without-a-round",
            "a segment is retired as compaction only by a cleaning round of its partition",
            "segments_replaced",
            when=NO_ROUND,
        ),
        pair(
            "round-only-drops-records",
            "Cleaner.cleanInto / MemoryRecords.filterTo keep or drop records, never add any: records below "
            "the end offset after the round <= before",
            "records_before_round",
            "records_after_round",
            when=ROUND,
        ),
        pair(
            "round-bytes-within-the-rebuild-allowance",
            "bytes below the end offset after the round <= before + 61 per batch + 10 per record: a batch "
            "stamped with a delete horizon (KIP-534) grows by its records' timestamp-delta varints, a kept "
            "v0/v1 entry is rewritten as a v2 batch (MemoryRecords.filterTo)",
            "bytes_allowed_after_round",
            "bytes_after_round",
            when=ROUND,
        ),
    ),
)

COMPACTION_SEGMENTS = SuiteSpec(
    "compaction.segments",
    SEGMENTS,
    (
        pair(
            "segments-in-base-offset-order",
            "a log's segments are ordered by base offset, strictly increasing (LogSegments)",
            "base_offset",
            "previous_base_offset",
            strict=True,
        ),
        pair(
            "segments-do-not-overlap",
            "a segment starts after the previous one's last offset (offsets only grow)",
            "base_offset",
            "previous_next_offset",
        ),
        one_of(
            "written-segment-in-a-cleaned-partition",
            "a run writes segments only as a cleaning round's output",
            "compaction_status",
            (CLEANED,),
            when=WRITTEN,
        ),
        pair(
            "written-segment-below-the-round-end",
            "a cleaning round's output holds offsets below its end offset only (Cleaner.doClean)",
            "end_offset",
            "next_offset",
            when=WRITTEN,
        ),
        known(
            "written-segment-starts-at-a-replaced-segment",
            "Cleaner.groupSegmentsBySize/cleanSegments: a group's output segment has the base offset of the "
            "group's first segment, which the round replaced",
            "replaced_at_base",
            when=WRITTEN,
        ),
    ),
    index_columns=("topic", "partition", "key"),
)

COMPACTION_SUITES: tuple[SuiteSpec, ...] = (COMPACTION_PARTITIONS, COMPACTION_SEGMENTS)
