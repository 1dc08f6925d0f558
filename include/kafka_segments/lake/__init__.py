"""The lake: a partition's log as objects in a store, its committed state as versioned manifests, and the
protocol that changes it atomically (docs/lake.md).

The names below are re-exported lazily, so reading a lake does not load the segment-scanning machinery
(numba) that only writers need."""

from __future__ import annotations

from kafka_segments import exports_by_module, lazy_exports

_EXPORTS = exports_by_module(
    {
        "transaction": "LakeTransaction RunOutcome",
        "commit": "CommitResolution abort_run commit_manifest commit_run resolve_commit",
        "staging": "begin_run build_manifest retire stage_manifest stage_segment",
        "history": "head_version manifest_versions read_head read_manifest",
        "kafka_segments.state": (
            "MANIFEST_FORMAT_VERSION Manifest OpenTransaction PartitionState RetiredObject SegmentEntry "
            "SegmentOrigin"
        ),
        "runs": "RunEnd RunRecord",
        "adoption_report": "AdoptionReport AdoptionResult",
        "adopt_run": "adopt",
        "adoption": "adopt_objects",
        "gc_report": "GcReport",
        "gc": "collect_garbage",
        "recover": "RecoverAction RecoverReport recover",
        "reader": "read_segment resolve_manifest iter_visible_batches",
        "export": "export_lake",
    }
)

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - the lazy exports, listed once in _EXPORTS

__getattr__ = lazy_exports(__name__, _EXPORTS)
