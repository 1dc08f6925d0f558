"""The Spark step of the maintenance DAG: ``SparkSubmitOperator`` running the retention job of the prepared
lake run (``spark_jobs/retention_job.py``).

The job's spec is known only when the task runs, so the operator fills its fields in at execute time from
``spark_submit.retention_job_spec``; such fields are not rendered templates, so the connection's secret never
lands in the rendered-fields table. Without a ``spark_default`` Connection the job runs on ``local[*]`` (the
provider would fall back to ``yarn``). With the Variable ``kafka_segments_engine`` set to ``inline`` the task
runs the step in its own process instead (``maintenance.execute_inline``), with no Spark job. Imported at DAG
parse time: the library is imported when it runs."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

if TYPE_CHECKING:
    from airflow.sdk import Context
    from kafka_segments.pipeline.engines.spark_submit import SparkJobSpec

log = logging.getLogger(__name__)

SPARK_CONN_ID = "spark_default"
DEFAULT_MASTER = "local[*]"


class RetentionSparkSubmitOperator(SparkSubmitOperator):
    """Runs the retention job of the lake run that the task ``prepare_task_id`` prepared."""

    def __init__(
        self, *, prepare_task_id: str = "prepare", conn_id: str = SPARK_CONN_ID, **kwargs: Any
    ) -> None:
        super().__init__(conn_id=conn_id, name="kafka-segments-retention", **kwargs)
        self.prepare_task_id = prepare_task_id
        self.spark_conn_id = conn_id

    def execute(self, context: Context) -> None:
        from orchestration.failures import task_failures
        from orchestration.handover import RunHandle
        from orchestration.settings import INLINE_ENGINE, read_engine

        with task_failures(self.task_id):
            prepared = context["ti"].xcom_pull(task_ids=self.prepare_task_id)
            if not isinstance(prepared, Mapping):
                raise RuntimeError(f"task {self.prepare_task_id!r} left no run handle in XCom")
            handle = RunHandle.from_dict(prepared)
            if read_engine() == INLINE_ENGINE:
                from orchestration.maintenance import execute_inline

                execute_inline(handle)
                return
            spec, env = retention_job(handle.lake, handle.run_id, handle.config_path)
            self.application = spec.application
            self.application_args = list(spec.application_args)
            self.py_files = ",".join(spec.py_files)
            self.name = spec.name
            self.conf = {**spec.conf, **(self.conf or {})}
            self.env_vars = env
            log.info(
                "lake run %s: Spark job %s (master: connection %s)",
                handle.run_id,
                spec.application,
                self.spark_conn_id,
            )
            try:
                with default_spark_connection(self.spark_conn_id):
                    super().execute(context)
            except Exception as exc:
                raise submit_failure(exc) from exc
            finally:
                self._close_submit_output()

    def _close_submit_output(self) -> None:
        """Close ``spark-submit``'s output pipe: the provider's ``SparkSubmitHook.submit`` (6.3.4) reads it to
        the end but never closes it, which leaks a file descriptor (a ``ResourceWarning``) per run."""
        process = getattr(getattr(self, "_hook", None), "_submit_sp", None)
        output = getattr(process, "stdout", None)
        if output is not None:
            output.close()


class SparkJobTransientError(RuntimeError):
    """The Spark job failed on an error a retry can cure (it exited 75, ``EX_TEMPFAIL``): retried."""

    retriable = True


TRANSIENT_EXIT_CODE = 75
_EXIT_CODE = re.compile(r"Error code is: (-?\d+)\.")


def submit_failure(exc: Exception) -> Exception:
    """The error the task raises for a failed ``spark-submit``: a ``SparkJobTransientError`` (retried) when
    the job exited 75, else ``exc`` itself (failing without a retry). The provider's hook reports the exit
    code only in its message (``Error code is: N.``)."""
    match = _EXIT_CODE.search(str(exc))
    if match is not None and int(match.group(1)) == TRANSIENT_EXIT_CODE:
        return SparkJobTransientError(f"the Spark job failed on a transient error; retrying: {exc}")
    return exc


def retention_job(lake: str, run_id: str, config_path: str | None) -> tuple[SparkJobSpec, dict[str, str]]:
    """The job's spec and the ``spark-submit`` environment (the spec's, with the ``aws_default`` settings and,
    when ``spark-submit`` is not on ``PATH``, the folder of the one next to this Python)."""
    from kafka_segments.pipeline.engines.spark_submit import find_spark_submit, retention_job_spec

    from orchestration.settings import aws_environ

    aws = aws_environ()
    spec = retention_job_spec(
        lake=lake, run_id=run_id, config_path=config_path, environ={**os.environ, **aws}
    )
    env = {**spec.env, **aws}
    if shutil.which("spark-submit") is None:
        folder = os.path.dirname(find_spark_submit())
        env["PATH"] = os.pathsep.join(filter(None, [folder, os.environ.get("PATH")]))
    return spec, env


def connection_exists(conn_id: str) -> bool:
    """Whether Airflow resolves ``conn_id`` (metadata database, environment or secrets backend)."""
    from airflow.sdk import Connection
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        Connection.get(conn_id)
    except AirflowNotFoundException:
        return False
    return True


@contextmanager
def default_spark_connection(conn_id: str) -> Iterator[None]:
    """While the block runs, define ``conn_id`` as ``local[*]`` when no such connection exists (through the
    ``AIRFLOW_CONN_<ID>`` environment variable, which Airflow's environment secrets backend reads)."""
    if connection_exists(conn_id):
        yield
        return
    from orchestration.settings import patched_environ

    log.info("no connection %r: running Spark on %s", conn_id, DEFAULT_MASTER)
    variable = "AIRFLOW_CONN_" + conn_id.upper()
    with patched_environ({variable: json.dumps({"conn_type": "spark", "host": DEFAULT_MASTER})}):
        yield
