"""What an Airflow run asks the library to do: its ``now``, dry run or not, which partitions, which offsets
(docs/airflow.md, "Triggering").

``now`` is the data interval end of a scheduled or backfill run; a manual run's is the Logical Date of the
trigger form (no later than the trigger time), else its trigger time. Scheduled runs always commit; what a
person starts (a trigger or a backfill, whose dialog shows the same ``dry_run`` switch) is a dry run unless
switched off: destructive work is opt-in. A backfill uses only pinned snapshots. The lake run id is derived
from the Airflow run, so a retried ``prepare`` registers the same lake run."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kafka_segments.errors import LocatedError

if TYPE_CHECKING:
    from airflow.sdk import Context
    from airflow.sdk.types import DagRunProtocol
    from kafka_segments.lake.runs import Selection
    from kafka_segments.pipeline.offsets_input import OffsetsChoice

INTERVAL_END_RUN_TYPES = frozenset({"scheduled", "backfill"})
"""Run types whose ``now`` is their data interval end."""
COMMITTING_RUN_TYPES = frozenset({"scheduled"})
"""Run types that always commit (they ignore ``dry_run``): no person chose them in a form."""
BACKFILL = "backfill"
MANUAL = "manual"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


class RunParameterError(LocatedError):
    """A Param of the triggered run is not usable (``location`` names the Param)."""


@dataclass(frozen=True, slots=True)
class RunParameters:
    """The resolved request of one maintenance run (plain values: it travels in XCom)."""

    now_ms: int
    dry_run: bool
    topics: tuple[str, ...] | None = None
    partitions: tuple[str, ...] | None = None
    """``topic-partition`` names."""
    offsets_source: str | None = None
    earlier_pin: bool = False
    labels: Mapping[str, str] = field(default_factory=dict)
    full_listing: bool = False
    """List the whole lake, not each partition's tail (``RunRequest.full_listing``)."""

    def selection(self) -> Selection:
        from kafka_segments.lake.runs import Selection
        from kafka_segments.topic_partition import TopicPartition

        partitions = None
        if self.partitions is not None:
            partitions = tuple(TopicPartition.from_dir_name(name) for name in self.partitions)
        return Selection(topics=self.topics, partitions=partitions)

    def offsets_choice(self) -> OffsetsChoice:
        from kafka_segments.pipeline.offsets_input import OffsetsChoice

        if self.earlier_pin:
            return OffsetsChoice(earlier_pin=True)
        return OffsetsChoice(source=self.offsets_source)

    def to_dict(self) -> dict[str, Any]:
        return {
            "now_ms": self.now_ms,
            "dry_run": self.dry_run,
            "topics": None if self.topics is None else list(self.topics),
            "partitions": None if self.partitions is None else list(self.partitions),
            "offsets_source": self.offsets_source,
            "earlier_pin": self.earlier_pin,
            "labels": dict(self.labels),
            "full_listing": self.full_listing,
        }

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> RunParameters:
        topics, partitions = document.get("topics"), document.get("partitions")
        return cls(
            now_ms=int(document["now_ms"]),
            dry_run=bool(document["dry_run"]),
            topics=None if topics is None else tuple(str(t) for t in topics),
            partitions=None if partitions is None else tuple(str(p) for p in partitions),
            offsets_source=document.get("offsets_source"),
            earlier_pin=bool(document.get("earlier_pin", False)),
            labels={str(k): str(v) for k, v in (document.get("labels") or {}).items()},
            full_listing=bool(document.get("full_listing", False)),
        )


def run_type_of(dag_run: DagRunProtocol) -> str:
    """The run's type as a plain string (``scheduled``, ``backfill``, ``manual``, ...)."""
    run_type = dag_run.run_type
    return str(getattr(run_type, "value", run_type))


def run_now_ms(dag_run: DagRunProtocol) -> int:
    """The run's ``now`` in epoch milliseconds (see the module docstring): a manual run's Logical Date is
    the time it applies its rules at, but never one after the trigger (rules applied at a future time would
    delete what has not expired yet)."""
    moment: datetime = dag_run.run_after
    run_type = run_type_of(dag_run)
    if run_type in INTERVAL_END_RUN_TYPES and dag_run.data_interval_end is not None:
        moment = dag_run.data_interval_end
    elif run_type == MANUAL and dag_run.logical_date is not None:
        moment = min(dag_run.logical_date, dag_run.run_after)
    return int(moment.timestamp() * 1000)


def resolve_dry_run(value: object, run_type: str) -> bool:
    """Whether the run is a dry run: never for scheduled runs; otherwise (manual and backfill runs, which a
    person starts from a form showing the switch) the Param ``dry_run`` (``None``: a dry run)."""
    if value is not None and not isinstance(value, bool):
        raise RunParameterError(f"must be true, false or empty, not {value!r}", location="Param dry_run")
    if run_type in COMMITTING_RUN_TYPES:
        return False
    return value is not False


def run_labels(dag_run: DagRunProtocol) -> dict[str, str]:
    """Where the lake run came from (recorded in its request and report)."""
    labels = {
        "airflow_dag_id": dag_run.dag_id,
        "airflow_run_id": dag_run.run_id,
        "airflow_run_type": run_type_of(dag_run),
    }
    if dag_run.triggering_user_name:
        labels["airflow_triggered_by"] = dag_run.triggering_user_name
    return labels


def lake_run_id(dag_run: DagRunProtocol) -> str:
    """The lake run id of this Airflow run: ``af-`` + the readable part of its run id + a hash of the DAG id,
    the run id and the clear number (a cleared and rerun Airflow run gets a new lake run)."""
    clear_number = dag_run.clear_number or 0
    digest = hashlib.sha256(f"{dag_run.dag_id}\0{dag_run.run_id}\0{clear_number}".encode()).hexdigest()
    readable = _UNSAFE.sub("-", dag_run.run_id).strip("-_")[:60]
    return f"af-{readable}-{digest[:12]}" if readable else f"af-{digest[:12]}"


def maintenance_parameters(context: Context, *, default_offsets_source: str | None) -> RunParameters:
    """The maintenance run's request from its context (Params, run type, data interval)."""
    dag_run = context["dag_run"]
    params: Mapping[str, Any] = context["params"]
    run_type = run_type_of(dag_run)
    backfill = run_type == BACKFILL
    source = _optional_text(params.get("offsets_source"), "offsets_source") or default_offsets_source
    return RunParameters(
        now_ms=run_now_ms(dag_run),
        dry_run=resolve_dry_run(params.get("dry_run"), run_type),
        topics=_topics(params.get("topics")),
        partitions=_partitions(params.get("partitions")),
        offsets_source=None if backfill else source,
        earlier_pin=backfill,
        labels=run_labels(dag_run),
        full_listing=_switch(params.get("full_listing"), "full_listing"),
    )


def _switch(value: object, name: str) -> bool:
    """A boolean Param (``None``: off)."""
    if value is not None and not isinstance(value, bool):
        raise RunParameterError(f"must be true, false or empty, not {value!r}", location=f"Param {name}")
    return value is True


def _optional_text(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise RunParameterError(f"must be a string, not {value!r}", location=f"Param {name}")
    return value.strip() or None


def _names(value: object, name: str) -> tuple[str, ...] | None:
    """A list Param's distinct, non-blank items: ``None`` or an empty list mean "all"."""
    if value is None:
        return None
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise RunParameterError(f"must be a list of names, not {value!r}", location=f"Param {name}")
    names = tuple(dict.fromkeys(str(item).strip() for item in value if str(item).strip()))
    return names or None


def _topics(value: object) -> tuple[str, ...] | None:
    from kafka_segments.errors import InvalidTopicError
    from kafka_segments.topic_partition import validate_topic_name

    names = _names(value, "topics")
    for item in names or ():
        try:
            validate_topic_name(item)
        except InvalidTopicError as exc:
            raise RunParameterError(f"{item!r}: {exc}", location="Param topics") from None
    return names


def _partitions(value: object) -> tuple[str, ...] | None:
    from kafka_segments.errors import InvalidTopicError
    from kafka_segments.topic_partition import TopicPartition

    names = _names(value, "partitions")
    for item in names or ():
        try:
            TopicPartition.from_dir_name(item)
        except InvalidTopicError as exc:
            raise RunParameterError(
                f"{item!r} is not a topic-partition name (e.g. orders-0): {exc}", location="Param partitions"
            ) from None
    return names
