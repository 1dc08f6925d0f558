"""Where a run's per-partition work runs: the ``Engine`` protocol, ``InlineEngine`` (this process) and
``ClusterEngine`` (tasks on a ``TaskRunner`` such as Spark's; workers open the lake's store themselves, so
only keys and summaries travel). Both call the same functions on the same inputs and produce the same plan,
objects and staged manifest (docs/architecture.md). The names are exported lazily, so launching Spark does
not load the compaction machinery."""

from __future__ import annotations

from kafka_segments import lazy_exports

_EXPORTS = {
    "Engine": "base",
    "TaskRunner": "base",
    "TopicPlanTask": "base",
    "InlineEngine": "inline",
    "ClusterEngine": "cluster",
    "ReadTask": "tasks",
    "compaction_task": "tasks",
    "plan_topic": "tasks",
    "read_jobs": "tasks",
    "read_task": "tasks",
    "worker_store": "tasks",
}

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - the lazy exports, listed once in _EXPORTS

__getattr__ = lazy_exports(__name__, _EXPORTS)
