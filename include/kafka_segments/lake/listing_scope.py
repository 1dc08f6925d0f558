"""Which partitions a lake listing says changed since a version, from the version's root alone
(docs/metadata-format-2.md, "The summary"): a run adopts in these partitions and leaves the others unread.

A partition is unchanged when its ``.log`` objects in the listing, less the version's retired ones, are
exactly its live segments with the same sizes and etags: the digest of the listed objects equals the root's
``live_sha256``. Then adoption would find nothing there (no candidate, no live object missing, changed or
regrown). Anything else in its folder (a new upload, a leftover of a run that did not commit, an object
adoption ignores) makes it changed, so adoption reads it as it always did: the answer errs towards reading."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from kafka_segments.lake.layout import try_parse_segment_key
from kafka_segments.lake.roots import VersionRoot
from kafka_segments.segment.files import FileKind
from kafka_segments.state import live_digest
from kafka_segments.storage.base import ObjectMeta
from kafka_segments.topic_partition import TopicPartition


def listing_changes(root: VersionRoot, listing: Iterable[ObjectMeta]) -> frozenset[TopicPartition]:
    """The partitions of ``root`` whose listed ``.log`` objects are not exactly their live segments (or whose
    summary predates ``live_sha256``), and the listed partitions ``root`` does not have."""
    retired = {retired.key for retired in root.retired}
    logs: dict[TopicPartition, list[tuple[str, int, str]]] = defaultdict(list)
    for meta in listing:
        name = try_parse_segment_key(meta.key)
        if name is None or name.kind is not FileKind.LOG or meta.key in retired:
            continue
        logs[name.topic_partition].append((meta.key, meta.size, meta.etag))
    changed = set(logs) - root.topic_partitions()
    for partition in root.partitions:
        recorded = partition.summary.live_sha256
        if recorded is None or live_digest(logs.get(partition.topic_partition, ())) != recorded:
            changed.add(partition.topic_partition)
    return frozenset(changed)
