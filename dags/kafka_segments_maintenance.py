"""Kafka log retention on the lake: recover → snapshot consumer offsets → prepare → Spark → validate →
commit → tables → gc → report.

* **When**: every hour by default (environment variable `KAFKA_SEGMENTS_SCHEDULE`: a cron expression or
  preset, `none` for no schedule); one run at a time. The run's `now` is its data interval end (scheduled and
  backfill runs) or its Logical Date (manual runs; none given: the trigger time).
* **Where**: Variable `kafka_segments_lake` (`s3://bucket/prefix` or a local path), Variable
  `kafka_segments_config` (the YAML configuration; unset: Kafka's defaults), Variable
  `kafka_segments_offsets_source`, Connection `aws_default` (S3 credentials and endpoint) and Connection
  `spark_default` (the Spark master; absent: `local[*]`).
* **Manual triggers and backfills are dry runs** unless the `dry_run` switch (on by default, in both tabs of
  the trigger dialog) is turned off: everything runs up to validation, nothing is committed, the
  `commit`, `tables` and `gc` tasks end *skipped* and no metric is sent. Scheduled runs always commit. A
  manual run applies its rules at the form's Logical Date (never later than the trigger). The DAG is active
  from its deployment (not paused at creation), so a trigger unpauses nothing. Backfill runs use the
  consumer offsets pinned for their date (or the newest earlier pin).
* **One run at a time on a lake**, backfills included: `recover` first waits for the run's turn; waiting
  runs go in the order of their `now`.
* **Failures**: transient store errors are retried; a commit conflict, a failed validation or bad input
  fails the task at once with the reason. The report (last task's XCom, and `report.json` in the lake run's
  folder) lists per partition the log start offsets before and after, what was deleted and why, and the
  consumer group holding the partition back. Each commit emits an event for the lake's Asset through the
  alias `kafka_segments_lakes` (and one per changed topic through `kafka_segments_topics`), which the
  OpenLineage provider reports as the commit's output datasets when a transport is configured.
* **Tables** (docs/tables.md): after the commit, `tables` brings the topics whose
  `kafka_segments.table.enable` is true to the lake's head. A failed sync never undoes the commit: gc and
  the report still run, the report says the lake committed and the tables did not, and the `report` task
  then fails with that line; the next run's `tables` task (or `kafka-segments tables sync`) catches up.

See docs/airflow.md.
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import dag, get_current_context, task
from orchestration.declarations import (
    MAINTENANCE_DAG_ID,
    START_DATE,
    TAGS,
    default_args,
    maintenance_params,
    maintenance_schedule,
    task_result,
)
from orchestration.lineage import committing_outlets
from orchestration.recover_sensor import RecoverInTurnSensor
from orchestration.spark_operator import RetentionSparkSubmitOperator


@dag(
    dag_id=MAINTENANCE_DAG_ID,
    schedule=maintenance_schedule(),
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    is_paused_upon_creation=False,
    tags=TAGS,
    params=maintenance_params(),
    default_args=default_args(),
    doc_md=__doc__,
)
def kafka_segments_maintenance() -> None:
    @task
    def snapshot_offsets(recovered: dict[str, Any]) -> dict[str, Any]:
        from orchestration.maintenance import snapshot_consumer_offsets

        return snapshot_consumer_offsets(get_current_context(), recovered)

    @task
    def prepare(snapshot: dict[str, Any]) -> dict[str, Any]:
        from orchestration.maintenance import prepare as prepare_run

        return prepare_run(get_current_context(), snapshot)

    @task
    def validate(prepared: dict[str, Any]) -> dict[str, Any]:
        from orchestration.maintenance import validate as validate_run

        return validate_run(get_current_context(), prepared)

    @task(outlets=committing_outlets())
    def commit(prepared: dict[str, Any]) -> dict[str, Any]:
        from orchestration.maintenance import commit as commit_run

        return commit_run(get_current_context(), prepared)

    @task(trigger_rule="none_failed")  # after a dry run's skipped commit
    def tables(prepared: dict[str, Any], committed: dict[str, Any]) -> dict[str, Any]:
        from orchestration.maintenance import sync_tables

        return sync_tables(get_current_context(), prepared, committed)

    @task(trigger_rule="none_failed")  # after a dry run's skipped commit and tables
    def gc(prepared: dict[str, Any]) -> dict[str, Any]:
        from orchestration.maintenance import collect_garbage

        return collect_garbage(get_current_context(), prepared)

    @task(trigger_rule="none_failed")  # after a dry run's skipped gc
    def report(prepared: dict[str, Any], collected: dict[str, Any], synced: dict[str, Any]) -> dict[str, Any]:
        from orchestration.maintenance import publish_report

        return publish_report(get_current_context(), prepared, collected, synced)

    recover = RecoverInTurnSensor(task_id="recover")
    snapshot = snapshot_offsets(task_result(recover.output))
    prepared = prepare(task_result(snapshot))
    spark = RetentionSparkSubmitOperator(task_id="spark_retention", prepare_task_id="prepare")
    validated = validate(task_result(prepared))
    committed = commit(task_result(prepared))
    synced = tables(task_result(prepared), task_result(committed))
    collected = gc(task_result(prepared))
    prepared >> spark >> validated >> committed >> synced >> collected
    report(task_result(prepared), task_result(collected), task_result(synced))


kafka_segments_maintenance()
