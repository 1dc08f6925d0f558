"""Where a run's per-partition work runs: the ``Engine`` protocol and its two engines.

A run has three fan-outs: adoption's segment reads, one compaction round per eligible partition, and the
retention plan of each topic. An engine runs them:

* ``InlineEngine(store)``: in this process, on the run's store (adoption reads on its own threads);
* ``ClusterEngine(runner, lake)``: as tasks on a ``TaskRunner`` (the Spark engine's ``SparkRunner`` in
  ``spark_jobs/``), which maps the module-level task functions below over plain values. Each worker opens
  the lake's store itself (``worker_store``, once per process); segment bytes go straight from the store to
  the task that reads them, Spark moves only keys and summaries.

Both call the same functions on the same inputs, so they produce the same plan, objects and staged manifest
(tests compare them). A new engine (another cluster, a process pool) is a ``TaskRunner``; see
docs/architecture.md. Modules: ``base`` (the protocols), ``inline``, ``cluster``, ``tasks`` (what workers
run), ``spark_submit`` (the Spark launcher). The names below are exported lazily, so launching Spark does not
load the compaction machinery.
"""

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

__all__ = [
    "ClusterEngine",
    "Engine",
    "InlineEngine",
    "ReadTask",
    "TaskRunner",
    "TopicPlanTask",
    "compaction_task",
    "plan_topic",
    "read_jobs",
    "read_task",
    "worker_store",
]

__getattr__ = lazy_exports(__name__, _EXPORTS)
