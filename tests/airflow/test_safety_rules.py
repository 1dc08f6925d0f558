"""The rules that keep Airflow users from committing by surprise, without running a DAG: the trigger
form's ``dry_run`` switch, the lake's turns (one maintenance run at a time, in date order) and who may commit
a delete-records run."""

from __future__ import annotations

import pytest
from dag_helpers import load_dag
from orchestration.entitlement import (
    ALLOWED_VARIABLE,
    Allowed,
    AuthConfig,
    DeleteRecordsNotAllowedError,
    check_commit_allowed,
)
from orchestration.lake_turns import RunRef, Turns, decide_turn, turns_variable
from orchestration.run_parameters import resolve_dry_run

pytestmark = pytest.mark.airflow

SIMPLE = "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
FAB = "airflow.providers.fab.auth_manager.fab_auth_manager.FabAuthManager"
USERS = ("admin:ADMIN", "alice:USER", "victor:VIEWER", "olga:OP")


@pytest.mark.parametrize("dag_id", ["kafka_segments_maintenance", "kafka_segments_delete_records"])
def test_the_trigger_forms_dry_run_is_a_switch_shown_on_and_a_trigger_unpauses_nothing(dag_id: str) -> None:
    dag = load_dag(dag_id)
    param = dag.params.get_param("dry_run")
    assert param.schema["type"] == "boolean"  # a switch with two positions, no "empty" third one
    assert param.value is True
    assert dag.is_paused_upon_creation is False  # active from deployment: "Unpause on trigger" has no effect


def test_scheduled_runs_always_commit_and_people_commit_only_when_they_say_so() -> None:
    """A backfill reads the switch its dialog shows (on by default), as a manual trigger does."""
    assert [resolve_dry_run(value, "scheduled") for value in (None, True, False)] == [False] * 3
    for run_type in ("manual", "backfill", "asset_triggered"):
        assert [resolve_dry_run(value, run_type) for value in (None, True, False)] == [True, True, False]
    assert (
        "Manual runs and backfills read this switch; scheduled runs always commit."
        in load_dag("kafka_segments_maintenance").params.get_param("dry_run").description
    )


def ref(day: int, run_id: str | None = None, dag_id: str = "kafka_segments_maintenance") -> RunRef:
    return RunRef(now_ms=day * 86_400_000, dag_id=dag_id, run_id=run_id or f"backfill__{day}")


def test_a_free_lake_is_taken_and_a_held_one_makes_the_run_wait_in_line() -> None:
    first, second, scheduled = ref(19), ref(20), ref(30, "scheduled__30")

    taken = decide_turn(Turns(), second, is_active=lambda _: True)
    assert taken.granted
    assert taken.turns == Turns(holder=second)

    waits = decide_turn(taken.turns, scheduled, is_active=lambda _: True)
    assert not waits.granted
    assert waits.blocking == second
    waits = decide_turn(waits.turns, first, is_active=lambda _: True)
    assert not waits.granted
    assert waits.turns == Turns(holder=second, waiting=(first, scheduled))  # in date order

    again = decide_turn(waits.turns, second, is_active=lambda _: True)  # a retried or cleared run
    assert again.granted
    assert again.turns.holder == second


def test_when_the_holder_ends_the_earliest_waiting_run_goes_next() -> None:
    done, first, later = ref(18), ref(19), ref(20)
    turns = Turns(holder=done, waiting=(first, later))
    active = {first, later}

    later_looks = decide_turn(turns, later, is_active=lambda r: r in active)
    assert not later_looks.granted
    assert later_looks.blocking == first
    assert later_looks.turns == Turns(holder=None, waiting=(first, later))

    first_looks = decide_turn(later_looks.turns, first, is_active=lambda r: r in active)
    assert first_looks.granted
    assert first_looks.turns == Turns(holder=first, waiting=(later,))


def test_a_free_lake_waits_for_a_running_run_of_an_earlier_date_that_has_not_looked_yet() -> None:
    first, later = ref(19), ref(21)

    decision = decide_turn(Turns(), later, is_active=lambda _: True, earlier_running=first)
    assert not decision.granted
    assert decision.blocking == first
    assert decision.turns == Turns(holder=None, waiting=(later,))
    assert decide_turn(decision.turns, first, is_active=lambda _: True).granted


def test_runs_that_ended_lose_their_turn_and_their_place() -> None:
    gone, me = ref(10), ref(20)
    decision = decide_turn(Turns(holder=ref(5), waiting=(gone,)), me, is_active=lambda r: False)
    assert decision.granted
    assert decision.turns == Turns(holder=me)


def test_the_turns_survive_their_variable_and_each_lake_has_its_own() -> None:
    turns = Turns(holder=ref(19), waiting=(ref(20), ref(21, dag_id="other")))
    assert Turns.from_dict(turns.to_dict()) == turns
    assert Turns.from_dict(None) == Turns()
    assert turns_variable("s3://a/lake") != turns_variable("s3://b/lake")
    assert turns_variable("s3://a/lake").startswith("kafka_segments_lake_turns_")


def simple(*, all_admins: bool = False) -> AuthConfig:
    return AuthConfig(auth_manager=SIMPLE, all_admins=all_admins, simple_users=USERS)


def test_only_admins_may_commit_deletions_by_default() -> None:
    allowed = Allowed.parse(None)
    assert check_commit_allowed("admin", allowed=allowed, auth=simple()) == "admin"
    for user in ("alice", "olga", "victor", "stranger"):
        with pytest.raises(DeleteRecordsNotAllowedError, match=ALLOWED_VARIABLE):
            check_commit_allowed(user, allowed=allowed, auth=simple())
    with pytest.raises(DeleteRecordsNotAllowedError, match="has none"):
        check_commit_allowed(None, allowed=allowed, auth=simple())
    assert check_commit_allowed("Anonymous", allowed=allowed, auth=simple(all_admins=True)) == "Anonymous"


def test_the_setting_lists_users_and_roles() -> None:
    allowed = Allowed.parse(" alice , role:op ")
    assert check_commit_allowed("Alice", allowed=allowed, auth=simple()) == "Alice"
    assert check_commit_allowed("olga", allowed=allowed, auth=simple()) == "olga"
    with pytest.raises(DeleteRecordsNotAllowedError) as refused:
        check_commit_allowed("admin", allowed=allowed, auth=simple())
    assert "'admin' (role ADMIN) may not commit" in str(refused.value)
    assert "only alice, role:op may" in str(refused.value)


def test_other_auth_managers_match_user_names_only() -> None:
    fab = AuthConfig(auth_manager=FAB, simple_users=USERS)
    with pytest.raises(DeleteRecordsNotAllowedError, match="no role known"):
        check_commit_allowed("admin", allowed=Allowed.parse(None), auth=fab)
    assert check_commit_allowed("admin", allowed=Allowed.parse("admin"), auth=fab) == "admin"
