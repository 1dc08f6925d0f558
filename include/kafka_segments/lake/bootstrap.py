"""The bootstrap of a lake in manifest format 2, streamed partition by partition (docs/metadata-format-2.md,
"Adoption without listing the lake"; issue 33 point 3).

A lake without a version must read every segment once. Adoption (``lake.adoption``) holds every partition's
entries until the commit; this bootstrap settles one partition at a time instead: its segments are read
(``adoption_reads.read_grouped``: the same jobs, reads and verdicts, a few jobs ahead), it is placed with the
bootstrap checkpoint files (``adoption.settle_partition``), its chunks and partition manifest are written
(content-addressed, create-if-absent: ``format2.write_partition``) and its report lines go to a temporary
file (``bootstrap_report``); only its root line stays in memory. The root is the one conditional PUT at the
end (``LakeTransaction.commit_root``: the conflict and unknown-state rules of every commit). A crash before
it leaves pieces named with the run's id that no version references: ``recover`` and ``gc`` sweep them once
the run can no longer commit.

What it holds: the lake's listing (sorted out by ``classify_listing``; each partition's segments are dropped
once it is settled), one root line per adopted partition (~1 KB) and the partition being settled (plus the
reads ahead). The same ignored objects, quarantines and report as ``adopt_objects`` then ``upgrade``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from kafka_segments.lake.adoption import PartitionPlan, settle_partition, unused_checkpoint_entries
from kafka_segments.lake.adoption_listing import classify_listing
from kafka_segments.lake.adoption_reads import ReadJob, read_grouped
from kafka_segments.lake.adoption_report import Ignored, Quarantine
from kafka_segments.lake.bootstrap_report import BootstrapReport, ReportSpool
from kafka_segments.lake.checkpoint_files import read_bootstrap_checkpoints
from kafka_segments.lake.format2 import root_bytes, write_partition
from kafka_segments.lake.layout import INDEX_KINDS
from kafka_segments.lake.roots import read_root
from kafka_segments.lake.runs import RunOutcome
from kafka_segments.lake.transaction import LakeTransaction
from kafka_segments.state import MANIFEST_FORMAT_2, PartitionState
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition

_INDEX_SUFFIXES = tuple(kind.value for kind in INDEX_KINDS)


def bootstrap(txn: LakeTransaction, *, max_workers: int, unchanged_reason: str) -> BootstrapReport:
    """Adopt every segment of a lake without a version into version 1 in format 2, streamed (see the module
    docstring), and commit it; with nothing to adopt the run ends with ``unchanged_reason``.

    Raises:
        CheckpointFileError: a root checkpoint file is malformed (the run is aborted).
        CommitConflictError: another run committed first; nothing of this run is visible, adopt again.
        CommitStateUnknownError: the commit's outcome is unknown; ``recover`` settles it.
        ObjectStoreError: the store failed.
        ValueError: the run has a base version (only a bootstrap streams).
    """
    if txn.run.base_version is not None:
        raise ValueError(f"run {txn.run_id} builds on version {txn.run.base_version}: not a bootstrap")
    spool = ReportSpool()
    with txn:
        streamed = _Streamed(txn, spool)
        streamed.settle_all(max_workers=max_workers)
        header = txn.proposed((), format_version=MANIFEST_FORMAT_2)
        lines = streamed.lines
        if lines:
            outcome = txn.commit_root(lambda at_ms: root_bytes(replace(header, committed_at_ms=at_ms), lines))
        else:
            outcome = txn.commit(unchanged_reason=unchanged_reason)
    if outcome is RunOutcome.LOST and txn.lost_to is not None:
        raise txn.lost_to
    store, version = txn.store, txn.committed_version
    return BootstrapReport(
        run_id=txn.run_id,
        committed_version=version,
        adopted_segments=streamed.adopted_segments,
        quarantined=tuple(streamed.quarantined),
        ignored=tuple(sorted(streamed.ignored, key=lambda item: item.key)),
        bytes_read=streamed.bytes_read,
        spool=spool,
        read_partitions=lambda: _committed_partitions(store, version),
    )


def _committed_partitions(store: ObjectStore, version: int | None) -> tuple[PartitionState, ...]:
    return () if version is None else read_root(store, version).load()


class _Streamed:
    """The bootstrap's running totals: one partition is settled at a time."""

    def __init__(self, txn: LakeTransaction, spool: ReportSpool) -> None:
        self._txn = txn
        self._spool = spool
        self.lines: list[dict[str, Any]] = []
        self.adopted_segments = 0
        self.bytes_read = 0
        self.quarantined: list[Quarantine] = []
        self.ignored: list[Ignored] = []

    def settle_all(self, *, max_workers: int) -> None:
        store, run = self._txn.store, self._txn.run
        classified = classify_listing(store.list())
        checkpoints = read_bootstrap_checkpoints(store)
        self.ignored.extend(classified.ignored)
        segments = classified.segments
        indexes = _listed_indexes(classified.objects)
        del classified  # the listing's other views: what is left is each partition's segments and indexes
        items = sum(len(found) for found in segments.values())
        nbytes = sum(seg.meta.size for found in segments.values() for seg in found)
        adopted: set[TopicPartition] = set()
        quarantined: set[TopicPartition] = set()

        def plans() -> Iterator[tuple[PartitionPlan, list[ReadJob]]]:
            for tp in sorted(segments):
                plan = PartitionPlan(tp, None, segments.pop(tp))
                yield plan, plan.jobs(indexes.pop(tp.dir_name, frozenset()))

        for plan, reads in read_grouped(
            store, run, plans(), max_workers=max_workers, items=items, nbytes=nbytes
        ):
            outcome = settle_partition(plan, reads, run, checkpoints)
            self.bytes_read += sum(read.bytes_read for read in reads.values())
            self.ignored.extend(outcome.ignored)
            tp = plan.topic_partition
            if outcome.problems:
                quarantined.add(tp)
                self.quarantined.extend(outcome.problems)
                self._spool.quarantined(tp, outcome.problems)
            elif outcome.state is not None:
                adopted.add(tp)
                self.lines.append(write_partition(store, outcome.state, run.run_id))
                self.adopted_segments += len(outcome.adopted)
                self._spool.adopted(outcome.state, outcome.adopted)
        self.ignored.extend(unused_checkpoint_entries(checkpoints, adopted=adopted, quarantined=quarantined))


def _listed_indexes(objects: Iterable[str]) -> dict[str, set[str]]:
    """The listed index objects by partition folder: what a segment's read may use (adoption asks for no
    index the listing does not show)."""
    found: dict[str, set[str]] = {}
    for key in objects:
        if key.endswith(_INDEX_SUFFIXES):
            found.setdefault(key.partition("/")[0], set()).add(key)
    return found
