"""The values every rule reads, below the rules and the lake: a partition's committed state as the manifest
records it (``manifest``: ``SegmentEntry``, ``PartitionState``, ``OpenTransaction``, ``RetiredObject``,
``Manifest``) and the consumer groups' committed offsets (``offsets``: ``OffsetSnapshot``, …).

Pure data: nothing here reads a store or decides what to keep (docs/architecture.md)."""

from kafka_segments.state.manifest import (
    MANIFEST_FORMAT_2,
    MANIFEST_FORMAT_VERSION,
    MANIFEST_FORMATS,
    Manifest,
    OpenTransaction,
    PartitionState,
    RetiredObject,
    SegmentEntry,
    SegmentOrigin,
    sort_partitions,
)
from kafka_segments.state.offsets import (
    GROUP_STATES,
    SNAPSHOT_FORMAT_VERSION,
    CommittedOffset,
    GroupError,
    GroupOffsets,
    GroupType,
    OffsetSnapshot,
)
from kafka_segments.state.summary import PartitionSummary, live_digest, summarize

__all__ = [
    "GROUP_STATES",
    "MANIFEST_FORMATS",
    "MANIFEST_FORMAT_2",
    "MANIFEST_FORMAT_VERSION",
    "SNAPSHOT_FORMAT_VERSION",
    "CommittedOffset",
    "GroupError",
    "GroupOffsets",
    "GroupType",
    "Manifest",
    "OffsetSnapshot",
    "OpenTransaction",
    "PartitionState",
    "PartitionSummary",
    "RetiredObject",
    "SegmentEntry",
    "SegmentOrigin",
    "live_digest",
    "sort_partitions",
    "summarize",
]
