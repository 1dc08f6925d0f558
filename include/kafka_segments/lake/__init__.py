"""The lake: a partition's log as objects in a store, its committed state as versioned manifests, and the
protocol that changes it atomically (docs/lake.md).

The names below are re-exported lazily, so reading a lake does not load the segment-scanning machinery
(numba) that only writers need."""

from __future__ import annotations

from kafka_segments import lazy_exports

_EXPORTS = {
    "LakeTransaction": "transaction",
    "RunOutcome": "transaction",
    "CommitResolution": "commit",
    "abort_run": "commit",
    "begin_run": "staging",
    "build_manifest": "staging",
    "commit_manifest": "commit",
    "commit_run": "commit",
    "resolve_commit": "commit",
    "retire": "staging",
    "stage_manifest": "staging",
    "stage_segment": "staging",
    "head_version": "history",
    "manifest_versions": "history",
    "read_head": "history",
    "read_manifest": "history",
    "MANIFEST_FORMAT_VERSION": "kafka_segments.state",
    "Manifest": "kafka_segments.state",
    "OpenTransaction": "kafka_segments.state",
    "PartitionState": "kafka_segments.state",
    "RetiredObject": "kafka_segments.state",
    "SegmentEntry": "kafka_segments.state",
    "SegmentOrigin": "kafka_segments.state",
    "RunEnd": "runs",
    "RunRecord": "runs",
    "wall_clock_ms": "runs",
    "AdoptionReport": "adoption_report",
    "AdoptionResult": "adoption_report",
    "adopt": "adopt_run",
    "adopt_objects": "adoption",
    "GcReport": "gc_report",
    "collect_garbage": "gc",
    "RecoverAction": "recover",
    "RecoverReport": "recover",
    "recover": "recover",
    "read_segment": "reader",
    "resolve_manifest": "reader",
    "iter_visible_batches": "reader",
    "export_lake": "export",
}

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - the lazy exports, listed once in _EXPORTS

__getattr__ = lazy_exports(__name__, _EXPORTS)
