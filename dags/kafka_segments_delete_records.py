"""KIP-107 `deleteRecords` on the lake, from the `kafka-delete-records.sh` offset JSON.

Trigger it by hand with the Param `request`, e.g.
`{"version": 1, "partitions": [{"topic": "orders", "partition": 0, "offset": 42}]}` (offset -1: the high
watermark). Each partition's log start offset moves up to its offset (never back): records below it are no
longer readable and whole segments below it are retired in the same commit.

* **Dry run by default**: turn the `dry_run` switch off to commit. The log and the report (XCom, and
  `report.json` in the lake) give each partition's new low watermark or Kafka's error for it, and the
  consumer groups that would lose records they have not read.
* **Committing is restricted** under every auth manager: the task refuses `dry_run` off unless the user who
  triggered the run is listed (by name or `role:NAME`) in the Variable `kafka_segments_delete_records_allowed`
  (default `role:ADMIN`). With the FAB auth manager, only the roles in `KAFKA_SEGMENTS_DELETE_RECORDS_ROLES`
  (default `Admin`) also get this DAG through `access_control`; other auth managers ignore
  `access_control`. See docs/airflow.md.
* **Not paused at creation**: it has no schedule, so being active starts nothing.
* **Where**: the same Variables and Connections as the maintenance DAG.
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import dag, get_current_context, task
from orchestration.declarations import (
    DELETE_RECORDS_DAG_ID,
    START_DATE,
    TAGS,
    declaring_access_control,
    default_args,
    delete_records_access_control,
    delete_records_params,
)
from orchestration.lineage import committing_outlets


@dag(
    dag_id=DELETE_RECORDS_DAG_ID,
    schedule=None,
    start_date=START_DATE,
    catchup=False,
    max_active_runs=1,
    is_paused_upon_creation=False,
    tags=TAGS,
    params=delete_records_params(),
    default_args=default_args(),
    access_control=delete_records_access_control(),
    doc_md=__doc__,
)
def kafka_segments_delete_records() -> None:
    @task(outlets=committing_outlets())
    def delete_records() -> dict[str, Any]:
        from orchestration.delete_records import delete_records_run

        return delete_records_run(get_current_context())

    delete_records()


with declaring_access_control():
    kafka_segments_delete_records()
