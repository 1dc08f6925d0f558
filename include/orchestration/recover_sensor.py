"""The maintenance DAG's ``recover`` task: a sensor that waits for the run's turn on the lake
(``orchestration.lake_turns``), then recovers the lake (``orchestration.maintenance.recover_lake``).

Imported at DAG parse time: this module imports airflow and ``orchestration.declarations`` only; the task's
work is imported when it runs. ``reschedule`` mode: a waiting run holds no worker slot between two looks;
``max_active_tis_per_dag=1``: one look at a time over every run of the DAG, scheduled, manual or backfill."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseSensorOperator, PokeReturnValue

from orchestration.declarations import LAKE_TURN_TIMEOUT_S, lake_turn_poke_interval

if TYPE_CHECKING:
    from airflow.sdk import Context


class RecoverInTurnSensor(BaseSensorOperator):
    """Task ``recover``: done (with the recovery's document as XCom) once the run has its turn."""

    def __init__(self, *, task_id: str = "recover", **kwargs: Any) -> None:
        super().__init__(
            task_id=task_id,
            mode="reschedule",
            poke_interval=lake_turn_poke_interval(),
            timeout=LAKE_TURN_TIMEOUT_S,
            max_active_tis_per_dag=1,
            **kwargs,
        )

    def poke(self, context: Context) -> PokeReturnValue:
        from orchestration.maintenance import recover_in_turn

        return recover_in_turn(context)
