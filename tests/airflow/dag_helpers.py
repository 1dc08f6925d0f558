"""Running the repository's DAGs for real in the test session (``dag.test()``: the scheduler's loop and the
task runner in this process, on the session's metadata database) and reading what a run left behind."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DAGS = Path(__file__).resolve().parents[2] / "dags"

AIRFLOW_WARNINGS = (
    # dag.test()'s in-process Execution API uses starlette's TestClient over httpx
    "ignore:Using `httpx` with `starlette.testclient` is deprecated",
)


def parse_dags() -> Any:
    """A fresh ``DagBag`` of the repository's DAG folder."""
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(DAGS))
    if bag.import_errors:
        raise AssertionError(f"DAG import errors: {bag.import_errors}")
    return bag


@functools.cache
def load_dag(dag_id: str) -> Any:
    """The DAG as parsed once for the session (to inspect; ``run_dag`` runs a freshly parsed one)."""
    return parse_dags().dags[dag_id]


def run_dag(dag_id: str, conf: Mapping[str, Any] | None = None) -> Any:
    """One manual run of a freshly parsed ``dag_id`` to its end; returns the ``DagRun``. (``dag.test()`` runs
    the tasks in this process and merges the run's conf into the task objects' Params, so a DAG object must
    not serve two runs.)"""
    return parse_dags().dags[dag_id].test(run_conf=dict(conf or {}))


def task_states(dag_run: Any) -> dict[str, str | None]:
    return {ti.task_id: None if ti.state is None else str(ti.state) for ti in dag_run.get_task_instances()}


def try_numbers(dag_run: Any) -> dict[str, int]:
    return {ti.task_id: ti.try_number for ti in dag_run.get_task_instances()}


def return_value(dag_run: Any, task_id: str) -> Any:
    """The task's ``return_value`` XCom in ``dag_run``."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        row = session.scalars(
            select(XComModel).where(
                XComModel.dag_id == dag_run.dag_id,
                XComModel.run_id == dag_run.run_id,
                XComModel.task_id == task_id,
                XComModel.key == "return_value",
            )
        ).one()
        value = row.value
    return json.loads(value) if isinstance(value, str) else value


def asset_events(uri: str) -> list[dict[str, Any]]:
    """The events of the Asset ``uri`` (oldest first): their extra and the run that emitted them."""
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        events = session.scalars(
            select(AssetEvent)
            .join(AssetModel, AssetEvent.asset_id == AssetModel.id)
            .where(AssetModel.uri == uri)
        ).all()
        return [
            {
                "extra": dict(event.extra or {}),
                "source_run_id": event.source_run_id,
                "dag_id": event.source_dag_id,
            }
            for event in sorted(events, key=lambda e: e.id)
        ]


def lineage_outputs(events_file: Path, dag_run: Any, task_id: str) -> list[tuple[str, str]]:
    """``(namespace, name)`` of the output datasets of the OpenLineage COMPLETE event of ``task_id`` in
    ``dag_run`` (the provider's file transport, one event a line)."""
    job = f"{dag_run.dag_id}.{task_id}"
    outputs: list[tuple[str, str]] = []
    lines = events_file.read_text().splitlines() if events_file.exists() else []
    for line in lines:
        event = json.loads(line)
        of_run = dag_run.run_id in line  # the run's id is in the event's Airflow run facets
        if event.get("eventType") == "COMPLETE" and event["job"]["name"] == job and of_run:
            outputs.extend((d["namespace"], d["name"]) for d in event.get("outputs", []))
    return outputs
