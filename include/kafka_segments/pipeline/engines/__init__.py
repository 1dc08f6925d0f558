"""Where a run's per-partition work runs: the ``Engine`` protocol, ``InlineEngine`` (this process) and
``ClusterEngine`` (tasks on a ``TaskRunner`` such as Spark's; workers open the lake's store themselves, so
only keys and summaries travel). Both call the same functions on the same inputs and produce the same plan,
objects and staged manifest (docs/architecture.md). The names are exported lazily, so launching Spark does
not load the compaction machinery."""

from __future__ import annotations

from kafka_segments import exports_by_module, lazy_exports

_EXPORTS = exports_by_module(
    {
        "base": "Engine TaskRunner TopicPlanTask",
        "inline": "InlineEngine",
        "cluster": "ClusterEngine",
        "tasks": "ReadTask compaction_task plan_topic read_jobs read_task worker_store",
    }
)

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - the lazy exports, listed once in _EXPORTS

__getattr__ = lazy_exports(__name__, _EXPORTS)
