"""The hand-over of the lake's turn (``orchestration.lake_turns``, docs/airflow.md "One run at a time on a
lake"): the run next in line is the one whose only obstacle is the holder, and during its look it watches the
holder end (for a bounded time) instead of looking again a whole poke interval later."""

from __future__ import annotations

import pytest
from orchestration.declarations import DEFAULT_LAKE_TURN_WATCH_S, LAKE_TURN_WATCH_ENV, lake_turn_watch_seconds
from orchestration.lake_turns import RunRef, Turns, decide_turn, watch_holder

pytestmark = pytest.mark.unit


def ref(day: int, run_id: str | None = None) -> RunRef:
    return RunRef(now_ms=day * 86_400_000, dag_id="kafka_segments_maintenance", run_id=run_id or f"bf__{day}")


HOLDER = ref(19)


def test_the_earliest_waiting_run_is_next_in_line_and_a_later_one_is_not() -> None:
    first, later = ref(20), ref(21)
    held = Turns(holder=HOLDER)
    first_looks = decide_turn(held, first, is_active=lambda _: True, earlier_running=HOLDER)
    assert (first_looks.granted, first_looks.blocking, first_looks.next_in_line) == (False, HOLDER, True)

    later_looks = decide_turn(first_looks.turns, later, is_active=lambda _: True, earlier_running=first)
    assert (later_looks.granted, later_looks.blocking, later_looks.next_in_line) == (False, HOLDER, False)
    again = decide_turn(later_looks.turns, first, is_active=lambda _: True, earlier_running=HOLDER)
    assert again.next_in_line  # a later waiting run takes nothing from the earliest


def test_a_run_behind_an_earlier_running_run_that_has_not_looked_is_not_next_in_line() -> None:
    unseen, me = ref(20), ref(21)
    decision = decide_turn(Turns(holder=HOLDER), me, is_active=lambda _: True, earlier_running=unseen)
    assert not decision.granted
    assert not decision.next_in_line


def test_granted_and_free_lake_decisions_are_not_in_line() -> None:
    assert not decide_turn(Turns(), ref(20), is_active=lambda _: True).next_in_line
    behind_waiting = decide_turn(Turns(waiting=(ref(20),)), ref(21), is_active=lambda _: True)
    assert (behind_waiting.granted, behind_waiting.next_in_line) == (False, False)


class Clock:
    """A fake clock that ``sleep`` moves on, and a holder that ends at ``ends_at``."""

    def __init__(self, ends_at: float) -> None:
        self.now = 0.0
        self.ends_at = ends_at
        self.questions = 0

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def is_active(self, run: RunRef) -> bool:
        assert run == HOLDER
        self.questions += 1
        return self.now < self.ends_at


def watch(clock: Clock, *, limit_s: float) -> bool:
    def now() -> float:
        return clock.now

    return watch_holder(
        HOLDER, limit_s=limit_s, is_active=clock.is_active, interval_s=2, sleep=clock.sleep, clock=now
    )


def test_the_watcher_sees_the_holder_end_within_one_interval() -> None:
    clock = Clock(ends_at=7.0)
    ended = watch(clock, limit_s=300)
    assert ended
    assert clock.now == 8.0  # the first question after the end: 0, 2, 4, 6, 8
    assert clock.questions == 5


def test_the_watch_gives_up_at_its_limit() -> None:
    clock = Clock(ends_at=1_000.0)
    ended = watch(clock, limit_s=5)
    assert not ended
    assert clock.now == 5.0  # the last sleep is cut to the limit


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("", DEFAULT_LAKE_TURN_WATCH_S),
        ("45", 45.0),
        ("0", 0.0),
        ("-1", DEFAULT_LAKE_TURN_WATCH_S),
        ("soon", DEFAULT_LAKE_TURN_WATCH_S),
        ("nan", DEFAULT_LAKE_TURN_WATCH_S),
        ("inf", DEFAULT_LAKE_TURN_WATCH_S),
    ],
)
def test_the_watch_limit_comes_from_the_environment(value: str, seconds: float) -> None:
    assert lake_turn_watch_seconds({LAKE_TURN_WATCH_ENV: value}) == seconds
