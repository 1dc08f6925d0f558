"""Run records: who is working on the lake, from which committed version, and how it ended.

``runs/<run id>/run.json`` (create-if-absent, before anything else) names the run's *base*; a run can only
ever commit ``base + 1``, which fences zombies (a stray duplicate of an old run finds its version taken).
``outcome.json`` records ``committed`` or ``aborted`` once known. A dry run registers with
``dry_run: true`` and is never fenced (docs/lake.md, "Dry runs")."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from kafka_segments.errors import ObjectAlreadyExistsError, ObjectNotFoundError, RunStateError
from kafka_segments.lake.codec import dump_json, load_document
from kafka_segments.lake.layout import (
    OUTCOME_NAME,
    RUN_RECORD_NAME,
    RUNS_PREFIX,
    outcome_key,
    parse_run_folder_key,
    parse_run_record_key,
    run_record_key,
    validate_run_id,
)
from kafka_segments.storage.base import Create, ObjectStore, Overwrite

RUN_FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A run as registered in the lake."""

    run_id: str
    operation: str
    base_version: int | None
    """The committed version the run builds on (``None``: the lake had no manifest)."""
    started_at_ms: int
    now_ms: int
    dry_run: bool = False
    """A dry run: it never commits (``LakeTransaction.commit`` ends it as ``RunOutcome.DRY_RUN``)."""

    @property
    def commit_version(self) -> int:
        """The only version this run may create."""
        return (self.base_version or 0) + 1


class Outcome(Enum):
    COMMITTED = "committed"
    ABORTED = "aborted"


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How a run ended, as recorded in its ``outcome.json``."""

    run_id: str
    outcome: Outcome
    version: int | None
    finished_at_ms: int
    reason: str = ""


def register_run(store: ObjectStore, record: RunRecord) -> RunRecord:
    """Write the run record (create-if-absent) and return the registered record.

    Registering the same run again (a retried task) returns the stored record when it names the same
    operation; its base version is kept, so a retry still commits only the version the run started from.

    Raises:
        RunStateError: the run id is already registered for another operation.
    """
    key = run_record_key(record.run_id)
    try:
        store.put(key, _record_to_json(record), mode=Create())
    except ObjectAlreadyExistsError:
        existing = read_run(store, record.run_id)
        if existing.operation != record.operation:
            raise RunStateError(
                f"run id {record.run_id!r} is already registered for operation {existing.operation!r}",
                location=store.location(key),
            ) from None
        return existing
    return record


def read_run(store: ObjectStore, run_id: str) -> RunRecord:
    """The stored record of ``run_id``.

    Raises:
        RunStateError: no such run.
        ManifestFormatError: the record is not valid.
    """
    key = run_record_key(run_id)
    try:
        data = store.get(key)
    except ObjectNotFoundError:
        raise RunStateError(f"no run {run_id!r} in this lake", location=store.location(key)) from None
    reader = load_document(
        data, location=store.location(key), supported=RUN_FORMAT_VERSION, kind="run record"
    )
    record = RunRecord(
        run_id=reader.string("run_id"),
        operation=reader.string("operation"),
        base_version=reader.optional_integer("base_version", minimum=1),
        started_at_ms=reader.integer("started_at_ms"),
        now_ms=reader.integer("now_ms"),
        dry_run=reader.optional_boolean("dry_run", default=False),
    )
    if record.run_id != run_id:
        raise reader.fail("run_id", f"the record of run {run_id!r} names run {record.run_id!r}")
    return record


def list_runs(store: ObjectStore) -> Iterator[str]:
    """The ids of every registered run, in key order (run ids from ``new_run_id`` sort by start time)."""
    for meta in store.list(RUNS_PREFIX):
        run_id = parse_run_record_key(meta.key)
        if run_id is not None:
            yield run_id


def list_unsettled_runs(store: ObjectStore) -> list[str]:
    """The ids of the registered runs whose folder holds no outcome, in key order: what one listing of the
    runs' folders shows, without reading any object (a lake keeps every run's folder, so reading each
    run's outcome would cost one request per run the lake has ever had)."""
    registered: list[str] = []
    settled: set[str] = set()
    for meta in store.list(RUNS_PREFIX):
        parsed = parse_run_folder_key(meta.key)
        if parsed is None:
            continue
        run_id, name = parsed
        if name == RUN_RECORD_NAME:
            registered.append(run_id)
        elif name == OUTCOME_NAME:
            settled.add(run_id)
    return [run_id for run_id in registered if run_id not in settled]


def write_outcome(store: ObjectStore, outcome: RunEnd) -> None:
    """Record how the run ended (overwrites: finishing is idempotent)."""
    document = {
        "format_version": RUN_FORMAT_VERSION,
        "run_id": outcome.run_id,
        "outcome": outcome.outcome.value,
        "version": outcome.version,
        "finished_at_ms": outcome.finished_at_ms,
        "reason": outcome.reason,
    }
    store.put(outcome_key(outcome.run_id), dump_json(document), mode=Overwrite())


def read_outcome(store: ObjectStore, run_id: str) -> RunEnd | None:
    """How the run ended, ``None`` while unknown."""
    key = outcome_key(run_id)
    try:
        data = store.get(key)
    except ObjectNotFoundError:
        return None
    reader = load_document(
        data, location=store.location(key), supported=RUN_FORMAT_VERSION, kind="run outcome"
    )
    return RunEnd(
        run_id=reader.string("run_id"),
        outcome=reader.choice("outcome", Outcome),
        version=reader.optional_integer("version", minimum=1),
        finished_at_ms=reader.integer("finished_at_ms"),
        reason=reader.string("reason", allow_empty=True),
    )


def _record_to_json(record: RunRecord) -> bytes:
    validate_run_id(record.run_id)
    return dump_json(
        {
            "format_version": RUN_FORMAT_VERSION,
            "run_id": record.run_id,
            "operation": record.operation,
            "base_version": record.base_version,
            "started_at_ms": record.started_at_ms,
            "now_ms": record.now_ms,
            **({"dry_run": True} if record.dry_run else {}),
        }
    )
