"""The columns of the tables the validation suites read (``quality_frames``), with what each one holds:
``partitions``, ``deletions``, ``compaction`` and ``segments``. ``None`` means "not known" or "does not
apply" anywhere; pair expectations skip such rows."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from types import MappingProxyType


class ColumnKind(Enum):
    """What a column holds (``None`` is allowed in every column: "not known" or "does not apply")."""

    INT = "int"
    STR = "str"
    BOOL = "bool"


_INT, _STR, _BOOL = ColumnKind.INT, ColumnKind.STR, ColumnKind.BOOL

PARTITION_COLUMNS: Mapping[str, ColumnKind] = MappingProxyType(
    {
        "topic": _STR,
        "partition": _INT,
        "plan_status": _STR,  # planned | skipped (quarantined) | not-planned (outside the run's selection)
        "old_log_start_offset": _INT,  # input state
        "new_log_start_offset": _INT,  # staged state
        "log_end_offset": _INT,  # input state (neither retention nor compaction moves the log end)
        "new_log_end_offset": _INT,  # staged state
        "segments_before": _INT,
        "segments_after": _INT,
        "segments_retired": _INT,  # this run's retired entries of the partition (passes and compaction)
        "segments_added": _INT,  # staged live segments the input did not have, other than the round's output
        "segments_kept_plus_retired": _INT,  # segments_after - round output + segments_retired
        "bytes_before": _INT,
        "bytes_after": _INT,
        "bytes_retired": _INT,  # sizes of the retired segments as the step that retired them saw them
        "bytes_kept_plus_retired": _INT,  # bytes_after - round output bytes + bytes_retired
        "min_kept_base_offset": _INT,  # None when no segment is left
        "max_retired_next_offset": _INT,  # over the deletion passes' segments; None when they deleted none
        "retired_is_prefix": _BOOL,  # informative (Data Docs readers); the suite compares the raw offsets
        "consumed_bound": _INT,  # KIP-68's M from plan.json (None: does not apply, -1: unreadable groups)
    }
)

DELETION_COLUMNS: Mapping[str, ColumnKind] = MappingProxyType(
    {
        "topic": _STR,
        "partition": _INT,
        "key": _STR,
        "reason": _STR,  # log-start-offset | retention.bytes | consumed | retention.ms | compaction
        "position": _INT,  # index of the segment in the log it was retired from (None: not in that log)
        "base_offset": _INT,
        "last_offset": _INT,  # the last offset it could hold (empty segment: before the next one's base)
        "next_offset": _INT,
        "size": _INT,
        "largest_timestamp_ms": _INT,  # Kafka's LogSegment.largestTimestamp (max batch timestamp, else mtime)
        "following_base_offset": _INT,  # the next segment's base (None for the last segment)
        "bytes_after_segment": _INT,  # sum of the sizes of every later segment
        "old_log_start_offset": _INT,
        "new_log_start_offset": _INT,
        "log_end_offset": _INT,
        "now_ms": _INT,
        "log_start_offset_bound": _INT,  # old log start offset when the log-start-offset pass runs, else None
        "retention_bytes": _INT,  # when the retention.bytes pass runs (retention.bytes >= 0), else None
        "consumed_bound": _INT,  # M (plan.json)
        "consumed_limit_timestamp_ms": _INT,  # now - retention.commitoffset.ms when the consumed pass runs
        "limit_timestamp_ms": _INT,  # now - retention.ms when the retention.ms pass runs, else None
    }
)

COMPACTION_COLUMNS: Mapping[str, ColumnKind] = MappingProxyType(
    {
        "topic": _STR,
        "partition": _INT,
        "plan_status": _STR,
        "compaction_status": _STR,  # plan.json: cleaned | skipped | deferred | quarantined; none: not listed
        "compact_policy": _BOOL,  # cleanup.policy contains compact (configuration)
        "cleaner_enabled": _BOOL,  # log.cleaner.enable (configuration)
        "end_offset": _INT,  # plan.json: the round's end offset (map.latestOffset + 1)
        "checkpoint_before": _INT,  # input state's cleaner checkpoint
        "checkpoint_after": _INT,  # staged state's cleaner checkpoint
        "round_checkpoint": _INT,  # end_offset: what the checkpoint must be (deletions leave it)
        "old_log_start_offset": _INT,
        "new_log_start_offset": _INT,
        "log_end_offset": _INT,  # input state
        "last_stable_offset": _INT,  # input state: PartitionState.last_stable_offset (docs/compaction.md)
        "active_segment_base_offset": _INT,  # input state: base offset of the last segment
        "segments_deleted": _INT,  # this run's retired entries of the deletion passes
        "segments_replaced": _INT,  # this run's retired entries with the reason compaction
        "max_replaced_next_offset": _INT,
        "segments_written": _INT,  # segments this run wrote into the partition (live or deleted again)
        "first_base_offset_before": _INT,  # input log
        "first_base_offset_after_round": _INT,  # the log after the round (before the deletion passes)
        "segments_from_end_before": _INT,  # input segments at or after end_offset
        "segments_from_end_after": _INT,  # segments at or after end_offset after the round
        "segments_from_end_kept": _INT,  # the same objects on both sides
        "records_before_round": _INT,  # records of the input segments below end_offset
        "records_after_round": _INT,  # records of the segments below end_offset after the round
        "bytes_before_round": _INT,
        "bytes_after_round": _INT,
        "bytes_allowed_after_round": _INT,  # bytes_before_round + the rebuild allowance (quality_compaction)
    }
)

SEGMENT_COLUMNS: Mapping[str, ColumnKind] = MappingProxyType(
    {
        "topic": _STR,
        "partition": _INT,
        "key": _STR,
        "live": _BOOL,  # in the staged live list (False: this run's output a deletion pass removed again)
        "position": _INT,  # index in the staged live list
        "origin": _STR,  # adopted | written
        "written_by_run": _BOOL,  # written by this run (not in the input, origin written, this run's id)
        "base_offset": _INT,
        "next_offset": _INT,
        "previous_base_offset": _INT,  # the previous live segment's (None for the first, and not live)
        "previous_next_offset": _INT,
        "compaction_status": _STR,
        "end_offset": _INT,
        "replaced_at_base": _STR,  # key of the segment this run's round replaced at the same base offset
    }
)

PARTITIONS = "partitions"
DELETIONS = "deletions"
COMPACTION = "compaction"
SEGMENTS = "segments"

TABLE_COLUMNS: Mapping[str, Mapping[str, ColumnKind]] = MappingProxyType(
    {
        PARTITIONS: PARTITION_COLUMNS,
        DELETIONS: DELETION_COLUMNS,
        COMPACTION: COMPACTION_COLUMNS,
        SEGMENTS: SEGMENT_COLUMNS,
    }
)
"""Every table by name (the ``frame`` a suite runs over)."""
