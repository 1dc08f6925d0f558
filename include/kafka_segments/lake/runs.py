"""What a run is and how it ended: the two records of a run's folder, as values and as JSON (no I/O:
``lake.run_folder`` reads and writes them).

``run.json`` (``RunRecord``) names the run's *base* and what it was asked to do; a run can only ever commit
``base + 1``, which fences zombies (a stray duplicate of an old run finds its version taken). A dry run
registers with ``dry_run: true`` and is never fenced (docs/lake.md, "Dry runs"). ``outcome.json``
(``RunEnd``) records the ``RunOutcome`` itself, with the reason text beside it."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any

from kafka_segments.lake.json_document import Reader, dump_json, load_document
from kafka_segments.lake.layout import validate_run_id
from kafka_segments.state import PartitionState
from kafka_segments.topic_partition import TopicPartition

RUN_FORMAT_VERSION = 1
"""``run.json`` and ``outcome.json``; later fields (the request, ``run_outcome``) were added without a new
version: readers ignore unknown fields and older documents lack them."""


class RunOutcome(StrEnum):
    """How a run ended (the value is what reports print): the one decoder of a run's end."""

    COMMITTED = "committed"
    DRY_RUN = "dry run"
    NOTHING_TO_CHANGE = "nothing to change"
    REJECTED = "rejected by validation"
    LOST = "lost to another commit"
    ABORTED = "aborted"
    """Ended without a commit for another reason: a failure before the commit, or discarded by ``recover``."""

    @property
    def is_clean(self) -> bool:
        """An end a later stage may take as final without an error (nothing went wrong)."""
        return self in _CLEAN_ENDS


_CLEAN_ENDS = frozenset({RunOutcome.COMMITTED, RunOutcome.DRY_RUN, RunOutcome.NOTHING_TO_CHANGE})

DRY_RUN_REASON = "dry run: planned and validated, nothing committed"
NOTHING_TO_CHANGE_REASON = "nothing to change"
NOTHING_TO_ADOPT_REASON = "nothing to adopt"
UNCHANGED_REASONS = frozenset({NOTHING_TO_CHANGE_REASON, NOTHING_TO_ADOPT_REASON})
"""The recorded reasons of a run that ended with nothing to change (``commit(unchanged_reason=)``)."""


class Outcome(Enum):
    """``outcome.json``'s first fact: whether the run committed a version (kept beside ``run_outcome``
    for readers of the first releases)."""

    COMMITTED = "committed"
    ABORTED = "aborted"


@dataclass(frozen=True, slots=True)
class Selection:
    """The partitions a run plans (``None``: all). Adoption always covers the whole lake."""

    topics: tuple[str, ...] | None = None
    partitions: tuple[TopicPartition, ...] | None = None
    _topic_set: frozenset[str] | None = field(init=False, repr=False, compare=False, default=None)
    _partition_set: frozenset[TopicPartition] | None = field(
        init=False, repr=False, compare=False, default=None
    )

    def __post_init__(self) -> None:
        # membership is tested once per partition of the lake: sets keep a run linear in the partitions
        object.__setattr__(self, "_topic_set", None if self.topics is None else frozenset(self.topics))
        topic_partitions = None if self.partitions is None else frozenset(self.partitions)
        object.__setattr__(self, "_partition_set", topic_partitions)

    def __contains__(self, topic_partition: object) -> bool:
        if not isinstance(topic_partition, TopicPartition):
            return False
        if self._topic_set is not None and topic_partition.topic not in self._topic_set:
            return False
        return self._partition_set is None or topic_partition in self._partition_set

    def select(self, states: Sequence[PartitionState]) -> list[PartitionState]:
        return [state for state in states if state.topic_partition in self]

    def missing(self, have: Collection[TopicPartition]) -> list[str]:
        """The chosen topics and ``topic-partition``s not among ``have`` (a typo: not in the lake)."""
        topics = {tp.topic for tp in have}
        missing = [topic for topic in self.topics or () if topic not in topics]
        return missing + [str(tp) for tp in self.partitions or () if tp not in have]


ALL_PARTITIONS = Selection()
"""Plan every partition."""


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What a run was asked to do, beyond its ``now`` and dry run: part of its ``run.json``."""

    selection: Selection = ALL_PARTITIONS
    """The partitions the run plans."""
    offsets_snapshot_id: str | None = None
    """The offsets snapshot's id in the lake (``None``: a dry run's, kept in the run's folder only)."""
    offsets_origin: str | None = None
    """``None``: the run has no offsets snapshot (consumed retention cannot apply)."""
    offsets_note: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Where the run came from (e.g. ``engine``, ``airflow_run_id``); reported, never interpreted."""
    full_listing: bool = False
    """List the whole lake, not each partition's tail (a format 2 base: ``lake.tail_listing``)."""


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A run as registered in the lake: its base and what it was asked to do."""

    run_id: str
    operation: str
    base_version: int | None
    """The committed version the run builds on (``None``: the lake had no manifest)."""
    started_at_ms: int
    now_ms: int
    dry_run: bool = False
    """A dry run: it never commits (``LakeTransaction.commit`` ends it as ``RunOutcome.DRY_RUN``)."""
    request: RunRequest = field(default_factory=RunRequest)

    @property
    def commit_version(self) -> int:
        """The only version this run may create."""
        return (self.base_version or 0) + 1

    @property
    def selection(self) -> Selection:
        return self.request.selection

    @property
    def labels(self) -> Mapping[str, str]:
        return self.request.labels


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How a run ended, as recorded in its ``outcome.json``."""

    run_id: str
    run_outcome: RunOutcome
    version: int | None
    finished_at_ms: int
    reason: str = ""

    @property
    def outcome(self) -> Outcome:
        return Outcome.COMMITTED if self.run_outcome is RunOutcome.COMMITTED else Outcome.ABORTED

    @property
    def label(self) -> str:
        """What a report says of the end: the outcome, or for an unclean end its reason."""
        if self.run_outcome.is_clean:
            return self.run_outcome.value
        return self.reason or self.run_outcome.value


# ------------------------------------------------------------------------------------------------ JSON


def record_to_json(record: RunRecord) -> bytes:
    validate_run_id(record.run_id)
    document: dict[str, Any] = {
        "format_version": RUN_FORMAT_VERSION,
        "run_id": record.run_id,
        "operation": record.operation,
        "base_version": record.base_version,
        "started_at_ms": record.started_at_ms,
        "now_ms": record.now_ms,
    }
    if record.dry_run:
        document["dry_run"] = True
    document["request"] = request_to_dict(record.request)
    return dump_json(document)


def record_from_json(data: bytes, *, location: str) -> RunRecord:
    """Raises ``ManifestFormatError`` naming the object and the field."""
    return record_from_reader(record_reader(data, location=location))


def record_reader(data: bytes, *, location: str) -> Reader:
    return load_document(data, location=location, supported=RUN_FORMAT_VERSION, kind="run record")


def record_from_reader(reader: Reader) -> RunRecord:
    request = reader.later_object("request")
    return RunRecord(
        run_id=reader.string("run_id"),
        operation=reader.string("operation"),
        base_version=reader.optional_integer("base_version", minimum=1),
        started_at_ms=reader.integer("started_at_ms"),
        now_ms=reader.integer("now_ms"),
        dry_run=reader.optional_boolean("dry_run", default=False),
        request=RunRequest() if request is None else request_from_reader(request),
    )


def carries_request(reader: Reader) -> bool:
    """Whether a ``run.json`` carries its request (a first release's kept it in ``request.json``)."""
    return reader.has("request")


def request_to_dict(request: RunRequest) -> dict[str, Any]:
    return {
        "topics": None if request.selection.topics is None else list(request.selection.topics),
        "partitions": None
        if request.selection.partitions is None
        else [{"topic": tp.topic, "partition": tp.partition} for tp in request.selection.partitions],
        "offsets": None
        if request.offsets_origin is None
        else {
            "snapshot_id": request.offsets_snapshot_id,
            "origin": request.offsets_origin,
            "note": request.offsets_note,
        },
        "labels": dict(request.labels),
        **({"full_listing": True} if request.full_listing else {}),
    }


def request_from_reader(reader: Reader) -> RunRequest:
    """The request of ``run.json`` (or of a first release's ``request.json``, whose other fields it ignores).

    Raises ``ManifestFormatError`` naming the object and the field."""
    offsets = reader.later_object("offsets")
    return RunRequest(
        selection=Selection(
            topics=reader.later_strings("topics"),
            partitions=reader.later_objects("partitions", Reader.topic_partition),
        ),
        offsets_snapshot_id=None if offsets is None else offsets.optional_string("snapshot_id"),
        offsets_origin=None if offsets is None else offsets.string("origin"),
        offsets_note=""
        if offsets is None or not offsets.has("note")
        else offsets.string("note", allow_empty=True),
        labels=reader.later_labels("labels"),
        full_listing=reader.optional_boolean("full_listing", default=False),
    )


def _note(offsets: Reader | None) -> str:
    return "" if offsets is None or not offsets.has("note") else offsets.string("note", allow_empty=True)


def end_to_json(end: RunEnd) -> bytes:
    return dump_json(
        {
            "format_version": RUN_FORMAT_VERSION,
            "run_id": end.run_id,
            "outcome": end.outcome.value,
            "run_outcome": end.run_outcome.value,
            "version": end.version,
            "finished_at_ms": end.finished_at_ms,
            "reason": end.reason,
        }
    )


def end_from_json(data: bytes, *, location: str) -> RunEnd:
    """Raises ``ManifestFormatError`` naming the object and the field. A first release's document has no
    ``run_outcome``: it is read from ``outcome`` and the reason (``legacy_run_outcome``)."""
    reader = load_document(data, location=location, supported=RUN_FORMAT_VERSION, kind="run outcome")
    outcome = reader.choice("outcome", Outcome)
    reason = reader.string("reason", allow_empty=True)
    if reader.has("run_outcome"):
        run_outcome = reader.choice("run_outcome", RunOutcome)
        if (run_outcome is RunOutcome.COMMITTED) != (outcome is Outcome.COMMITTED):
            raise reader.fail("run_outcome", f"{run_outcome.value!r} contradicts outcome {outcome.value!r}")
    else:
        run_outcome = legacy_run_outcome(outcome, reason)
    return RunEnd(
        run_id=reader.string("run_id"),
        run_outcome=run_outcome,
        version=reader.optional_integer("version", minimum=1),
        finished_at_ms=reader.integer("finished_at_ms"),
        reason=reason,
    )


def legacy_run_outcome(outcome: Outcome, reason: str) -> RunOutcome:
    """The ``RunOutcome`` of an ``outcome.json`` written before it was recorded."""
    if outcome is Outcome.COMMITTED:
        return RunOutcome.COMMITTED
    if reason == DRY_RUN_REASON:
        return RunOutcome.DRY_RUN
    if reason in UNCHANGED_REASONS:
        return RunOutcome.NOTHING_TO_CHANGE
    return RunOutcome.ABORTED
