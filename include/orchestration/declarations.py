"""What the DAG files declare: ids, schedule, Params, default arguments and access control.

Imported at DAG parse time, so it reads nothing but the process environment and Airflow's already loaded
configuration (no Variables, Connections, files or network: those are read by the tasks when they run)."""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from airflow.sdk import Param, XComArg

from orchestration.retries import TransientOnlyRetryPolicy

MAINTENANCE_DAG_ID = "kafka_segments_maintenance"
DELETE_RECORDS_DAG_ID = "kafka_segments_delete_records"
TAGS = ["kafka-segments"]
START_DATE = datetime(2025, 1, 1, tzinfo=UTC)

SCHEDULE_ENV = "KAFKA_SEGMENTS_SCHEDULE"
DEFAULT_SCHEDULE = "@hourly"

DELETE_RECORDS_ROLES_ENV = "KAFKA_SEGMENTS_DELETE_RECORDS_ROLES"
"""Comma-separated FAB roles that may trigger the delete-records DAG (default ``Admin``)."""
DEFAULT_DELETE_RECORDS_ROLES = ("Admin",)
DELETE_RECORDS_PERMISSIONS: dict[str, set[str]] = {
    "DAGs": {"can_read", "can_edit"},
    "DAG Runs": {"can_read", "can_create"},
}
"""What ``access_control`` grants each privileged role on the delete-records DAG: see it, trigger it."""

_TOPIC_NAME = r"^[a-zA-Z0-9._-]{1,249}$"
"""Kafka's legal topic names (``Topic.validate``); the library checks again (``.`` and ``..`` too)."""
_TOPIC_PARTITION = r"^[a-zA-Z0-9._-]{1,249}-[0-9]{1,10}$"


LAKE_TURN_POKE_ENV = "KAFKA_SEGMENTS_LAKE_TURN_POKE_SECONDS"
"""Seconds between two looks of a maintenance run waiting for its turn on the lake (default 30)."""
DEFAULT_LAKE_TURN_POKE_S = 30.0
LAKE_TURN_TIMEOUT_S = 24 * 3600.0
"""How long a maintenance run waits for its turn on the lake before it fails."""
LAKE_TURN_WATCH_ENV = "KAFKA_SEGMENTS_LAKE_TURN_WATCH_SECONDS"
"""Seconds one look of the run next in line may watch the holder end (default 300; 0: no watching)."""
DEFAULT_LAKE_TURN_WATCH_S = 300.0


def maintenance_schedule(environ: Mapping[str, str] | None = None) -> str | None:
    """The maintenance DAG's schedule: ``$KAFKA_SEGMENTS_SCHEDULE`` (a cron expression or preset), ``@hourly``
    when unset, no schedule when set to ``none`` or empty."""
    value = (os.environ if environ is None else environ).get(SCHEDULE_ENV, DEFAULT_SCHEDULE).strip()
    return None if value.lower() in {"", "none"} else value


def lake_turn_poke_interval(environ: Mapping[str, str] | None = None) -> float:
    """Seconds between two looks of a run waiting for its turn (``$KAFKA_SEGMENTS_LAKE_TURN_POKE_SECONDS``,
    default 30; values that are not a positive number mean the default)."""
    seconds = _seconds_setting(environ, LAKE_TURN_POKE_ENV)
    return seconds if seconds is not None and seconds > 0 else DEFAULT_LAKE_TURN_POKE_S


def lake_turn_watch_seconds(environ: Mapping[str, str] | None = None) -> float:
    """Seconds one look of the run next in line may watch the run with the turn, to take the turn as soon as
    that run ends (``$KAFKA_SEGMENTS_LAKE_TURN_WATCH_SECONDS``, default 300; ``0`` turns watching off; values
    that are not a number at or above 0 mean the default)."""
    seconds = _seconds_setting(environ, LAKE_TURN_WATCH_ENV)
    return seconds if seconds is not None and seconds >= 0 else DEFAULT_LAKE_TURN_WATCH_S


def _seconds_setting(environ: Mapping[str, str] | None, name: str) -> float | None:
    """The finite number of seconds the environment variable ``name`` holds, or None (unset, not a number,
    NaN or infinite)."""
    value = (os.environ if environ is None else environ).get(name, "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) else None


def default_args() -> dict[str, Any]:
    """Every task retries transient errors only (``TransientOnlyRetryPolicy``), up to three times."""
    return {
        "owner": "kafka-segments",
        "retries": 3,
        "retry_delay": timedelta(minutes=1),
        "retry_exponential_backoff": 2.0,
        "max_retry_delay": timedelta(minutes=15),
        "retry_policy": TransientOnlyRetryPolicy(),
    }


def maintenance_params() -> dict[str, Param]:
    """The maintenance DAG's Params (the trigger form): ``null`` means "the default"; ``dry_run`` is a switch,
    on by default, that manual runs and backfills read (``orchestration.run_parameters.resolve_dry_run``)."""
    return {
        "topics": Param(
            None,
            type=["null", "array"],
            items={"type": "string", "pattern": _TOPIC_NAME},
            uniqueItems=True,
            title="Topics",
            description=(
                "Plan only these topics. Empty: every topic. New segments are adopted in every partition "
                "either way."
            ),
        ),
        "partitions": Param(
            None,
            type=["null", "array"],
            items={"type": "string", "pattern": _TOPIC_PARTITION},
            uniqueItems=True,
            title="Partitions",
            description='Plan only these partitions, as "topic-partition" (e.g. "orders-0"). Empty: all.',
        ),
        "dry_run": Param(
            True,
            type="boolean",
            title="Dry run",
            description=(
                "On (default): plan, run the Spark job and validate, then commit nothing (the report says "
                "what would change; commit and gc end skipped). Off: commit. Manual runs and backfills "
                "read this switch; scheduled runs always commit."
            ),
        ),
        "full_listing": Param(
            False,
            type="boolean",
            title="Full listing",
            description=(
                "Off (default): on a format 2 lake, list each partition after its newest segment. On: list "
                "the whole lake, which also reports a segment uploaded late below a partition's newest one "
                "and a live segment deleted or changed in place (docs/metadata-format-2.md)."
            ),
        ),
        "offsets_source": Param(
            None,
            type=["null", "string"],
            minLength=1,
            title="Consumer offsets source",
            description=(
                "Where the consumer-group offsets of this run come from: kafka://host:port (a cluster), "
                "lake (the __consumer_offsets segments in the lake) or the path of a snapshot JSON file. "
                "A snapshot already pinned for the run's time wins. Empty: the Variable "
                "kafka_segments_offsets_source (unset: only snapshots already pinned in the lake). "
                "Backfill runs always use the snapshot pinned for their date or the newest earlier one."
            ),
        ),
    }


def delete_records_params() -> dict[str, Param]:
    """The delete-records DAG's Params: the request and ``dry_run`` (true unless unticked)."""
    partition = {
        "type": "object",
        "required": ["topic", "partition", "offset"],
        "properties": {
            "topic": {"type": "string", "pattern": _TOPIC_NAME},
            "partition": {"type": "integer", "minimum": 0},
            "offset": {"type": "integer", "description": "-1: the high watermark (the log end offset)"},
        },
    }
    return {
        "request": Param(
            {"version": 1, "partitions": []},
            type="object",
            required=["partitions"],
            properties={
                "version": {"type": "integer", "enum": [1]},
                "partitions": {"type": "array", "items": partition},
            },
            title="Request",
            description=(
                "The kafka-delete-records.sh offset JSON: "
                '{"version": 1, "partitions": [{"topic": "t", "partition": 0, "offset": 42}]}. Each '
                "partition's log start offset moves up to its offset (never back); -1 means its high "
                "watermark. Records below it stop being readable and whole segments below it are retired."
            ),
        ),
        "dry_run": Param(
            True,
            type="boolean",
            title="Dry run",
            description=(
                "On (default): report each partition's result and change nothing. Off: commit, which only "
                "the users and roles of the Variable kafka_segments_delete_records_allowed may ask "
                "(default: role ADMIN)."
            ),
        ),
    }


def fab_auth_manager_configured() -> bool:
    """Whether the FAB auth manager is configured: the only auth manager that reads ``access_control``
    (Airflow syncs a DAG's ``access_control`` to FAB's permission tables only then, in
    ``dag_processing.collection``)."""
    from airflow.sdk import conf

    return "FabAuthManager" in conf.get("core", "auth_manager", fallback="")


def delete_records_access_control(
    environ: Mapping[str, str] | None = None, *, fab: bool | None = None
) -> dict[str, dict[str, Collection[str]]] | None:
    """The delete-records DAG's ``access_control``: ``DELETE_RECORDS_PERMISSIONS`` for each privileged role
    (``$KAFKA_SEGMENTS_DELETE_RECORDS_ROLES``, default ``Admin``), or ``None`` unless FAB is the auth manager
    (no other auth manager reads it; ``docs/airflow.md`` says what restricts the DAG then)."""
    if not (fab_auth_manager_configured() if fab is None else fab):
        return None
    configured = (os.environ if environ is None else environ).get(DELETE_RECORDS_ROLES_ENV, "")
    roles = [role.strip() for role in configured.split(",") if role.strip()] or DEFAULT_DELETE_RECORDS_ROLES
    return {
        role: {resource: set(actions) for resource, actions in DELETE_RECORDS_PERMISSIONS.items()}
        for role in roles
    }


@contextmanager
def declaring_access_control() -> Iterator[None]:
    """Around the construction of a DAG that sets ``access_control``: Airflow 3.3 warns
    ``RemovedInAirflow4Warning("The airflow.security.permissions module is deprecated ...")`` for every DAG
    whose ``access_control`` is not ``None``, although the DAG uses no part of that module; FAB still syncs
    ``access_control``. Only that warning is silenced, only here."""
    from airflow.sdk.exceptions import RemovedInAirflow4Warning

    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message=r"The airflow\.security\.permissions module is deprecated",
            category=RemovedInAirflow4Warning,
        )
        yield


def task_result(upstream: XComArg) -> dict[str, Any]:
    """An upstream task's result, as the argument of a downstream task. While the DAG is declared, the
    argument is the ``XComArg`` itself, and Airflow passes the dict the upstream task returned when the
    downstream one runs; Airflow's TaskFlow types (``Task.__call__: Callable[FParams, XComArg]``) cannot
    express that substitution, so the wiring says it here, once. Every maintenance task returns a JSON
    object (``orchestration.handover``)."""
    return cast("dict[str, Any]", upstream)
