"""Consumer-group offsets from the ``__consumer_offsets`` partitions archived in the lake (docs/retention.md,
"Consumer-offset snapshots"), each partition replayed as the group coordinator loads it
(``coordinator.replay``) from what a consumer of the committed log sees.

The log is replayed **as of the run's ``now``**: later records were not yet written then. A lake without the
topic is refused (``LakeSourceError``): "no groups" would let consumed retention treat every topic as unread.
"""

from __future__ import annotations

from kafka_segments.coordinator.replay import PartitionReplay
from kafka_segments.coordinator.snapshot import ReplayResult, build_snapshot
from kafka_segments.errors import LakeError
from kafka_segments.lake.reader import iter_visible_batches
from kafka_segments.state import Manifest, OffsetSnapshot, PartitionState
from kafka_segments.storage.base import ObjectStore

CONSUMER_OFFSETS_TOPIC = "__consumer_offsets"
LAKE_SOURCE = "lake"


class LakeSourceError(LakeError):
    """The lake cannot answer for consumer-group offsets (it holds no partition of the offsets topic)."""


def snapshot_from_lake(
    store: ObjectStore,
    *,
    manifest: Manifest,
    taken_at_ms: int,
    topic: str = CONSUMER_OFFSETS_TOPIC,
    as_of_ms: int | None = None,
) -> OffsetSnapshot:
    """Every group's state and committed offsets as of ``manifest`` (and, with ``as_of_ms``, as of that time:
    records with a later timestamp are left out), with ``source = "lake"``.

    Groups whose records cannot be decoded or replayed are in the snapshot's ``errors`` (with the partition
    and offset of the first bad record); the other groups are unaffected.

    Raises:
        LakeSourceError: the manifest has no partition of ``topic``.
        CoordinatorRecordError: a record that cannot be attributed to a group (undecodable key, bad control
            record): the partition cannot be replayed.
        SegmentObjectMismatchError, CorruptRecordError: a segment is missing, changed or damaged.
        ObjectStoreError: the store could not be read.
    """
    states = [state for state in manifest.partitions if state.topic_partition.topic == topic]
    if not states:
        raise LakeSourceError(
            f"manifest version {manifest.version} has no {topic} partitions, so it cannot tell which "
            f"consumer groups exist (topics: {', '.join(manifest.topics) or '(none)'})",
            location=store.describe(),
        )
    results = [replay_partition(store, state, as_of_ms=as_of_ms) for state in states]
    return build_snapshot(results, taken_at_ms=taken_at_ms, source=LAKE_SOURCE)


def replay_partition(
    store: ObjectStore, state: PartitionState, *, as_of_ms: int | None = None
) -> ReplayResult:
    """Replay one ``__consumer_offsets`` partition of the lake (with ``as_of_ms``: only its records with a
    timestamp at or before it).

    Raises:
        CoordinatorRecordError, SegmentObjectMismatchError, CorruptRecordError, ObjectStoreError: as
            ``snapshot_from_lake``.
    """
    replay = PartitionReplay(str(state.topic_partition))
    for batch in iter_visible_batches(store, state):
        records = batch.records
        if as_of_ms is not None and batch.header.max_timestamp > as_of_ms:
            records = tuple(record for record in records if record.timestamp <= as_of_ms)
        replay.replay_batch(batch.header, records, segment=store.location(batch.segment.key))
    return replay.result()
