"""A run's folder, ``_kafka_segments/runs/<run id>/``: the one module that names its files and reads and
writes them (docs/architecture.md, "A run"). Nothing in it is visible to readers of the lake.

=====================  =========================================================  ======================
file                   what it holds                                              written by
=====================  =========================================================  ======================
``run.json``           the run: base version, ``now``, dry run, and its request   registration (once)
                       (selection, offsets snapshot, labels)
``offsets.json``       the offsets snapshot the run uses                          ``prepare``
``input-manifest.json`` the adopted state before the run's changes                ``execute``
``plan.json``          what the run plans                                         ``execute``
``manifest.json``      the manifest the run would commit                          ``execute`` (stage)
``staged.json``        the staged report                                          ``execute``
``validation.json``    the expectation suites' results (+ Data Docs, a page)     ``validate``
``outcome.json``       how the run ended: its ``RunOutcome`` and the reason       the run's end
``report.json``        the run's report                                           ``report``
=====================  =========================================================  ======================

A first release's folder also has ``request.json`` (the request, before ``run.json`` carried it); it is
still read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from kafka_segments.errors import ObjectAlreadyExistsError, ObjectNotFoundError, RunStateError
from kafka_segments.lake.codec import manifest_from_json, manifest_to_json
from kafka_segments.lake.json_document import decode_json, load_document
from kafka_segments.lake.layout import (
    OUTCOME_NAME,
    RUN_RECORD_NAME,
    RUNS_PREFIX,
    outcome_key,
    parse_run_folder_key,
    parse_run_record_key,
    run_prefix,
    run_record_key,
    staged_manifest_key,
)
from kafka_segments.lake.runs import (
    RunEnd,
    RunRecord,
    carries_request,
    end_from_json,
    end_to_json,
    record_from_reader,
    record_reader,
    record_to_json,
    request_from_reader,
)
from kafka_segments.state import Manifest
from kafka_segments.storage.base import Create, ObjectStore, Overwrite

RUN_RECORD = RUN_RECORD_NAME
OUTCOME = OUTCOME_NAME
STAGED_MANIFEST = "manifest.json"
OFFSETS = "offsets.json"
INPUT_MANIFEST = "input-manifest.json"
PLAN = "plan.json"
STAGED = "staged.json"
VALIDATION = "validation.json"
REPORT = "report.json"
LEGACY_REQUEST = "request.json"
"""A first release's request (``run.json`` carries it now)."""
STAGED_FORMAT_VERSION = 1


def run_file_key(run_id: str, name: str) -> str:
    """The key of ``name`` in the run's folder (``""``: the folder itself)."""
    return run_prefix(run_id) + name


# --------------------------------------------------------------------------------------------- the record


def register_run(store: ObjectStore, record: RunRecord) -> RunRecord:
    """Write the run record (create-if-absent) and return the registered record.

    Registering the same run again (a retried task) returns the stored record when it names the same
    operation; its base version is kept, so a retry still commits only the version the run started from.

    Raises:
        RunStateError: the run id is already registered for another operation.
    """
    key = run_record_key(record.run_id)
    try:
        store.put(key, record_to_json(record), mode=Create())
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
    """The stored record of ``run_id``, with its request (a first release's ``request.json`` read too).

    Raises:
        RunStateError: no such run.
        ManifestFormatError: the record is not valid.
    """
    key = run_record_key(run_id)
    try:
        data = store.get(key)
    except ObjectNotFoundError:
        raise RunStateError(f"no run {run_id!r} in this lake", location=store.location(key)) from None
    reader = record_reader(data, location=store.location(key))
    record = record_from_reader(reader)
    if record.run_id != run_id:
        raise reader.fail("run_id", f"the record of run {run_id!r} names run {record.run_id!r}")
    if record.operation == "run" and not carries_request(reader):
        return _with_legacy_request(store, record)
    return record


def _with_legacy_request(store: ObjectStore, record: RunRecord) -> RunRecord:
    key = run_file_key(record.run_id, LEGACY_REQUEST)
    try:
        data = store.get(key)
    except ObjectNotFoundError:
        return record
    reader = load_document(
        data, location=store.location(key), supported=STAGED_FORMAT_VERSION, kind=LEGACY_REQUEST
    )
    return replace(record, request=request_from_reader(reader))


def list_runs(store: ObjectStore) -> Iterator[str]:
    """The ids of every registered run, in key order (run ids from ``new_run_id`` sort by start time)."""
    for meta in store.list(RUNS_PREFIX):
        run_id = parse_run_record_key(meta.key)
        if run_id is not None:
            yield run_id


def list_runs_with(store: ObjectStore, name: str) -> list[str]:
    """The ids of the runs whose folder holds the file ``name`` (``REPORT``: the runs that reported), in key
    order, from one listing of the runs' folders (no object is read)."""
    found: list[str] = []
    for meta in store.list(RUNS_PREFIX):
        parsed = parse_run_folder_key(meta.key)
        if parsed is not None and parsed[1] == name:
            found.append(parsed[0])
    return found


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
        if name == RUN_RECORD:
            registered.append(run_id)
        elif name == OUTCOME:
            settled.add(run_id)
    return [run_id for run_id in registered if run_id not in settled]


# -------------------------------------------------------------------------------------------- the outcome


def write_outcome(store: ObjectStore, end: RunEnd) -> None:
    """Record how the run ended (overwrites: finishing is idempotent)."""
    store.put(outcome_key(end.run_id), end_to_json(end), mode=Overwrite())


def read_outcome(store: ObjectStore, run_id: str) -> RunEnd | None:
    """How the run ended, ``None`` while unknown."""
    key = outcome_key(run_id)
    try:
        data = store.get(key)
    except ObjectNotFoundError:
        return None
    return end_from_json(data, location=store.location(key))


# ---------------------------------------------------------------------------------- the staged manifest


def write_staged_manifest(store: ObjectStore, manifest: Manifest) -> None:
    """Store the manifest the run will commit, checked as the commit would read it.

    Raises:
        ManifestFormatError: ``manifest`` breaks an invariant of the format (overlapping segments, …).
    """
    key = staged_manifest_key(manifest.run_id)
    data = manifest_to_json(manifest)
    manifest_from_json(data, location=store.location(key))  # refuse now what the commit would refuse
    store.put(key, data, mode=Overwrite())


def read_staged_manifest(store: ObjectStore, run_id: str) -> Manifest:
    manifest = read_run_manifest(store, run_id, STAGED_MANIFEST)
    if manifest is None:
        key = staged_manifest_key(run_id)
        raise RunStateError(f"run {run_id!r} has no staged manifest", location=store.location(key))
    return manifest


def read_run_manifest(store: ObjectStore, run_id: str, name: str) -> Manifest | None:
    """A manifest of the run's folder (``STAGED_MANIFEST``, ``INPUT_MANIFEST``); ``None`` when absent.

    Raises:
        ManifestFormatError: it is not a valid manifest.
    """
    key = run_file_key(run_id, name)
    try:
        data = store.get(key)
    except ObjectNotFoundError:
        return None
    return manifest_from_json(data, location=store.location(key))


def has_staged_manifest(store: ObjectStore, run_id: str) -> bool:
    try:
        store.head(staged_manifest_key(run_id))
    except ObjectNotFoundError:
        return False
    return True


# ----------------------------------------------------------------------------------- the other documents


def write_run_json(store: ObjectStore, run_id: str, name: str, document: object) -> str:
    """Write ``document`` as JSON to the run's folder; return the key."""
    data = json.dumps(document, indent=2, sort_keys=False).encode() + b"\n"
    return write_run_bytes(store, run_id, name, data)


def write_run_bytes(store: ObjectStore, run_id: str, name: str, data: bytes) -> str:
    """Write ``data`` as ``name`` (a path inside the folder) of the run's folder; return the key."""
    key = run_file_key(run_id, name)
    store.put(key, data, mode=Overwrite())
    return key


def read_run_bytes_or_none(store: ObjectStore, run_id: str, name: str) -> bytes | None:
    try:
        return store.get(run_file_key(run_id, name))
    except ObjectNotFoundError:
        return None


def read_run_bytes(store: ObjectStore, run_id: str, name: str) -> bytes:
    """Raises ``RunStateError`` when the run's folder has no ``name``."""
    key = run_file_key(run_id, name)
    try:
        return store.get(key)
    except ObjectNotFoundError:
        raise _missing(store, run_id, name) from None


def has_run_file(store: ObjectStore, run_id: str, name: str) -> bool:
    try:
        store.head(run_file_key(run_id, name))
    except ObjectNotFoundError:
        return False
    return True


def read_run_json(store: ObjectStore, run_id: str, name: str) -> dict[str, Any]:
    """A JSON document of the run's folder. Raises ``RunStateError`` when it does not exist."""
    document = read_run_json_or_none(store, run_id, name)
    if document is None:
        raise _missing(store, run_id, name)
    return document


def read_run_json_or_none(store: ObjectStore, run_id: str, name: str) -> dict[str, Any] | None:
    """A JSON object of the run's folder, ``None`` when absent.

    Raises:
        ManifestFormatError: it is not JSON (``lake.json_document.decode_json``).
        RunStateError: it is JSON but not an object.
    """
    key = run_file_key(run_id, name)
    try:
        data = store.get(key)
    except ObjectNotFoundError:
        return None
    document = decode_json(data, location=store.location(key), kind=name)
    if not isinstance(document, dict):
        raise RunStateError(f"{name} is not a JSON object", location=store.location(key))
    return document


def _missing(store: ObjectStore, run_id: str, name: str) -> RunStateError:
    return RunStateError(
        f"run {run_id!r} has no {name} (has the stage that writes it run?)",
        location=store.location(run_file_key(run_id, name)),
    )
