"""What this project's Airflow tasks import, imported once for all of them: the module to name in Airflow's
``[scheduler] mp_forkserver_preload``.

Airflow's ``LocalExecutor`` forks every task process from one of its worker processes, and the task then
imports what it needs: the DAG file's modules, the library and, in ``validate``, Great Expectations. That is
about a second of CPU per task and some six seconds per validation, paid again by every task of every run.

With Airflow's documented settings (Airflow 3.3+)::

    AIRFLOW__SCHEDULER__MP_START_METHOD=forkserver
    AIRFLOW__SCHEDULER__MP_FORKSERVER_PRELOAD=orchestration.task_preload

the scheduler starts its workers from Python's fork server, which imports this module once; every worker,
and every task forked from a worker, starts with these modules loaded (shared copy-on-write) instead of
importing them. A module that fails to import here is skipped by the fork server and imported by the task
as before, so the settings change how fast a task starts, never what it does. After an upgrade of the
package, restart the scheduler (as for any change of installed code).

Importing this module *is* its work, unlike every other module of the project: name it only in
``mp_forkserver_preload``. ``preload()`` is the same work as a call.
"""

from __future__ import annotations

import importlib

TASK_MODULES = (
    "airflow.sdk.execution_time.task_runner",
    "airflow.executors.local_executor",
    "orchestration.declarations",
    "orchestration.lineage",
    "orchestration.maintenance",
    "orchestration.delete_records",
    "orchestration.recover_sensor",
    "orchestration.spark_operator",
    "orchestration.metrics",
    "kafka_segments.lake.recover",
    "kafka_segments.lake.gc",
    "kafka_segments.pipeline.stages",
    "kafka_segments.pipeline.report",
    "kafka_segments.pipeline.delete_records_run",
    "kafka_segments.pipeline.engines.spark_submit",
    "segment_quality.validate",
    "segment_quality.gx_runtime",
)
"""The modules the DAGs' tasks import (the DAG files' own imports and the library calls of their tasks). A
module a task starts to import and this list lacks only costs that task its import."""


def preload() -> None:
    """Imports ``TASK_MODULES`` and Great Expectations (as a validation imports it), and loads S3's service
    model into the shared botocore loader (``s3_session.warm_loader``)."""
    for name in TASK_MODULES:
        importlib.import_module(name)
    from kafka_segments.storage.s3_session import warm_loader
    from segment_quality.gx_runtime import load_gx

    load_gx()
    warm_loader()


preload()
