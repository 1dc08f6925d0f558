"""``describe``: what the lake's committed state holds, per partition, from the manifest alone (one GET).

With a configuration and a time, a compacted topic's partitions also get what Kafka's cleaner would see at
``now`` (``LogCleanerManager.cleanableOffsets``, ``maxCompactionDelay``; KIP-354; ``COMPACTION_KEYS``).
``to_dict`` is the stable form behind ``--json``: keys are only ever added. Segments uploaded since the
last commit are not counted."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_segments.compaction.eligibility import UNLIMITED, CompactionBudget
from kafka_segments.errors import PartitionNotFoundError
from kafka_segments.lake.reader import resolve_root
from kafka_segments.lake.roots import VersionRoot
from kafka_segments.state import Manifest, PartitionState, PartitionSummary, summarize
from kafka_segments.storage.base import ObjectStore
from kafka_segments.timefmt import iso_utc
from kafka_segments.topic_partition import TopicPartition
from kafka_segments.views.describe_compaction import (
    COMPACTION_KEYS,
    CompactionContext,
    CompactionOutlook,
    compaction_outlooks,
)

EMPTY_CELL = "-"


@dataclass(frozen=True, slots=True)
class PartitionDescription:
    """One partition's committed state, summarized.

    ``record_count`` and ``size_bytes`` count the live segments whole (records below the log start offset
    in the first segment included, as Kafka's segment sizes do). The largest-timestamp range is the minimum
    and maximum of the segments' ``largestTimestamp`` (the largest batch timestamp, else the object's
    last-modified time when adopted): what time-based retention compares with ``now``."""

    topic: str
    partition: int
    log_start_offset: int
    log_end_offset: int
    segment_count: int
    size_bytes: int
    record_count: int
    largest_timestamp_min_ms: int | None
    largest_timestamp_max_ms: int | None
    cleaner_checkpoint: int | None
    last_stable_offset: int
    open_transactions: int
    run_id: str
    compaction: CompactionOutlook | None = None
    """``None`` for a topic that is not compacted, or when described without a configuration."""

    @classmethod
    def of(cls, state: PartitionState, compaction: CompactionOutlook | None = None) -> PartitionDescription:
        return cls.of_summary(state.topic_partition, summarize(state), compaction)

    @classmethod
    def of_summary(
        cls,
        topic_partition: TopicPartition,
        summary: PartitionSummary,
        compaction: CompactionOutlook | None = None,
    ) -> PartitionDescription:
        """From a root's summary alone (``summary.describes``)."""
        if summary.record_count is None or summary.run_id is None:
            raise ValueError(f"the summary of {topic_partition} predates what describe shows")
        return cls(
            topic=topic_partition.topic,
            partition=topic_partition.partition,
            log_start_offset=summary.log_start_offset,
            log_end_offset=summary.log_end_offset,
            segment_count=summary.segments,
            size_bytes=summary.bytes,
            record_count=summary.record_count,
            largest_timestamp_min_ms=summary.largest_timestamp_min_ms,
            largest_timestamp_max_ms=summary.largest_timestamp_max_ms,
            cleaner_checkpoint=summary.cleaner_checkpoint,
            last_stable_offset=summary.log_end_offset
            if summary.last_stable_offset is None
            else summary.last_stable_offset,
            open_transactions=summary.open_transactions or 0,
            run_id=summary.run_id,
            compaction=compaction,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "log_start_offset": self.log_start_offset,
            "log_end_offset": self.log_end_offset,
            "segment_count": self.segment_count,
            "size_bytes": self.size_bytes,
            "record_count": self.record_count,
            "largest_timestamp_min_ms": self.largest_timestamp_min_ms,
            "largest_timestamp_min": iso_utc(self.largest_timestamp_min_ms),
            "largest_timestamp_max_ms": self.largest_timestamp_max_ms,
            "largest_timestamp_max": iso_utc(self.largest_timestamp_max_ms),
            "cleaner_checkpoint": self.cleaner_checkpoint,
            "last_stable_offset": self.last_stable_offset,
            "open_transactions": self.open_transactions,
            "run_id": self.run_id,
            **self._compaction_dict(),
        }

    def _compaction_dict(self) -> dict[str, Any]:
        outlook = self.compaction
        if outlook is None:
            return dict.fromkeys(COMPACTION_KEYS)
        return {
            "first_dirty_offset": outlook.first_dirty_offset,
            "first_uncleanable_offset": outlook.first_uncleanable_offset,
            "dirty_ratio": outlook.dirty_ratio,
            "compaction_delay_ms": outlook.compaction_delay_ms,
            "compaction_eligibility": outlook.eligibility.value,
            "compaction_next_run": outlook.next_run.value,
        }


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the text table: its header, its cell, and whether it is numeric (right-aligned)."""

    header: str
    cell: Callable[[PartitionDescription], object]
    numeric: bool = True


COLUMNS: tuple[Column, ...] = (
    Column("TOPIC", lambda p: p.topic, numeric=False),
    Column("PARTITION", lambda p: p.partition),
    Column("LOG-START-OFFSET", lambda p: p.log_start_offset),
    Column("LOG-END-OFFSET", lambda p: p.log_end_offset),
    Column("SEGMENTS", lambda p: p.segment_count),
    Column("BYTES", lambda p: p.size_bytes),
    Column("RECORDS", lambda p: p.record_count),
    Column("LARGEST-TS-MIN", lambda p: iso_utc(p.largest_timestamp_min_ms), numeric=False),
    Column("LARGEST-TS-MAX", lambda p: iso_utc(p.largest_timestamp_max_ms), numeric=False),
    Column("CLEANER-CHECKPOINT", lambda p: p.cleaner_checkpoint),
    Column("LAST-STABLE-OFFSET", lambda p: p.last_stable_offset),
    Column("OPEN-TXNS", lambda p: p.open_transactions),
    Column("CHANGED-BY-RUN", lambda p: p.run_id, numeric=False),
)
"""The table's columns, in order; later issues append theirs (see the module docstring)."""


def _outlook_cell(read: Callable[[CompactionOutlook], object]) -> Callable[[PartitionDescription], object]:
    return lambda p: None if p.compaction is None else read(p.compaction)


COMPACTION_COLUMNS: tuple[Column, ...] = (
    Column("TOPIC", lambda p: p.topic, numeric=False),
    Column("PARTITION", lambda p: p.partition),
    Column("FIRST-DIRTY-OFFSET", _outlook_cell(lambda o: o.first_dirty_offset)),
    Column("FIRST-UNCLEANABLE-OFFSET", _outlook_cell(lambda o: o.first_uncleanable_offset)),
    Column("DIRTY-RATIO", _outlook_cell(lambda o: f"{o.dirty_ratio:.4f}")),
    Column("COMPACTION-DELAY-MS", _outlook_cell(lambda o: o.compaction_delay_ms)),
    Column("ELIGIBILITY", _outlook_cell(lambda o: o.eligibility.value), numeric=False),
    Column("NEXT-RUN", _outlook_cell(lambda o: o.next_run.value), numeric=False),
)
"""The compaction table's columns (shown after the summary line when described with a configuration)."""


@dataclass(frozen=True, slots=True)
class LakeDescription:
    """The committed state at one manifest version, per partition (in topic, partition order)."""

    location: str
    version: int
    run_id: str
    operation: str
    committed_at_ms: int
    partitions: tuple[PartitionDescription, ...]
    compaction_now_ms: int | None = None
    """The time of the compaction view; ``None`` when described without a configuration."""
    compaction_budget: CompactionBudget = UNLIMITED

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(sorted({p.topic for p in self.partitions}))

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document; its keys (stable: later releases only add keys) are listed in
        docs/lake.md, "Describe"."""
        return {
            "lake": self.location,
            "version": self.version,
            "run_id": self.run_id,
            "operation": self.operation,
            "committed_at_ms": self.committed_at_ms,
            "committed_at": iso_utc(self.committed_at_ms),
            "partitions": [p.to_dict() for p in self.partitions],
            "totals": self.totals(),
        }

    def totals(self) -> dict[str, int]:
        """Topics, partitions, segments, bytes and records over the partitions described."""
        return {
            "topics": len(self.topics),
            "partitions": len(self.partitions),
            "segments": sum(p.segment_count for p in self.partitions),
            "size_bytes": sum(p.size_bytes for p in self.partitions),
            "record_count": sum(p.record_count for p in self.partitions),
        }

    def to_text(self) -> str:
        """An aligned table (a header row, one row per partition) and a summary line."""
        lines = [*_table(COLUMNS, self.partitions), self._summary()]
        if self.compaction_now_ms is not None:
            lines.extend(self._compaction_table(self.compaction_now_ms))
        return "\n".join(lines) + "\n"

    def _compaction_table(self, now_ms: int) -> list[str]:
        """A blank line, a heading with the time (and the budget when limited), and one row per partition."""
        budget = self.compaction_budget
        limits = f"; budget per run: {budget.max_bytes} bytes, {budget.max_partitions} partitions (-1: none)"
        heading = f"compaction at now={now_ms} ({iso_utc(now_ms) or '-'}){'' if budget.unlimited else limits}"
        return ["", heading, *_table(COMPACTION_COLUMNS, self.partitions)]

    def _summary(self) -> str:
        totals = self.totals()
        return (
            f"{totals['partitions']} partition(s) of {totals['topics']} topic(s), {totals['segments']} "
            f"segment(s), {totals['size_bytes']} bytes, {totals['record_count']} records; "
            f"{self.location} at version {self.version} ({self.operation}, run {self.run_id}, "
            f"committed {iso_utc(self.committed_at_ms) or self.committed_at_ms})"
        )


def _table(columns: Sequence[Column], partitions: Sequence[PartitionDescription]) -> list[str]:
    rows = [[_cell(column.cell(p)) for column in columns] for p in partitions]
    return _align([[column.header for column in columns], *rows], [c.numeric for c in columns])


def _cell(value: object) -> str:
    return EMPTY_CELL if value is None else str(value)


def _align(rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(numeric))]
    return [
        "  ".join(
            cell.rjust(width) if is_numeric else cell.ljust(width)
            for cell, width, is_numeric in zip(row, widths, numeric, strict=True)
        ).rstrip()
        for row in rows
    ]


def describe_lake(
    store: ObjectStore,
    *,
    version: int | None = None,
    topics: Iterable[str] | None = None,
    compaction: CompactionContext | None = None,
) -> LakeDescription:
    """Describe the committed state at ``version`` (the head when ``None``), optionally only ``topics``;
    with ``compaction``, each compacted partition's outlook at its time (see the module docstring).

    Raises:
        NoCommittedStateError, ManifestVersionNotFoundError: see ``reader.resolve_manifest``.
        PartitionNotFoundError: a topic of ``topics`` is not in the manifest.
    """
    root = resolve_root(store, version)
    if compaction is None:
        return describe_root(root, location=store.describe(), topics=topics)
    manifest = topics_manifest(root, topics, location=store.describe())
    return describe_manifest(manifest, location=store.describe(), topics=topics, compaction=compaction)


def describe_root(
    root: VersionRoot, *, location: str, topics: Iterable[str] | None = None
) -> LakeDescription:
    """``describe_lake`` without a compaction outlook, from the version's root: its summaries when they
    hold what describe shows (no partition is read), else the partitions of ``topics``.

    Raises:
        PartitionNotFoundError: a topic of ``topics`` is not in the version.
    """
    wanted = None if topics is None else set(topics)
    if wanted is not None:
        _check_topics(wanted, root.topics, version=root.version, location=location)
    chosen = [p for p in root.partitions if wanted is None or p.topic_partition.topic in wanted]
    if not all(p.summary.describes for p in chosen):
        return describe_manifest(topics_manifest(root, topics, location=location), location=location)
    return LakeDescription(
        location=location,
        version=root.version,
        run_id=root.run_id,
        operation=root.header.operation,
        committed_at_ms=root.committed_at_ms,
        partitions=tuple(PartitionDescription.of_summary(p.topic_partition, p.summary) for p in chosen),
        compaction_now_ms=None,
        compaction_budget=UNLIMITED,
    )


def topics_manifest(root: VersionRoot, topics: Iterable[str] | None, *, location: str) -> Manifest:
    """The version with the partitions of ``topics`` (every partition when ``None``), reading no other
    partition's pieces: what a description of those topics needs.

    Raises:
        PartitionNotFoundError: a topic of ``topics`` is not in the version.
    """
    if topics is None:
        return root.manifest()
    wanted = set(topics)
    _check_topics(wanted, root.topics, version=root.version, location=location)
    return root.manifest(lambda tp: tp.topic in wanted)


def _check_topics(wanted: set[str], known: Sequence[str], *, version: int, location: str) -> None:
    unknown = sorted(wanted - set(known))
    if unknown:
        raise PartitionNotFoundError(
            f"topic(s) {', '.join(unknown)} not in manifest version {version} "
            f"(topics: {', '.join(known) or '(none)'})",
            location=location,
        )


def describe_manifest(
    manifest: Manifest,
    *,
    location: str,
    topics: Iterable[str] | None = None,
    compaction: CompactionContext | None = None,
) -> LakeDescription:
    """``describe_lake`` for a manifest already read.

    Raises:
        PartitionNotFoundError: a topic of ``topics`` is not in the manifest.
    """
    wanted = None if topics is None else set(topics)
    if wanted is not None:
        _check_topics(wanted, manifest.topics, version=manifest.version, location=location)
    states = [s for s in manifest.partitions if wanted is None or s.topic_partition.topic in wanted]
    outlooks = {} if compaction is None else compaction_outlooks(states, compaction)
    return LakeDescription(
        location=location,
        version=manifest.version,
        run_id=manifest.run_id,
        operation=manifest.operation,
        committed_at_ms=manifest.committed_at_ms,
        partitions=tuple(PartitionDescription.of(s, outlooks.get(s.topic_partition)) for s in states),
        compaction_now_ms=None if compaction is None else compaction.now_ms,
        compaction_budget=UNLIMITED if compaction is None else compaction.budget,
    )
