"""Taking a consumer-offset snapshot from a source string: ``kafka://host:port[,...]`` (a live cluster),
``lake`` (the archived ``__consumer_offsets``), or a snapshot JSON file (``./lake`` for a file so named).
The source modules are imported only when used, so reading a file never loads a Kafka client."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from kafka_segments.clock import wall_clock_ms
from kafka_segments.errors import KafkaSegmentsError, NoCommittedStateError
from kafka_segments.state import Manifest, OffsetSnapshot
from kafka_segments.storage.base import ObjectStore

LAKE_SOURCE = "lake"
KAFKA_SCHEME = "kafka"
CONSUMER_OFFSETS_TOPIC = "__consumer_offsets"

SourceKind = Literal["kafka", "lake", "file"]
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


class InvalidSnapshotSourceError(KafkaSegmentsError, ValueError):
    """A snapshot source is empty or names a scheme other than ``kafka://``."""


def source_kind(source: str) -> SourceKind:
    """Which kind of source ``source`` names.

    Raises:
        InvalidSnapshotSourceError: empty, or an unsupported ``scheme://``.
    """
    if not source:
        raise InvalidSnapshotSourceError("empty offsets source: use kafka://host:port, lake or a JSON file")
    if source == LAKE_SOURCE:
        return "lake"
    match = _SCHEME.match(source)
    if match is None:
        return "file"
    if match.group(1).lower() == KAFKA_SCHEME:
        return "kafka"
    raise InvalidSnapshotSourceError(
        f"offsets source {source!r}: unsupported scheme {match.group(1)!r} "
        "(use kafka://host:port, lake or a JSON file path)"
    )


def take_snapshot(
    store: ObjectStore,
    *,
    source: str,
    taken_at_ms: int | None = None,
    groups: Sequence[str] | None = None,
    topics: Sequence[str] | None = None,
    kafka_timeout_s: float | None = None,
    lake_view: Manifest | None = None,
    as_of_ms: int | None = None,
) -> OffsetSnapshot:
    """A snapshot of the groups' committed offsets from ``source`` (not stored: see ``snapshot_store``).

    Args:
        taken_at_ms: the snapshot's time; ``None``: the source's own (the wall clock for a cluster, the
            newest ``__consumer_offsets`` record for the lake; a file always keeps its own).
        groups, topics: keep only those groups (and their errors), only those topics' offsets.
        kafka_timeout_s: bounds each Admin request (``open_kafka_source``'s default when ``None``).
        lake_view: the state the ``lake`` source reads instead of the head manifest (a run's adopted view).
        as_of_ms: replay the ``lake`` source as of that time (a run's ``now``); other sources ignore it.

    Raises:
        InvalidSnapshotSourceError: ``source`` is not a source.
        SnapshotFormatError: a file source that cannot be read or is not a valid snapshot.
        NoCommittedStateError: the ``lake`` source on a lake without a committed manifest.
        LakeSourceError: the lake holds no ``__consumer_offsets`` partition (and the errors of
            ``lake_source.snapshot_from_lake``).
        InvalidKafkaSourceError: a malformed ``kafka://`` URI or group list.
        KafkaAdminError: the cluster could not be read (``GroupDiscoveryError``: the groups could not be
            listed).
        InvalidTopicError: a topic name Kafka would reject.
    """
    kind = source_kind(source)
    if kind == "file":
        from kafka_segments.offsets.snapshot_codec import load_snapshot_file

        return filter_snapshot(load_snapshot_file(source), groups=groups, topics=topics)
    if kind == "lake":
        snapshot = _from_lake(store, taken_at_ms, lake_view, as_of_ms)
        return filter_snapshot(snapshot, groups=groups, topics=topics)
    return _from_kafka(
        source, taken_at_ms=taken_at_ms, groups=groups, topics=topics, timeout_s=kafka_timeout_s
    )


def _from_lake(
    store: ObjectStore, taken_at_ms: int | None, view: Manifest | None, as_of_ms: int | None
) -> OffsetSnapshot:
    from kafka_segments.lake.history import read_head_topic
    from kafka_segments.offsets.lake_source import snapshot_from_lake

    manifest = read_head_topic(store, CONSUMER_OFFSETS_TOPIC) if view is None else view
    if manifest is None:
        raise NoCommittedStateError(
            "the lake has no committed manifest, so no archived __consumer_offsets to read",
            location=store.describe(),
        )
    at = lake_data_time_ms(manifest) if taken_at_ms is None else taken_at_ms
    if as_of_ms is not None:
        at = min(at, as_of_ms)
    return snapshot_from_lake(store, manifest=manifest, taken_at_ms=at, as_of_ms=as_of_ms)


def _from_kafka(
    source: str,
    *,
    taken_at_ms: int | None,
    groups: Sequence[str] | None,
    topics: Sequence[str] | None,
    timeout_s: float | None,
) -> OffsetSnapshot:
    from kafka_segments.offsets.kafka_source import open_kafka_source, snapshot_from_kafka

    admin = open_kafka_source(source) if timeout_s is None else open_kafka_source(source, timeout_s=timeout_s)
    try:
        return snapshot_from_kafka(
            admin,
            taken_at_ms=wall_clock_ms() if taken_at_ms is None else taken_at_ms,
            source=source,
            groups=groups,
            topics=topics,
        )
    finally:
        admin.close()


def lake_data_time_ms(manifest: Manifest, *, topic: str = CONSUMER_OFFSETS_TOPIC) -> int:
    """How recent the archived ``topic`` is: the largest record timestamp of its segments in ``manifest``,
    or the manifest's commit time when it has no segment with a timestamp."""
    stamps = [
        segment.max_timestamp_ms
        for state in manifest.partitions
        if state.topic_partition.topic == topic
        for segment in state.segments
        if segment.max_timestamp_ms >= 0
    ]
    return max(stamps) if stamps else manifest.committed_at_ms


def filter_snapshot(
    snapshot: OffsetSnapshot, *, groups: Sequence[str] | None = None, topics: Sequence[str] | None = None
) -> OffsetSnapshot:
    """Only the groups in ``groups`` (and their errors), and of each group only the offsets of ``topics``
    (``None``: no restriction). Groups are kept even when no offset is left: their state still counts."""
    wanted_groups = None if groups is None else set(groups)
    wanted_topics = None if topics is None else set(topics)

    def keep_group(group_id: str) -> bool:
        return wanted_groups is None or group_id in wanted_groups

    kept = [
        group
        if wanted_topics is None
        else replace(group, offsets=tuple(o for o in group.offsets if o.topic in wanted_topics))
        for group in snapshot.groups
        if keep_group(group.group_id)
    ]
    errors = tuple(e for e in snapshot.errors if keep_group(e.group_id))
    return replace(snapshot, groups=tuple(kept), errors=errors)
