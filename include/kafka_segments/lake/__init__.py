"""The lake: a partition's log as objects in a store, its committed state as versioned manifests, and the
protocol that changes it atomically (DESIGN §3)."""

from kafka_segments.lake.commit import (
    CommitResolution,
    abort_run,
    begin_run,
    build_manifest,
    commit_manifest,
    commit_run,
    resolve_commit,
    retire,
    stage_manifest,
    stage_segment,
)
from kafka_segments.lake.history import head_version, manifest_versions, read_head, read_manifest
from kafka_segments.lake.manifest import (
    MANIFEST_FORMAT_VERSION,
    Manifest,
    OpenTransaction,
    PartitionState,
    RetiredObject,
    SegmentEntry,
    SegmentOrigin,
)
from kafka_segments.lake.runs import RunOutcome, RunRecord, wall_clock_ms

__all__ = [
    "MANIFEST_FORMAT_VERSION",
    "CommitResolution",
    "Manifest",
    "OpenTransaction",
    "PartitionState",
    "RetiredObject",
    "RunOutcome",
    "RunRecord",
    "SegmentEntry",
    "SegmentOrigin",
    "abort_run",
    "begin_run",
    "build_manifest",
    "commit_manifest",
    "commit_run",
    "head_version",
    "manifest_versions",
    "read_head",
    "read_manifest",
    "resolve_commit",
    "retire",
    "stage_manifest",
    "stage_segment",
    "wall_clock_ms",
]
