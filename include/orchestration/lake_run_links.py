"""From an Airflow run of the maintenance DAG to its lake run's files: the task instances' extra links
(Airflow's "Extra links" of a task: the plugin declares them as global links) to the report, the validation
page and the Data Docs the lake view serves (``orchestration.lake_run_files``; docs/airflow.md, "The lake
view").

Airflow's API server asks a link for its URL when the UI shows a task instance: the lake run id is the one
the DAG run's ``prepare`` task handed on (its XCom), the lake the DAGs' (``default`` on the view). A task of
another DAG, or a run not prepared yet, gets no URL (Airflow shows the link disabled)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs
from airflow.sdk.bases.operatorlink import BaseOperatorLink

from orchestration.lake_run_files import LINKED

if TYPE_CHECKING:
    from airflow.sdk import BaseOperator
    from airflow.sdk.types import TaskInstanceKey

MAINTENANCE_DAG_ID = "kafka_segments_maintenance"
PREPARE_TASK_ID = "prepare"
FILES_PATH = "/kafka-segments/lakes/default/runs/"
"""The DAGs' lake's run files on the API server (``lake_view_app.URL_PREFIX``, the lake named ``default``)."""


@attrs.define()
class LakeRunFileLink(BaseOperatorLink):
    """A link named ``label`` to the file ``path`` of the lake run of the task's DAG run."""

    label: str
    path: str

    @property
    def name(self) -> str:
        return f"Lake run: {self.label}"

    def get_link(self, operator: BaseOperator, *, ti_key: TaskInstanceKey) -> str:
        if ti_key.dag_id != MAINTENANCE_DAG_ID:
            return ""
        run_id = prepared_lake_run(ti_key.dag_id, ti_key.run_id)
        return "" if run_id is None else f"{FILES_PATH}{run_id}/{self.path}"


def run_file_links() -> list[LakeRunFileLink]:
    """The links the plugin declares: one per file the lake view links to on a commit."""
    return [LakeRunFileLink(label, path) for label, path in LINKED]


def prepared_lake_run(dag_id: str, dag_run_id: str) -> str | None:
    """The lake run id the DAG run's ``prepare`` task returned, ``None`` before it did."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from orchestration.lake_run_files import valid_run_id

    with create_session() as session:
        value = session.scalars(
            select(XComModel.value).where(
                XComModel.dag_id == dag_id,
                XComModel.run_id == dag_run_id,
                XComModel.task_id == PREPARE_TASK_ID,
                XComModel.key == "return_value",
            )
        ).first()
    handle: Any = json.loads(value) if isinstance(value, str) else value
    run_id = handle.get("run_id") if isinstance(handle, dict) else None
    return run_id if isinstance(run_id, str) and valid_run_id(run_id) else None
