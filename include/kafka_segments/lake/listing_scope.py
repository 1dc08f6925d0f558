"""Which partitions a lake listing says changed since a version, from the version's root alone
(docs/metadata-format-2.md, "The summary"): a run adopts in these partitions and leaves the others unread.

A partition is unchanged when its ``.log`` objects in the listing, less the version's retired ones, are
exactly its live segments with the same sizes and etags: the digest of the listed objects equals the root's
``live_sha256``. Then adoption would find nothing there (no candidate, no live object missing, changed or
regrown). Anything else in its folder (a new upload, a leftover of a run that did not commit, an object
adoption ignores) makes it changed, so adoption reads it as it always did: the answer errs towards reading.
A partition listed only after its newest segment's name (``lake.tail_listing``) is compared the same way
with the live segments named after that (``tail_sha256``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from kafka_segments.lake.layout import try_parse_segment_key
from kafka_segments.lake.roots import VersionRoot
from kafka_segments.segment.files import FileKind
from kafka_segments.state import live_digest
from kafka_segments.storage.base import ObjectMeta
from kafka_segments.topic_partition import TopicPartition


def listing_changes(
    root: VersionRoot, listing: Iterable[ObjectMeta], *, starts: Mapping[TopicPartition, str] | None = None
) -> frozenset[TopicPartition]:
    """The partitions of ``root`` whose listed ``.log`` objects are not exactly their live segments (or whose
    summary predates ``live_sha256``), and the listed partitions ``root`` does not have. ``starts``: the
    partitions listed only after a key (``lake.tail_listing``), whose listed objects are compared with the
    live segments named after it (``tail_sha256``)."""
    starts = starts or {}
    retired = {retired.key for retired in root.retired}
    logs: dict[TopicPartition, list[tuple[str, int, str]]] = defaultdict(list)
    for meta in listing:
        name = try_parse_segment_key(meta.key)
        if name is None or name.kind is not FileKind.LOG or meta.key in retired:
            continue
        logs[name.topic_partition].append((meta.key, meta.size, meta.etag))
    changed = set(logs) - root.topic_partitions()
    for partition in root.partitions:
        summary = partition.summary
        recorded = summary.tail_sha256 if partition.topic_partition in starts else summary.live_sha256
        if recorded is None or live_digest(logs.get(partition.topic_partition, ())) != recorded:
            changed.add(partition.topic_partition)
    return frozenset(changed)
