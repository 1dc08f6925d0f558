"""What adoption found and did: quarantines, ignored objects, the adoption result and the ``adopt`` report
(``to_dict`` for ``--json``, ``to_text`` for people)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from kafka_segments.lake.layout import parse_segment_key
from kafka_segments.state import PartitionState, SegmentEntry
from kafka_segments.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class Quarantine:
    """A partition left unchanged for this run, and why."""

    topic_partition: TopicPartition
    key: str
    """The object at fault (a checkpoint file's key when the checkpoint is the problem)."""
    position: int | None
    """Byte position of the damage in the object, when known."""
    reason: str
    """One sentence: what is wrong and what the user can do."""
    error: str
    """The error class name: ``InvalidCrcError``, ``SegmentOverlapError``, ``SegmentObjectMismatchError`` …"""


@dataclass(frozen=True, slots=True)
class Ignored:
    """An object adoption did not take, without quarantining anything (``key`` ends with ``/`` for a whole
    folder that is not a partition folder)."""

    key: str
    reason: str


@dataclass(frozen=True, slots=True)
class AdoptionResult:
    """What ``adopt_objects`` found: the complete new partition list and what changed in it."""

    partitions: tuple[PartitionState, ...]
    """Every partition of the new state (unchanged ones included), in manifest order."""
    adopted: tuple[SegmentEntry, ...]
    """Newly adopted segments, by partition then base offset."""
    regrown: tuple[SegmentEntry, ...]
    """Re-adopted active segments that grew (their new entries)."""
    quarantined: tuple[Quarantine, ...]
    ignored: tuple[Ignored, ...]
    present_keys: frozenset[str]
    """Every key the listing found (for ``build_manifest(present_keys=...)``)."""
    bytes_read: int
    """Segment bytes read from the store."""

    @property
    def changed(self) -> bool:
        """Whether there is anything to commit."""
        return bool(self.adopted or self.regrown)


@dataclass(frozen=True, slots=True)
class AdoptionReport:
    """The result of the standalone ``adopt`` operation."""

    run_id: str
    base_version: int | None
    committed_version: int | None
    """The version the run committed; ``None`` when there was nothing to adopt."""
    result: AdoptionResult

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data."""
        result = self.result
        touched = _touched_partitions(result)
        return {
            "run_id": self.run_id,
            "operation": "adopt",
            "base_version": self.base_version,
            "committed_version": self.committed_version,
            "changed": result.changed,
            "bytes_read": result.bytes_read,
            "adopted": [segment_dict(entry) for entry in result.adopted],
            "regrown": [segment_dict(entry) for entry in result.regrown],
            "quarantined": [quarantine_dict(item) for item in result.quarantined],
            "ignored": [ignored_dict(item) for item in result.ignored],
            "partitions": [
                partition_dict(state) for state in result.partitions if state.topic_partition in touched
            ],
        }

    def to_text(self) -> str:
        """A person-readable report."""
        lines = [self._headline()]
        result = self.result
        adopted = _by_partition(result.adopted)
        regrown = _by_partition(result.regrown)
        quarantined: defaultdict[TopicPartition, list[Quarantine]] = defaultdict(list)
        for item in result.quarantined:
            quarantined[item.topic_partition].append(item)
        states = {state.topic_partition: state for state in result.partitions}
        for tp in sorted(set(adopted) | set(regrown) | set(quarantined)):
            if tp in quarantined:
                lines.extend(quarantine_lines(tp, quarantined[tp], states.get(tp)))
            else:
                lines.extend(partition_lines(states[tp], adopted.get(tp, []), regrown.get(tp, [])))
        lines.extend(ignored_lines(result.ignored))
        return "\n".join(lines) + "\n"

    @property
    def quarantined(self) -> tuple[Quarantine, ...]:
        return self.result.quarantined

    def write_json(self, out: TextIO, *, extra: Mapping[str, object]) -> None:
        """``to_dict`` with ``extra``'s fields after its own, as ``cli.output.print_json`` writes it (without
        the final newline)."""
        json.dump({**self.to_dict(), **extra}, out, indent=2, ensure_ascii=False)

    def write_text(self, out: TextIO) -> None:
        out.write(self.to_text())

    def _headline(self) -> str:
        result = self.result
        return headline(
            self.run_id,
            self.base_version,
            self.committed_version,
            adopted=len(result.adopted),
            regrown=len(result.regrown),
            quarantined=len(result.quarantined),
            ignored=len(result.ignored),
            bytes_read=result.bytes_read,
        )


def headline(
    run_id: str,
    base_version: int | None,
    committed_version: int | None,
    *,
    adopted: int,
    regrown: int,
    quarantined: int,
    ignored: int,
    bytes_read: int,
) -> str:
    """The first line of an ``adopt`` report."""
    base = "no manifest yet" if base_version is None else f"base version {base_version}"
    if committed_version is None:
        outcome = "nothing to adopt, nothing committed"
    else:
        outcome = f"committed version {committed_version}"
    return (
        f"adopt run {run_id} ({base}): {outcome}; {adopted} segment(s) adopted, "
        f"{regrown} regrown, {quarantined} quarantine(s), "
        f"{ignored} object(s) left alone, {bytes_read} segment bytes read"
    )


def ignored_lines(ignored: Sequence[Ignored]) -> list[str]:
    """The report's lines for the objects left alone (none without any)."""
    if not ignored:
        return []
    return [f"left alone ({len(ignored)}):", *(f"  - {item.key}: {item.reason}" for item in ignored)]


def ignored_dict(item: Ignored) -> dict[str, str]:
    return {"key": item.key, "reason": item.reason}


def topic_partition_of(entry: SegmentEntry) -> TopicPartition:
    """The partition a segment entry belongs to (from its key)."""
    return parse_segment_key(entry.key).topic_partition


def _touched_partitions(result: AdoptionResult) -> set[TopicPartition]:
    touched = {item.topic_partition for item in result.quarantined}
    touched.update(topic_partition_of(entry) for entry in (*result.adopted, *result.regrown))
    return touched


def _by_partition(entries: tuple[SegmentEntry, ...]) -> dict[TopicPartition, list[SegmentEntry]]:
    grouped: defaultdict[TopicPartition, list[SegmentEntry]] = defaultdict(list)
    for entry in entries:
        grouped[topic_partition_of(entry)].append(entry)
    return dict(grouped)


def _offsets(entry: SegmentEntry) -> str:
    if entry.last_offset is None:
        return f"empty at offset {entry.base_offset}"
    return f"offsets [{entry.base_offset}, {entry.last_offset}]"


def partition_lines(
    state: PartitionState, adopted: list[SegmentEntry], regrown: list[SegmentEntry]
) -> list[str]:
    lines = [
        f"{state.topic_partition}: {len(adopted)} adopted, {len(regrown)} regrown; log start "
        f"{state.log_start_offset}, log end {state.log_end_offset}, last stable {state.last_stable_offset}, "
        f"{len(state.segments)} live segment(s)"
    ]
    for mark, entries in (("+", adopted), ("~", regrown)):
        lines.extend(
            f"  {mark} {entry.key}: {_offsets(entry)}, {entry.record_count} record(s) in "
            f"{entry.batch_count} batch(es), {entry.size} bytes"
            for entry in entries
        )
    return lines


def quarantine_lines(tp: TopicPartition, items: list[Quarantine], state: PartitionState | None) -> list[str]:
    kept = (
        "not adopted"
        if state is None
        else f"kept as committed (log start {state.log_start_offset}, log end {state.log_end_offset})"
    )
    lines = [f"{tp}: QUARANTINED, {kept}"]
    for item in items:
        where = item.key if item.position is None else f"{item.key} at byte {item.position}"
        lines.append(f"  ! {where}: {item.error}: {item.reason}")
    return lines


def segment_dict(entry: SegmentEntry) -> dict[str, Any]:
    tp = topic_partition_of(entry)
    return {
        "topic": tp.topic,
        "partition": tp.partition,
        "key": entry.key,
        "base_offset": entry.base_offset,
        "last_offset": entry.last_offset,
        "next_offset": entry.next_offset,
        "size": entry.size,
        "record_count": entry.record_count,
        "batch_count": entry.batch_count,
        "max_timestamp_ms": entry.max_timestamp_ms,
    }


def quarantine_dict(item: Quarantine) -> dict[str, Any]:
    return {
        "topic": item.topic_partition.topic,
        "partition": item.topic_partition.partition,
        "key": item.key,
        "position": item.position,
        "error": item.error,
        "reason": item.reason,
    }


def partition_dict(state: PartitionState) -> dict[str, Any]:
    return {
        "topic": state.topic_partition.topic,
        "partition": state.topic_partition.partition,
        "log_start_offset": state.log_start_offset,
        "log_end_offset": state.log_end_offset,
        "last_stable_offset": state.last_stable_offset,
        "cleaner_checkpoint": state.cleaner_checkpoint,
        "segments": len(state.segments),
        "size_bytes": state.size_bytes,
    }
