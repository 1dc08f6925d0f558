"""Turns on the lake: one maintenance run at a time works on a lake, from its recovery to its end, whoever
started it, and waiting runs go in the order of their ``now`` (docs/airflow.md, "One run at a time on a
lake").

Why: two runs that prepare on the same head both try to commit, and the second fails with
``CommitConflictError``; Airflow's ``max_active_runs`` does not stop that, as a backfill counts its runs apart
(``--max-active-runs``, default 10) and scheduled runs do not count backfill runs.

A run takes the turn when no running run has it, no waiting running run has an earlier ``now``, and no running
run of the DAG has an earlier logical date (one that has not looked yet: the runs of a backfill start
together, and the first to look must not be a later date). A run that is not running loses its turn and its
place. So a run never waits for itself, the run with the turn never waits for a waiting one, and no running
run waits for a queued one (which might need its slot of ``max_active_runs``): no deadlock.

The run next in line (the holder is its only obstacle) may watch the holder during its look
(``watch_holder``): it asks for the holder's state every ``WATCH_INTERVAL_S`` seconds, for a bounded time, and
looks again as soon as the holder has ended, instead of a whole poke interval later. It stops watching at once
when the holder is back at its own look (a retried or cleared ``recover``), which needs the one slot the
watcher holds (``max_active_tis_per_dag=1``)."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow.sdk import Context

log = logging.getLogger(__name__)

TURNS_VARIABLE_PREFIX = "kafka_segments_lake_turns_"
ACTIVE_RUN_STATES = frozenset({"running"})
_DESCRIPTION = (
    "kafka-segments: which maintenance run has the turn on the lake {lake} and which runs wait "
    "(written by the recover task; see docs/airflow.md)"
)


@dataclass(frozen=True, slots=True, order=True)
class RunRef:
    """One Airflow run, ordered by its ``now`` (then DAG id and run id, to break ties)."""

    now_ms: int
    dag_id: str
    run_id: str

    def same_run(self, other: RunRef) -> bool:
        return (self.dag_id, self.run_id) == (other.dag_id, other.run_id)

    def to_dict(self) -> dict[str, Any]:
        return {"now_ms": self.now_ms, "dag_id": self.dag_id, "run_id": self.run_id}

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> RunRef:
        return cls(int(document["now_ms"]), str(document["dag_id"]), str(document["run_id"]))

    def __str__(self) -> str:
        return f"{self.dag_id} run {self.run_id} (now={self.now_ms})"


@dataclass(frozen=True, slots=True)
class Turns:
    """The lake's turns: who has it, who waits (sorted)."""

    holder: RunRef | None = None
    waiting: tuple[RunRef, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "holder": None if self.holder is None else self.holder.to_dict(),
            "waiting": [ref.to_dict() for ref in self.waiting],
        }

    @classmethod
    def from_dict(cls, document: Mapping[str, Any] | None) -> Turns:
        if not document:
            return cls()
        holder = document.get("holder")
        return cls(
            holder=None if holder is None else RunRef.from_dict(holder),
            waiting=tuple(sorted(RunRef.from_dict(item) for item in document.get("waiting") or ())),
        )


@dataclass(frozen=True, slots=True)
class TurnDecision:
    """The outcome of one look: whether the run has the turn, the turns to store, whom it waits for."""

    granted: bool
    turns: Turns
    blocking: RunRef | None = None
    next_in_line: bool = False
    """Waits for the holder only: nothing else would stop the run when the holder ends."""


def decide_turn(
    turns: Turns, me: RunRef, *, is_active: Callable[[RunRef], bool], earlier_running: RunRef | None = None
) -> TurnDecision:
    """One look at the turns by run ``me`` (see the module docstring); ``is_active`` says whether a run is
    running, ``earlier_running`` is a running run of the DAG with an earlier logical date, if any. Runs
    that are not running are dropped from the turns."""
    others = tuple(sorted(ref for ref in set(turns.waiting) if not ref.same_run(me) and is_active(ref)))
    holder = turns.holder
    if holder is not None and holder.same_run(me):
        return TurnDecision(True, Turns(holder=me, waiting=others))
    if holder is not None and is_active(holder):
        waiting = Turns(holder=holder, waiting=tuple(sorted((*others, me))))
        blocked_later = earlier_running is not None and not (
            earlier_running.same_run(holder) or earlier_running.same_run(me)
        )
        next_in_line = not blocked_later and not any(ref < me for ref in others)
        return TurnDecision(False, waiting, holder, next_in_line=next_in_line)
    earlier = [ref for ref in others if ref < me]
    if not earlier and earlier_running is not None and not earlier_running.same_run(me):
        earlier = [earlier_running]
    if earlier:
        return TurnDecision(False, Turns(holder=None, waiting=tuple(sorted((*others, me)))), earlier[0])
    return TurnDecision(True, Turns(holder=me, waiting=others))


WATCH_INTERVAL_S = 2.0
"""Seconds between two questions of a watching run about the holder's state."""


def watch_holder(
    holder: RunRef,
    *,
    limit_s: float,
    is_active: Callable[[RunRef], bool],
    interval_s: float = WATCH_INTERVAL_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Whether ``holder`` stopped running within ``limit_s`` seconds (asked every ``interval_s``)."""
    deadline = clock() + limit_s
    while is_active(holder):
        left = deadline - clock()
        if left <= 0:
            return False
        sleep(min(interval_s, left))
    return True


def take_turn_watching(context: Context, lake: str, *, now_ms: int, watch_s: float) -> TurnDecision:
    """``take_turn``; when the run is next in line, watch the holder for up to ``watch_s`` seconds and look
    again as soon as it has ended."""
    decision = take_turn(context, lake, now_ms=now_ms)
    if decision.granted or not decision.next_in_line or decision.blocking is None or watch_s <= 0:
        return decision
    task_id = context["ti"].task_id

    def busy(ref: RunRef) -> bool:  # a holder back at its own look (retried, cleared) needs the slot
        return _run_is_active(ref) and _task_succeeded(ref, task_id)

    log.info("next in line: watching %s for up to %.0f s", decision.blocking, watch_s)
    if not watch_holder(decision.blocking, limit_s=watch_s, is_active=busy):
        return decision
    return take_turn(context, lake, now_ms=now_ms)


def turns_variable(lake: str) -> str:
    """The Variable that holds the turns of ``lake`` (a hash: lake URIs may be long or odd)."""
    return TURNS_VARIABLE_PREFIX + hashlib.sha256(lake.encode()).hexdigest()[:16]


def take_turn(context: Context, lake: str, *, now_ms: int) -> TurnDecision:
    """One look at ``lake``'s turns by the context's run; stores the turns when they changed."""
    from airflow.sdk import Variable
    from kafka_segments.redaction import redact_uri

    from orchestration.run_parameters import run_now_ms

    dag_run = context["dag_run"]
    key = turns_variable(lake)
    stored = Turns.from_dict(Variable.get(key, default=None, deserialize_json=True))
    me = RunRef(now_ms=now_ms, dag_id=dag_run.dag_id, run_id=dag_run.run_id)
    previous = context["ti"].get_previous_dagrun(state="running")  # by logical date: none for manual runs
    earlier = None if previous is None else RunRef(run_now_ms(previous), previous.dag_id, previous.run_id)
    decision = decide_turn(stored, me, is_active=_run_is_active, earlier_running=earlier)
    if decision.turns != stored:
        Variable.set(
            key,
            decision.turns.to_dict(),
            description=_DESCRIPTION.format(lake=redact_uri(lake)),
            serialize_json=True,
        )
    if decision.granted:
        log.info("%s has the turn on the lake (Variable %s)", me, key)
    else:
        log.info("%s waits for its turn on the lake: %s goes first (Variable %s)", me, decision.blocking, key)
    return decision


def _run_is_active(ref: RunRef) -> bool:
    """Whether the run is running (a queued, ended or deleted run is not)."""
    from airflow.sdk.exceptions import AirflowRuntimeError
    from airflow.sdk.execution_time.task_runner import RuntimeTaskInstance

    try:
        state = RuntimeTaskInstance.get_dagrun_state(ref.dag_id, ref.run_id)
    except AirflowRuntimeError:
        return False
    return str(getattr(state, "value", state)) in ACTIVE_RUN_STATES


def _task_succeeded(ref: RunRef, task_id: str) -> bool:
    """Whether the run's task ``task_id`` has succeeded (the holder has its turn and is past its look)."""
    from airflow.sdk.exceptions import AirflowRuntimeError
    from airflow.sdk.execution_time.task_runner import RuntimeTaskInstance

    try:
        count = RuntimeTaskInstance.get_ti_count(
            dag_id=ref.dag_id, task_ids=[task_id], run_ids=[ref.run_id], states=["success"]
        )
    except AirflowRuntimeError:
        return False
    return count > 0
