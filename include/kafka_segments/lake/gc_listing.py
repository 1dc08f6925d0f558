"""What gc lists (docs/metadata-format-2.md, "gc"): the whole lake, or on a format 2 lake with a record of
a complete pass (``lake.gc_record``) only what can hold something to delete.

The scoped listing is ``_kafka_segments/`` (roots, run folders, pieces: proportional to runs and
partitions), each partition's tail as a run lists it (``lake.tail_listing``), the head's retired objects
looked up by their name stem, and, listed whole, the partitions ``lake.gc_scope`` cannot settle from the
tail and the partitions of every run not settled yet (its ``input-manifest.json``, written before it stages
any segment, names them). It falls back to the whole listing, and says why, when it cannot prove that this
sees every object gc may delete: ``--full``, a retained version in format 1, no readable record, or a run
not settled that has no outcome (it may still be writing anywhere) or whose partitions cannot be read."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from kafka_segments.errors import ManifestFormatError
from kafka_segments.lake.format2 import FORMAT_2
from kafka_segments.lake.gc_record import GcRecord, read_gc_record
from kafka_segments.lake.gc_scope import examined_partitions, partition_of
from kafka_segments.lake.layout import META_PREFIX, OUTCOME_NAME, parse_run_folder_key
from kafka_segments.lake.roots import VersionRoot
from kafka_segments.lake.run_folder import INPUT_MANIFEST, read_run_manifest
from kafka_segments.lake.sweep import key_stem
from kafka_segments.lake.tail_listing import LIST_WORKERS, list_tails
from kafka_segments.storage.base import ObjectMeta, ObjectStore
from kafka_segments.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class GcListing:
    """What one gc pass listed."""

    objects: list[ObjectMeta]
    examined: frozenset[TopicPartition] | None
    """The partitions listed whole and read (``None``: every one; format 1 reads every partition)."""
    runs: frozenset[str] | None
    """The runs whose objects this listing sees all of (``None``: every run: the whole lake was listed)."""
    settled: frozenset[str]
    """The settled runs of the record this listing trusted."""
    note: str
    """How gc listed, and why not scoped when it did not: one line of the report."""

    @property
    def whole(self) -> bool:
        return self.runs is None


def gc_listing(store: ObjectStore, roots: Sequence[VersionRoot], *, full: bool) -> GcListing:
    """The listing of one pass over ``roots`` (the retained versions', oldest first)."""
    reason = _whole_reason(roots, full=full)
    record = read_gc_record(store) if reason is None else reason
    if isinstance(record, str):
        return _whole(store, roots, record)
    meta = list(store.list(META_PREFIX))
    runs = _runs(meta)
    pending = sorted((set(runs) - record.settled_runs) | record.unsettled_runs)
    partitions: set[TopicPartition] = set()
    for run_id in pending:
        found = _run_partitions(store, run_id, runs.get(run_id, set()))
        if isinstance(found, str):
            return _whole(store, roots, found)
        partitions.update(found)
    return _scoped(store, roots, meta, record, frozenset(pending), frozenset(partitions))


def _whole_reason(roots: Sequence[VersionRoot], *, full: bool) -> str | None:
    if full:
        return "--full"
    if not roots or roots[-1].format_version != FORMAT_2:
        return "the head is not in format 2"
    if any(root.format_version != FORMAT_2 for root in roots):
        return "a retained version is in format 1"
    return None


def _whole(store: ObjectStore, roots: Sequence[VersionRoot], reason: str) -> GcListing:
    objects = list(store.list())
    examined = None
    if roots and roots[-1].format_version == FORMAT_2:
        examined = examined_partitions(roots, objects)
    return GcListing(objects, examined, None, frozenset(), f"listed the whole lake: {reason}")


def _runs(meta: Iterable[ObjectMeta]) -> dict[str, set[str]]:
    """Each run folder's file names."""
    runs: dict[str, set[str]] = {}
    for item in meta:
        parsed = parse_run_folder_key(item.key)
        if parsed is not None:
            runs.setdefault(parsed[0], set()).add(parsed[1])
    return runs


def _run_partitions(store: ObjectStore, run_id: str, files: set[str]) -> frozenset[TopicPartition] | str:
    """The partitions where ``run_id`` may have written segments, or why gc cannot tell."""
    if not files:
        return f"run {run_id} has objects left and no run folder"
    if OUTCOME_NAME not in files:
        return f"run {run_id} has no outcome (it may still be writing)"
    if INPUT_MANIFEST not in files:
        return frozenset()  # it ended before it staged anything
    try:
        manifest = read_run_manifest(store, run_id, INPUT_MANIFEST)
    except ManifestFormatError as exc:
        return f"run {run_id}'s {INPUT_MANIFEST} is unreadable: {exc}"
    if manifest is None:
        return f"run {run_id}'s {INPUT_MANIFEST} vanished"
    return frozenset(state.topic_partition for state in manifest.partitions)


def _scoped(
    store: ObjectStore,
    roots: Sequence[VersionRoot],
    meta: list[ObjectMeta],
    record: GcRecord,
    runs: frozenset[str],
    run_partitions: frozenset[TopicPartition],
) -> GcListing:
    head = roots[-1]
    tails = list_tails(store, head)
    pieces = [item for item in meta if partition_of(item.key) is not None]
    examined = examined_partitions(roots, [*tails.objects, *pieces], starts=tails.starts) | run_partitions
    wanted = sorted(examined, key=lambda tp: tp.dir_name)
    stems = sorted({key_stem(item.key) for item in head.retired})
    with ThreadPoolExecutor(max_workers=LIST_WORKERS) as pool:
        folders = pool.map(lambda tp: list(store.list(tp.dir_name + "/")), wanted)
        listed = [item for part in folders for item in part]
        retired = [item for part in pool.map(lambda stem: list(store.list(stem)), stems) for item in part]
    kept = [item for item in tails.objects if partition_of(item.key) not in examined]
    objects = _unique([*meta, *kept, *listed, *retired])
    note = (
        f"listed each partition's tail, {len(wanted)} partition(s) whole "
        f"({len(runs)} run(s) not settled by the last complete pass)"
    )
    return GcListing(objects, examined, runs, record.settled_runs, note)


def next_record(listing: GcListing, *, left: Iterable[str], gone: Iterable[str]) -> GcRecord:
    """The record after a pass that deleted everything it planned (``lake.gc_record``): settled, the
    record's runs and those this listing saw all of that have an outcome and had none of their objects
    ``left``, less the runs whose folder is ``gone``; unsettled, the runs of the objects ``left``."""
    runs = _runs(listing.objects)
    seen = set(runs) if listing.runs is None else listing.runs
    unsettled = frozenset(left)
    ended = {run_id for run_id in seen if OUTCOME_NAME in runs.get(run_id, ()) and run_id not in unsettled}
    settled = frozenset((listing.settled & runs.keys()) | ended) - frozenset(gone)
    return GcRecord(settled_runs=settled, unsettled_runs=unsettled)


def _unique(objects: Iterable[ObjectMeta]) -> list[ObjectMeta]:
    return list({item.key: item for item in objects}.values())


__all__ = ["GcListing", "gc_listing", "next_record"]
