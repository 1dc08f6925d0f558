"""The lake: a partition's log as objects in a store, its committed state as versioned manifests, and the
protocol that changes it atomically (docs/lake.md).

Modules: ``manifest`` (the committed state), ``codec`` (its JSON), ``layout`` (object keys), ``history``
(reading versions), ``runs`` and ``commit`` (a run's record and the commit protocol), ``transaction`` (a
run as one object: every writer goes through it), ``scan`` (header-only segment summaries), ``adoption``
(taking in segments uploaded from outside; ``adopt_run`` as a run of its own), ``checkpoint_files``, ``gc``,
``recover``, ``reader``, ``describe``, ``export``.

The names below are re-exported lazily, so reading a lake does not load the segment-scanning machinery
(numba) that only writers need.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "LakeTransaction": "transaction",
    "RunOutcome": "transaction",
    "CommitResolution": "commit",
    "abort_run": "commit",
    "begin_run": "commit",
    "build_manifest": "commit",
    "commit_manifest": "commit",
    "commit_run": "commit",
    "resolve_commit": "commit",
    "retire": "commit",
    "stage_manifest": "commit",
    "stage_segment": "commit",
    "head_version": "history",
    "manifest_versions": "history",
    "read_head": "history",
    "read_manifest": "history",
    "MANIFEST_FORMAT_VERSION": "manifest",
    "Manifest": "manifest",
    "OpenTransaction": "manifest",
    "PartitionState": "manifest",
    "RetiredObject": "manifest",
    "SegmentEntry": "manifest",
    "SegmentOrigin": "manifest",
    "RunEnd": "runs",
    "RunRecord": "runs",
    "wall_clock_ms": "runs",
    "AdoptionReport": "adoption",
    "AdoptionResult": "adoption",
    "adopt": "adopt_run",
    "adopt_objects": "adoption",
    "GcReport": "gc",
    "collect_garbage": "gc",
    "RecoverAction": "recover",
    "RecoverReport": "recover",
    "recover": "recover",
    "read_segment": "reader",
    "resolve_manifest": "reader",
    "iter_visible_batches": "reader",
    "describe_lake": "describe",
    "export_lake": "export",
}

__all__ = [
    "MANIFEST_FORMAT_VERSION",
    "AdoptionReport",
    "AdoptionResult",
    "CommitResolution",
    "GcReport",
    "LakeTransaction",
    "Manifest",
    "OpenTransaction",
    "PartitionState",
    "RecoverAction",
    "RecoverReport",
    "RetiredObject",
    "RunEnd",
    "RunOutcome",
    "RunRecord",
    "SegmentEntry",
    "SegmentOrigin",
    "abort_run",
    "adopt",
    "adopt_objects",
    "begin_run",
    "build_manifest",
    "collect_garbage",
    "commit_manifest",
    "commit_run",
    "describe_lake",
    "export_lake",
    "head_version",
    "iter_visible_batches",
    "manifest_versions",
    "read_head",
    "read_manifest",
    "read_segment",
    "recover",
    "resolve_commit",
    "resolve_manifest",
    "retire",
    "stage_manifest",
    "stage_segment",
    "wall_clock_ms",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
