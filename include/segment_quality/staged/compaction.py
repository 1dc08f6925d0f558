"""A partition through a run that compacts: the input log, the log the cleaning round left, the staged log.

The middle one, which the deletion passes planned over, is rebuilt here **from the manifests, not from the
plan's claims**: input segments − those retired for ``compaction`` + this run's output segments. Only the
round's status and end offset come from ``plan.json``. The rows carry Kafka's cleaner rules
(docs/validation.md): the stored checkpoint is the round's end offset, which the deletion passes leave as it
is (``deleteOldSegments``). A cleaned group may legitimately be larger than its sources (delete horizons
re-encode timestamp deltas, legacy entries become v2 batches: ``MemoryRecords.filterTo``), hence the bound
``bytes after <= bytes before + 61 x batches after + 10 x records after``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kafka_segments.compaction import COMPACTION_REASON
from kafka_segments.config import Config
from kafka_segments.errors import CorruptRecordError, ObjectNotFoundError
from kafka_segments.lake.layout import parse_segment_key, try_parse_segment_key
from kafka_segments.state import Manifest, PartitionState, RetiredObject, SegmentEntry, SegmentOrigin
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition

CLEANED = "cleaned"
NO_ROUND = "none"
"""``compaction_status`` of a partition ``plan.json``'s compaction section does not list."""

BATCH_HEADER_ALLOWANCE = 61
"""Bytes a kept legacy entry may grow by when it is rewritten as a v2 batch (the v2 header's size)."""
RECORD_ALLOWANCE = 10
"""Bytes a record may grow by when its batch gets a delete horizon (timestamp delta and length varints)."""

Row = dict[str, object]


@dataclass(frozen=True, slots=True)
class RoundClaim:
    """What ``plan.json``'s compaction section says about one partition."""

    status: str
    """``cleaned``, ``skipped``, ``deferred``, ``quarantined`` (``CompactionStatus``), or ``none``."""
    end_offset: int | None = None
    """The round's end offset (only for ``cleaned``)."""


NOT_LISTED = RoundClaim(NO_ROUND)


def round_claims(document: Mapping[str, Any]) -> dict[TopicPartition, RoundClaim]:
    """Each listed partition's round status and end offset from ``plan.json`` (none listed: ``{}``)."""
    section = document.get("compaction")
    partitions = section.get("partitions", []) if isinstance(section, Mapping) else []
    claims: dict[TopicPartition, RoundClaim] = {}
    for item in partitions:
        end = item.get("end_offset")
        tp = TopicPartition(str(item["topic"]), int(item["partition"]))
        claims[tp] = RoundClaim(str(item.get("status")), None if end is None else int(end))
    return claims


@dataclass(frozen=True, slots=True)
class LogChange:
    """One partition through the run (see the module docstring)."""

    topic_partition: TopicPartition
    before: PartitionState | None
    after: PartitionState | None
    retired: tuple[RetiredObject, ...]
    """This run's retired entries of the partition (compaction and the deletion passes)."""
    claim: RoundClaim
    output: tuple[SegmentEntry, ...]
    """Segments this run wrote into the partition, live or retired again by a pass, in offset order."""
    middle: tuple[SegmentEntry, ...]
    """The log after the round (the input log when there was no round): what the passes planned over."""
    run_id: str

    @property
    def cleaned(self) -> bool:
        return self.claim.status == CLEANED

    @property
    def round_output(self) -> tuple[SegmentEntry, ...]:
        """The output segments that count as the round's (a partition the plan says it cleaned only)."""
        return self.output if self.cleaned else ()

    @property
    def inputs(self) -> tuple[SegmentEntry, ...]:
        return () if self.before is None else self.before.segments

    @property
    def replaced(self) -> tuple[RetiredObject, ...]:
        return tuple(item for item in self.retired if item.reason == COMPACTION_REASON)

    @property
    def deleted(self) -> tuple[RetiredObject, ...]:
        """The deletion passes' entries."""
        return tuple(item for item in self.retired if item.reason != COMPACTION_REASON)

    @property
    def touched(self) -> bool:
        """Whether the partition had a round, or shows compaction output or replacements."""
        return self.cleaned or bool(self.output) or bool(self.replaced)

    def retiring_log(self, item: RetiredObject) -> tuple[SegmentEntry, ...]:
        """The log ``item`` was retired from: the input for compaction, the log after the round else."""
        return self.inputs if item.reason == COMPACTION_REASON else self.middle


def log_changes(
    before: Manifest,
    after: Manifest,
    claims: Mapping[TopicPartition, RoundClaim],
    written: Mapping[str, SegmentEntry],
) -> list[LogChange]:
    """Every partition of either state (or with retired entries), by topic and partition number.

    Args:
        after: the staged manifest (its ``run_id`` is the run; its version stamps the run's retired entries).
        written: entries of this run's output segments that a pass retired again (read from their objects);
            one missing here is described by nothing (its rows have ``None`` segment columns).
    """
    old, new = before.partition_map(), after.partition_map()
    retired: dict[TopicPartition, list[RetiredObject]] = {}
    for item in after.retired:
        if item.retired_in_version == after.version:
            retired.setdefault(item.topic_partition, []).append(item)
    every = sorted({*old, *new, *retired}, key=lambda tp: (tp.topic, tp.partition))
    return [
        log_change(
            tp,
            old.get(tp),
            new.get(tp),
            retired.get(tp, []),
            claims.get(tp, NOT_LISTED),
            after.run_id,
            written,
        )
        for tp in every
    ]


def log_change(
    tp: TopicPartition,
    before: PartitionState | None,
    after: PartitionState | None,
    retired: Sequence[RetiredObject],
    claim: RoundClaim,
    run_id: str,
    written: Mapping[str, SegmentEntry],
) -> LogChange:
    """One partition through the run (arguments as in ``log_changes``, ``retired``: this run's entries)."""
    inputs = () if before is None else before.segments
    input_keys = {segment.key for segment in inputs}
    live = () if after is None else after.segments
    live_output = [s for s in live if s.key not in input_keys and written_by(s, run_id)]
    retired_output = [
        written[item.key]
        for item in retired
        if item.reason != COMPACTION_REASON and item.key not in input_keys and item.key in written
    ]
    replaced_keys = {item.key for item in retired if item.reason == COMPACTION_REASON}
    replaced = [segment for segment in inputs if segment.key in replaced_keys]
    kept = [segment for segment in inputs if segment.key not in replaced_keys]
    after_round = sorted([*kept, *live_output, *retired_output], key=_offset_order)
    retired_output = [_with_group_mtime(segment, after_round, replaced) for segment in retired_output]
    output = tuple(sorted([*live_output, *retired_output], key=_offset_order))
    middle = tuple(sorted([*kept, *output], key=_offset_order)) if claim.status == CLEANED else inputs
    return LogChange(tp, before, after, tuple(retired), claim, output, middle, run_id)


def _offset_order(segment: SegmentEntry) -> tuple[int, str]:
    return segment.base_offset, segment.key


def _with_group_mtime(
    segment: SegmentEntry, after_round: Sequence[SegmentEntry], replaced: Sequence[SegmentEntry]
) -> SegmentEntry:
    """An output segment read back from its object (a pass retired it again) with the mtime Kafka gives a
    cleaned segment — the last modified time of its group's last source segment (``Cleaner.cleanSegments``),
    which ``LogSegment.largestTimestamp`` falls back to. Its group: the replaced input segments from its base
    offset up to the next segment of the log after the round."""
    following = [s.base_offset for s in after_round if s.base_offset > segment.base_offset]
    upper = min(following, default=None)
    sources = [
        s
        for s in replaced
        if s.base_offset >= segment.base_offset and (upper is None or s.base_offset < upper)
    ]
    return replace(segment, last_modified_ms=sources[-1].last_modified_ms) if sources else segment


def written_by(segment: SegmentEntry, run_id: str) -> bool:
    """A segment object this run wrote (``<base>-<run id>.log``, origin ``written``)."""
    return segment.origin is SegmentOrigin.WRITTEN and segment.run_id == run_id


def output_keys_retired_again(before: Manifest, after: Manifest) -> list[str]:
    """Keys of this run's output segments that a deletion pass retired in the same run (not in the input,
    named after the run): their entries must be read from the objects (``summarize_segment``)."""
    live = before.live_keys()
    keys = []
    for item in after.retired:
        if item.retired_in_version != after.version or item.reason == COMPACTION_REASON or item.key in live:
            continue
        name = try_parse_segment_key(item.key)
        if name is not None and name.run_id == after.run_id:
            keys.append(item.key)
    return keys


def read_retired_output(store: ObjectStore, before: Manifest, after: Manifest) -> dict[str, SegmentEntry]:
    """The entries of this run's output segments a pass retired again, from a header scan of their objects.

    An object that is missing or does not scan is left out: its deletion row then describes no segment, and
    the suites reject the run (``retired-segment-was-live``, the count reconciliation).

    Raises:
        ObjectStoreError: the store could not be read (validation cannot run).
    """
    from kafka_segments.lake.scan import summarize_segment  # numba: loaded only when there is one to scan

    entries: dict[str, SegmentEntry] = {}
    for key in output_keys_retired_again(before, after):
        name = parse_segment_key(key)
        try:
            data = store.get(key)
            summary = summarize_segment(data, key=store.location(key), base_offset=name.base_offset)
        except (ObjectNotFoundError, CorruptRecordError):
            continue
        entries[key] = summary.entry(
            key=key,
            base_offset=name.base_offset,
            etag="",
            last_modified_ms=-1,
            origin=SegmentOrigin.WRITTEN,
            run_id=after.run_id,
        )
    return entries


def compaction_row(change: LogChange, config: Config, *, plan_status: str) -> Row:
    """One partition's round, checked against the manifests (``COMPACTION_COLUMNS``)."""
    before, after, end = change.before, change.after, change.claim.end_offset
    topic = config.for_topic(change.topic_partition.topic)
    new_lso = None if after is None else after.log_start_offset
    replaced = _described(change.replaced, change.inputs)
    return {
        "topic": change.topic_partition.topic,
        "partition": change.topic_partition.partition,
        "plan_status": plan_status,
        "compaction_status": change.claim.status,
        "compact_policy": topic.compact,
        "cleaner_enabled": topic.cleaner_enabled,
        "end_offset": end,
        "checkpoint_before": None if before is None else before.cleaner_checkpoint,
        "checkpoint_after": None if after is None else after.cleaner_checkpoint,
        "round_checkpoint": end,
        "old_log_start_offset": None if before is None else before.log_start_offset,
        "new_log_start_offset": new_lso,
        "log_end_offset": None if before is None else before.log_end_offset,
        "last_stable_offset": None if before is None else before.last_stable_offset,
        "active_segment_base_offset": change.inputs[-1].base_offset if change.inputs else None,
        "segments_deleted": len(change.deleted),
        "segments_replaced": len(change.replaced),
        "max_replaced_next_offset": max((s.next_offset for s in replaced), default=None),
        "segments_written": len(change.output),
        "first_base_offset_before": change.inputs[0].base_offset if change.inputs else None,
        "first_base_offset_after_round": change.middle[0].base_offset if change.middle else None,
        **_round_columns(change),
    }


def _round_columns(change: LogChange) -> Row:
    """What the round did below and from its end offset (``None`` without a cleaned round)."""
    end = change.claim.end_offset
    names = (
        "segments_from_end_before",
        "segments_from_end_after",
        "segments_from_end_kept",
        "records_before_round",
        "records_after_round",
        "bytes_before_round",
        "bytes_after_round",
        "bytes_allowed_after_round",
    )
    if not change.cleaned or end is None:
        return dict.fromkeys(names)
    tail_before = [s.key for s in change.inputs if s.base_offset >= end]
    tail_after = [s.key for s in change.middle if s.base_offset >= end]
    below_before = [s for s in change.inputs if s.base_offset < end]
    below_after = [s for s in change.middle if s.base_offset < end]
    bytes_before = sum(s.size for s in below_before)
    records_after = sum(s.record_count for s in below_after)
    batches_after = sum(s.batch_count for s in below_after)
    return {
        "segments_from_end_before": len(tail_before),
        "segments_from_end_after": len(tail_after),
        "segments_from_end_kept": len(set(tail_before) & set(tail_after)),
        "records_before_round": sum(s.record_count for s in below_before),
        "records_after_round": records_after,
        "bytes_before_round": bytes_before,
        "bytes_after_round": sum(s.size for s in below_after),
        "bytes_allowed_after_round": bytes_before
        + BATCH_HEADER_ALLOWANCE * batches_after
        + RECORD_ALLOWANCE * records_after,
    }


def segment_rows(change: LogChange) -> list[Row]:
    """The staged live segments of a partition the compaction touched, in their listed order, then this run's
    output segments a pass retired again (``SEGMENT_COLUMNS``); nothing for other partitions."""
    if not change.touched:
        return []
    live = () if change.after is None else change.after.segments
    input_keys = {segment.key for segment in change.inputs}
    replaced_at = {s.base_offset: s.key for s in _described(change.replaced, change.inputs)}
    rows = []
    for position, segment in enumerate(live):
        previous = live[position - 1] if position else None
        mine = segment.key not in input_keys and written_by(segment, change.run_id)
        rows.append(
            _segment_row(change, segment, replaced_at, position=position, previous=previous, mine=mine)
        )
    live_keys = {segment.key for segment in live}
    for segment in change.output:
        if segment.key not in live_keys:
            rows.append(_segment_row(change, segment, replaced_at, position=None, previous=None, mine=True))
    return rows


def _segment_row(
    change: LogChange,
    segment: SegmentEntry,
    replaced_at: Mapping[int, str],
    *,
    position: int | None,
    previous: SegmentEntry | None,
    mine: bool,
) -> Row:
    return {
        "topic": change.topic_partition.topic,
        "partition": change.topic_partition.partition,
        "key": segment.key,
        "live": position is not None,
        "position": position,
        "origin": segment.origin.value,
        "written_by_run": mine,
        "base_offset": segment.base_offset,
        "next_offset": segment.next_offset,
        "previous_base_offset": None if previous is None else previous.base_offset,
        "previous_next_offset": None if previous is None else previous.next_offset,
        "compaction_status": change.claim.status,
        "end_offset": change.claim.end_offset,
        "replaced_at_base": replaced_at.get(segment.base_offset) if mine else None,
    }


def _described(retired: Sequence[RetiredObject], log: Sequence[SegmentEntry]) -> list[SegmentEntry]:
    """The entries of ``log`` the retired objects name (keys not in ``log`` are left out)."""
    keys = {item.key for item in retired}
    return [segment for segment in log if segment.key in keys]
