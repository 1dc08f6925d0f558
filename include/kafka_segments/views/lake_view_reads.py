"""What the lake view reads of a version (issue 33 point 5; docs/lake-view.md, "What the page reads").

The partition table comes from the root's summaries (``describe_root``'s numbers); a partition's state is
read only when the page needs more than its summary holds:

* the next run may change it (``lake.summary_scope.partition_may_change``, the rule a run's scope reads by:
  what a run leaves unread, the page shows as unchanged, so the plan is the one ``plan`` and the DAG's dry
  run make);
* its compaction outlook is not settled by the summary (``describe_compaction.summary_outlook``: a disabled
  cleaner, or an empty first segment);
* a group's committed offset lies inside its segments (the lag in bytes needs their sizes).

A version whose summaries predate the fields (an older format 2 root) is read whole, and a format 1 version
is one object holding every state already: its page is computed from the states, as before."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from kafka_segments.config import Config
from kafka_segments.lake.reader import load_states
from kafka_segments.lake.roots import VersionRoot
from kafka_segments.lake.summary_scope import partition_may_change
from kafka_segments.retention.consumed import ConsumedIndexes
from kafka_segments.state import MANIFEST_FORMAT_2, OffsetSnapshot, PartitionState, PartitionSummary
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kafka_segments.views.describe_compaction import summary_outlook


@dataclass(frozen=True, slots=True)
class ViewPartitions:
    """A version's partitions as the page uses them: the root, every summary, and the states read."""

    root: VersionRoot
    summaries: Mapping[TopicPartition, PartitionSummary]
    """Every partition's, in the root's order."""
    states: Mapping[TopicPartition, PartitionState]
    """The partitions read, in the root's order."""

    def lag_bytes(self, topic_partition: TopicPartition, position: int) -> int:
        """The bytes of its live segments holding offsets at or above ``position``."""
        state = self.states.get(topic_partition)
        if state is not None:
            return sum(segment.size for segment in state.segments if segment.next_offset > position)
        found = summary_lag_bytes(self.summaries[topic_partition], position)
        if found is None:
            raise ValueError(f"{topic_partition} was not read and its summary does not hold its lag")
        return found


def read_view_partitions(
    store: ObjectStore,
    root: VersionRoot,
    config: Config | None,
    *,
    now_ms: int,
    snapshot: OffsetSnapshot | None,
) -> ViewPartitions:
    """``root`` with the states the page needs at ``now_ms`` read (see the module docstring).

    Raises:
        ManifestFormatError: a piece is not what the root says (``VersionRoot.load``).
        ManifestVersionNotFoundError: a piece was removed meanwhile (``reader.load_states``).
    """
    wanted = partitions_to_read(root, config, now_ms=now_ms, snapshot=snapshot)
    states = load_states(store, root, None if wanted is None else wanted.__contains__)
    summaries = {partition.topic_partition: partition.summary for partition in root.partitions}
    return ViewPartitions(root, summaries, {state.topic_partition: state for state in states})


def partitions_to_read(
    root: VersionRoot, config: Config | None, *, now_ms: int, snapshot: OffsetSnapshot | None
) -> frozenset[TopicPartition] | None:
    """The partitions whose state the page needs, ``None`` for every one (summaries without the fields)."""
    if root.format_version != MANIFEST_FORMAT_2:
        return None  # the root holds every state already
    if not all(p.summary.complete and p.summary.describes for p in root.partitions):
        return None
    wanted = set(_lag_inside(root, snapshot))
    if config is None:
        return frozenset(wanted)
    indexes = None if snapshot is None else ConsumedIndexes(snapshot, now_ms=now_ms)
    configs = {topic: config.for_topic(topic) for topic in root.topics}
    for partition in root.partitions:
        topic_config = configs[partition.topic_partition.topic]
        unsettled = topic_config.compact and summary_outlook(partition.summary, topic_config) is None
        if unsettled or partition_may_change(partition, topic_config, now_ms=now_ms, indexes=indexes):
            wanted.add(partition.topic_partition)
    return frozenset(wanted)


def _lag_inside(root: VersionRoot, snapshot: OffsetSnapshot | None) -> Iterator[TopicPartition]:
    """The partitions where a group's committed offset needs the segments' sizes for its lag in bytes."""
    if snapshot is None:
        return
    summaries = {p.topic_partition: p.summary for p in root.partitions}
    for group in snapshot.groups:
        for offset in group.offsets:
            topic_partition = TopicPartition(offset.topic, offset.partition)
            summary = summaries.get(topic_partition)
            if summary is not None and summary_lag_bytes(summary, offset.offset) is None:
                yield topic_partition


def summary_lag_bytes(summary: PartitionSummary, position: int) -> int | None:
    """``ViewPartitions.lag_bytes`` from a summary: 0 at or past the log end offset (no segment ends above
    it), every byte below the first segment's base offset; ``None`` in between (the sizes are needed)."""
    if summary.segments == 0 or position >= summary.log_end_offset:
        return 0
    first = summary.first_segment_base_offset
    if first is not None and position < first:
        return summary.bytes
    return None
