"""What this project's Airflow tasks import (``TASK_MODULES``) and ``preload()``, which imports it: the
work of ``orchestration.task_preload``, the module named in Airflow's ``[scheduler] mp_forkserver_preload``
(docs/airflow.md, "Task start-up"). Importing this module does nothing else: the tests read the list here."""

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
    "kafka_segments.pipeline.run_gc",
    "kafka_segments.pipeline.stages",
    "kafka_segments.pipeline.report",
    "kafka_segments.pipeline.delete_records_run",
    "kafka_segments.pipeline.engines.spark_submit",
    "kafka_segments.tables.run_stage",
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
