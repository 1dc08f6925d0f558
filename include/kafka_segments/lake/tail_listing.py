"""A run's listing of a format 2 lake without listing the whole lake (docs/metadata-format-2.md, "Adoption
without listing the lake").

Segment names sort by offset and a partition's objects share its folder, so the root's summary says where
anything new can appear: one listing of the top level's folders (a folder the root does not name is a new
partition, listed whole) and, per partition of the root, a listing of its folder after ``tail_start``, the
name of its newest live segment's base offset (its ``.log``, a regrown one included, its indexes and
everything named after it). The listings run concurrently. A partition whose summary predates
``tail_sha256`` (or that has no segments) is listed whole.

What a tail listing cannot see is below the start: a segment uploaded late with a lower offset (adoption
would quarantine it: it overlaps the log), or a live segment deleted or changed in place. A reader of such a
segment fails on its etag (``if_match``) or its absence rather than reading other bytes; ``kafka-segments run
--full-listing`` lists the whole lake as a format 1 run does and reports them as adoption always did.

``as_adoption_listing`` gives adoption the listing it expects: the listed objects plus, below each
partition's start, its live segments as the base version records them and its retired objects still there
(looked up one by one: there are few, retention's and compaction's of the last ``file.delete.delay.ms``)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from kafka_segments.lake.history import head_version
from kafka_segments.lake.layout import META_PREFIX, manifest_key
from kafka_segments.lake.roots import RootPartition, VersionRoot, read_root
from kafka_segments.segment.files import filename_prefix
from kafka_segments.state import Manifest, SegmentEntry
from kafka_segments.storage.base import ObjectMeta, ObjectStore
from kafka_segments.topic_partition import TopicPartition

_FORMAT_2_OPENING = b'{"format_version":2,'
LIST_WORKERS = 16
"""Partition folders listed at once (one request each on S3, where a listing waits on the network)."""


@dataclass(frozen=True, slots=True)
class TailListing:
    """What a run listed: the objects, and where each partition of the root was listed from."""

    objects: tuple[ObjectMeta, ...]
    starts: Mapping[TopicPartition, str]
    """The partitions listed after a key (exclusive); every other folder was listed whole."""

    def covers(self, topic_partition: TopicPartition, key: str) -> bool:
        """Whether the listing would show ``key`` of ``topic_partition`` if it existed."""
        start = self.starts.get(topic_partition)
        return start is None or key > start


def tail_start(partition: RootPartition) -> str | None:
    """The key a partition's folder is listed after (``None``: listed whole)."""
    summary = partition.summary
    if summary.tail_sha256 is None or summary.active_base_offset is None:
        return None
    return f"{partition.topic_partition.dir_name}/{filename_prefix(summary.active_base_offset)}"


def list_tails(store: ObjectStore, root: VersionRoot, *, workers: int = LIST_WORKERS) -> TailListing:
    """The lake's new and changed objects as ``root``'s summaries locate them (see the module docstring):
    one request for the top level, one per partition folder (more for a folder of more than a page)."""
    folders = {folder for folder in store.list_folders() if not folder.startswith(META_PREFIX)}
    starts: dict[TopicPartition, str] = {}
    jobs: list[tuple[str, str | None]] = []
    for partition in root.partitions:
        folder = partition.topic_partition.dir_name + "/"
        if folder not in folders:
            continue  # nothing there: no object of it is listed
        folders.discard(folder)
        start = tail_start(partition)
        if start is not None:
            starts[partition.topic_partition] = start
        jobs.append((folder, start))
    jobs.extend((folder, None) for folder in sorted(folders))
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs)))) as pool:
        listed = pool.map(lambda job: list(store.list(job[0], start_after=job[1])), jobs)
        objects = tuple(meta for part in listed for meta in part)
    return TailListing(objects=objects, starts=starts)


def warm_listing(store: ObjectStore, *, full: bool = False) -> None:
    """List what a run of ``store`` will list (``full``: the whole lake; else a format 2 head's tails), so
    that a local store's etags of new files are known before the run lists (``storage.local``). The head's
    format is read from its first bytes: both formats write ``format_version`` first."""
    version = None if full else head_version(store)
    if version is not None:
        opening = store.get_range(manifest_key(version), start=0, end=len(_FORMAT_2_OPENING))
        if opening == _FORMAT_2_OPENING:
            list_tails(store, read_root(store, version))
            return
    deque(store.list(), maxlen=0)


def as_adoption_listing(store: ObjectStore, listing: TailListing, base: Manifest) -> list[ObjectMeta]:
    """``listing``'s objects plus, below each partition's start, ``base``'s live segments (as the unchanged
    objects it records) and its retired objects still there (each looked up by its key, concurrently: gc
    may have deleted it since), so that adoption finds every live object it knows and a commit carries
    the retired objects that are still to delete, as after a whole listing."""
    live = [
        _recorded(entry)
        for state in base.partitions
        for entry in state.segments
        if not listing.covers(state.topic_partition, entry.key)
    ]
    keys = [item.key for item in base.retired if not listing.covers(item.topic_partition, item.key)]
    return [*listing.objects, *live, *_present(store, keys)]


def _present(store: ObjectStore, keys: list[str]) -> list[ObjectMeta]:
    if not keys:
        return []
    with ThreadPoolExecutor(max_workers=min(LIST_WORKERS, len(keys))) as pool:
        found = pool.map(lambda key: [meta for meta in store.list(key) if meta.key == key], keys)
        return [meta for metas in found for meta in metas]


def _recorded(entry: SegmentEntry) -> ObjectMeta:
    return ObjectMeta(key=entry.key, size=entry.size, etag=entry.etag, last_modified_ms=0)


__all__ = ["LIST_WORKERS", "TailListing", "as_adoption_listing", "list_tails", "tail_start", "warm_listing"]
