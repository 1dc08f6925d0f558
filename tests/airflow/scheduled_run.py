"""Create one scheduled run in the metadata database of the environment's Airflow, as the scheduler does
for its timetable (run type ``scheduled``, triggered by the timetable, queued for the scheduler to start):
``python scheduled_run.py DAG_ID ISO_TIME`` (a zero-length data interval at ISO_TIME, as the DAG's cron
trigger timetable gives). A test uses it to put a scheduled run next to a backfill at a chosen time (the
REST API only creates manual runs)."""

from __future__ import annotations

import sys
from datetime import datetime


def scheduled_run_id(when: datetime) -> str:
    return f"scheduled__{when.isoformat()}"


def main(dag_id: str, when_iso: str) -> None:
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunTriggeredByType, DagRunType

    when = datetime.fromisoformat(when_iso)
    with create_session() as session:
        dag = SerializedDagModel.get_dag(dag_id, session=session)
        if dag is None:
            raise SystemExit(f"no serialized DAG {dag_id}")
        run = dag.create_dagrun(
            run_id=scheduled_run_id(when),
            logical_date=when,
            data_interval=(when, when),
            run_after=when,
            run_type=DagRunType.SCHEDULED,
            triggered_by=DagRunTriggeredByType.TIMETABLE,
            state=DagRunState.QUEUED,
            session=session,
        )
        sys.stdout.write(f"created {run.run_id}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
