"""Adoption: segments with Kafka's plain names that no manifest knows join the lake at the start of a run. The
rules are docs/lake.md, "Adoption" (Kafka's ``UnifiedLog`` / ``LogLoader`` for loading a log).

Steps: the listing (``adoption_listing``; nothing is deleted), reading and summarizing every plain ``.log`` no
key of the base manifest names (``adoption_reads``), placing them (``adoption_placing``: appended at or after
the log end offset, ignored when wholly below the log start offset, else ``SegmentOverlapError`` quarantines
the partition). An ignored object stays unknown, so every run reads it again. A live object missing or changed
quarantines its partition, except the same bytes under another etag (a copied lake) and a regrown last segment
(re-adopted whole, settled before the candidates are placed). A run that changes nothing reads no segment body
(size and etag are compared with the manifest).

Bootstrap: a malformed root checkpoint file fails with ``CheckpointFileError`` (a reset would resurrect
records a deleteRecords removed); a log start offset above the log end offset quarantines the partition
(``OffsetOutOfRangeError``) where ``LogLoader`` would delete every segment (on a lake, likely an unfinished
upload).

``adopt_objects`` only reads; ``adopt`` (``adopt_run``) commits it as a run of its own; ``adoption_report``
holds the result types and the report. A bootstrap in format 2 settles the same ``PartitionPlan`` one
partition at a time instead (``lake.bootstrap``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafka_segments.lake.adoption_listing import ClassifiedListing, PlainSegment, classify_listing
from kafka_segments.lake.adoption_placing import PartitionLog
from kafka_segments.lake.adoption_reads import (
    ReadJob,
    ReadResult,
    changed_live_object,
    missing_live_object,
    read_all,
)
from kafka_segments.lake.adoption_report import AdoptionResult, Ignored, Quarantine
from kafka_segments.lake.checkpoint_files import BootstrapCheckpoints, read_bootstrap_checkpoints
from kafka_segments.lake.layout import (
    CLEANER_OFFSET_CHECKPOINT_KEY,
    LOG_START_OFFSET_CHECKPOINT_KEY,
    index_keys,
)
from kafka_segments.lake.runs import RunRecord
from kafka_segments.state import Manifest, PartitionState, SegmentEntry, SegmentOrigin, sort_partitions
from kafka_segments.storage.base import ObjectMeta, ObjectStore
from kafka_segments.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_segments.records.fast import HeaderTable

SegmentReader = Callable[[Sequence[ReadJob]], Iterable[ReadResult]]
"""Reads a run's adoption jobs (e.g. on Spark executors) and returns their results."""

__all__ = ["AdoptionResult", "Ignored", "Quarantine", "adopt_objects"]

DEFAULT_MAX_WORKERS = 8


@dataclass(slots=True)
class PartitionPlan:
    """One partition's part of an adoption: what to read, and what was found."""

    topic_partition: TopicPartition
    base: PartitionState | None
    candidates: list[PlainSegment]
    live_jobs: list[ReadJob] = field(default_factory=list)
    problems: list[Quarantine] = field(default_factory=list)

    def jobs(self, listed: Collection[str]) -> list[ReadJob]:
        """The reads this partition needs (none once it is quarantined); ``listed``: the listing's keys."""
        if self.problems:
            return []
        candidates = [
            ReadJob(self.topic_partition, c.meta, c.base_offset, listed_indexes=listed_indexes(c.key, listed))
            for c in self.candidates
        ]
        return [*self.live_jobs, *candidates]


def listed_indexes(log_key: str, listed: Collection[str]) -> frozenset[str]:
    """The index objects beside ``log_key`` that ``listed`` holds."""
    return frozenset(key for key in index_keys(log_key) if key in listed)


@dataclass(slots=True)
class PartitionOutcome:
    """How one partition came out of adoption."""

    state: PartitionState | None
    adopted: list[SegmentEntry] = field(default_factory=list)
    regrown: list[SegmentEntry] = field(default_factory=list)
    problems: list[Quarantine] = field(default_factory=list)
    ignored: list[Ignored] = field(default_factory=list)


def adopt_objects(
    store: ObjectStore,
    *,
    base: Manifest | None,
    run: RunRecord,
    listing: Sequence[ObjectMeta] | None = None,
    max_workers: int = DEFAULT_MAX_WORKERS,
    reader: SegmentReader | None = None,
    leave: frozenset[TopicPartition] = frozenset(),
) -> AdoptionResult:
    """What adopting the lake's unknown plain segments on top of ``base`` gives (reads only, writes nothing).

    Args:
        base: the run's base manifest (``None``: bootstrap from a lake without a manifest).
        run: the adopting run (its id goes into every new entry and changed partition).
        listing: the lake's listing (default: ``store.list()``).
        max_workers: threads reading objects in parallel.
        reader: runs the read jobs instead of the local threads (the Spark engine fans them out to its
            executors); it must return one ``ReadResult`` per job, as ``read_one`` makes them.
        leave: partitions ``base`` leaves out on purpose (a run that reads only the partitions it may
            change, ``LakeTransaction.narrow``): their listed objects are not looked at, they stay as the
            committed version has them.

    Raises:
        CheckpointFileError: bootstrap only: a root checkpoint file is malformed (names the object and line).
        ObjectStoreError: the listing or a read failed (other than an object that disappeared).
        ValueError: ``max_workers`` < 1, or ``base`` is not the run's base version.
    """
    base_version = None if base is None else base.version
    if base_version != run.base_version:
        raise ValueError(f"base manifest version {base_version} is not run {run.run_id}'s {run.base_version}")
    classified = classify_listing(store.list() if listing is None else listing)
    checkpoints = read_bootstrap_checkpoints(store) if base is None else None
    partitions = [part for part in _plan(classified, base) if part.topic_partition not in leave]
    jobs = [job for part in partitions for job in part.jobs(classified.objects)]
    if reader is None:
        reads = read_all(store, run, jobs, max_workers=max_workers)
    else:
        reads = {result.key: result for result in reader(jobs)}
    outcomes = {part.topic_partition: settle_partition(part, reads, run, checkpoints) for part in partitions}
    ignored = list(classified.ignored)
    for outcome in outcomes.values():
        ignored.extend(outcome.ignored)
    if checkpoints is not None:
        adopted = {tp for tp, outcome in outcomes.items() if outcome.state is not None}
        quarantined = {tp for tp, outcome in outcomes.items() if outcome.problems}
        ignored.extend(unused_checkpoint_entries(checkpoints, adopted=adopted, quarantined=quarantined))
    return AdoptionResult(
        partitions=sort_partitions([o.state for o in outcomes.values() if o.state is not None]),
        adopted=tuple(entry for tp in sorted(outcomes) for entry in outcomes[tp].adopted),
        regrown=tuple(entry for tp in sorted(outcomes) for entry in outcomes[tp].regrown),
        quarantined=tuple(item for tp in sorted(outcomes) for item in outcomes[tp].problems),
        ignored=tuple(sorted(ignored, key=lambda item: item.key)),
        present_keys=classified.present_keys,
        bytes_read=sum(read.bytes_read for read in reads.values()),
    )


# ------------------------------------------------------------------------------------------------ planning


def _plan(classified: ClassifiedListing, base: Manifest | None) -> list[PartitionPlan]:
    """Per partition (base ∪ listed): the live objects to check or re-read, and the candidates."""
    base_states = base.partition_map() if base is not None else {}
    known = set(base.live_keys()) if base is not None else set()
    known.update(retired.key for retired in (base.retired if base is not None else ()))
    partitions = []
    for tp in sorted(set(base_states) | set(classified.segments)):
        state = base_states.get(tp)
        candidates = [seg for seg in classified.segments.get(tp, ()) if seg.key not in known]
        part = PartitionPlan(tp, state, candidates)
        if state is not None:
            _check_live(part, state, classified.objects)
        partitions.append(part)
    return partitions


def _check_live(part: PartitionPlan, state: PartitionState, objects: dict[str, ObjectMeta]) -> None:
    """Compare each live segment with the listing: unchanged, to re-read, or a problem."""
    last = len(state.segments) - 1
    for index, entry in enumerate(state.segments):
        meta = objects.get(entry.key)
        if meta is None:
            part.problems.append(missing_live_object(part.topic_partition, entry))
        elif meta.size == entry.size and meta.etag == entry.etag:
            continue
        elif meta.size == entry.size or (
            meta.size > entry.size and index == last and entry.origin is SegmentOrigin.ADOPTED
        ):
            indexes = listed_indexes(meta.key, objects)
            part.live_jobs.append(
                ReadJob(part.topic_partition, meta, entry.base_offset, live=entry, listed_indexes=indexes)
            )
        else:
            part.problems.append(changed_live_object(part.topic_partition, entry, meta))


# ------------------------------------------------------------------------------------------------ settling


def settle_partition(
    part: PartitionPlan,
    reads: dict[str, ReadResult],
    run: RunRecord,
    checkpoints: BootstrapCheckpoints | None,
) -> PartitionOutcome:
    """The partition's new state, or its base state with the reasons it is quarantined."""
    kept = PartitionOutcome(part.base)
    if part.problems:
        kept.problems = part.problems
        return kept
    live = [reads[job.key] for job in part.live_jobs]
    candidates = [reads[seg.key] for seg in part.candidates]
    kept.ignored = [read.ignored for read in candidates if read.ignored is not None]
    kept.problems = [read.problem for read in (*live, *candidates) if read.problem is not None]
    if kept.problems:
        return kept
    regrown = _scanned(live)
    scanned = _scanned(candidates)
    if part.base is not None:
        log = PartitionLog.of_state(part.base)
    elif scanned:
        log = PartitionLog.empty_at(part.topic_partition, scanned[0][0].base_offset)
    else:
        return kept
    adopted, problem = log.grow(regrown, scanned, kept.ignored)
    if problem is None and checkpoints is not None:
        problem = log.apply_checkpoint(checkpoints.log_start_offsets.get(part.topic_partition))
    if problem is not None:
        kept.problems = [problem]
        return kept
    if not adopted and not regrown:
        return kept
    if part.base is not None:
        cleaner = part.base.cleaner_checkpoint
    else:
        cleaner = None if checkpoints is None else checkpoints.cleaner_offsets.get(part.topic_partition)
    state = log.to_state(cleaner_checkpoint=cleaner, run_id=run.run_id)
    return PartitionOutcome(state, adopted, [entry for entry, _ in regrown], [], kept.ignored)


def _scanned(reads: list[ReadResult]) -> list[tuple[SegmentEntry, HeaderTable]]:
    """The entries (with their batch tables) of the reads that produced one."""
    return [(read.entry, read.table) for read in reads if read.entry is not None and read.table is not None]


def unused_checkpoint_entries(
    checkpoints: BootstrapCheckpoints,
    *,
    adopted: Collection[TopicPartition],
    quarantined: Collection[TopicPartition],
) -> list[Ignored]:
    """Bootstrap checkpoint entries of partitions that were not ``adopted`` (no segments, or
    ``quarantined``)."""
    unused = []
    for key, entries in (
        (LOG_START_OFFSET_CHECKPOINT_KEY, checkpoints.log_start_offsets),
        (CLEANER_OFFSET_CHECKPOINT_KEY, checkpoints.cleaner_offsets),
    ):
        for tp, offset in sorted(entries.items()):
            if tp in adopted:
                continue
            why = (
                "the partition is quarantined"
                if tp in quarantined
                else "the partition has no segments to adopt"
            )
            unused.append(
                Ignored(
                    key,
                    f"entry {tp} {offset} not applied: {why}; the first commit rewrites this file from the "
                    "manifest, so apply the offset later (delete-records for a log start offset)",
                )
            )
    return unused
