"""A run's own documents in its folder (``_kafka_segments/runs/<run id>/``): what it was asked to do, what it
staged, how it was validated, its report; and how to read them back."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka_segments.errors import ObjectNotFoundError, RunStateError
from kafka_segments.lake.history import location_of
from kafka_segments.lake.json_document import decode_json
from kafka_segments.lake.layout import run_prefix
from kafka_segments.offsets.snapshot_codec import snapshot_from_json
from kafka_segments.pipeline.offsets_input import ResolvedOffsets
from kafka_segments.pipeline.planning import Selection
from kafka_segments.storage.base import ObjectStore, Overwrite
from kafka_segments.topic_partition import TopicPartition

REQUEST = "request.json"
OFFSETS = "offsets.json"
INPUT_MANIFEST = "input-manifest.json"
PLAN = "plan.json"
STAGED = "staged.json"
VALIDATION = "validation.json"
REPORT = "report.json"
STAGED_FORMAT_VERSION = 1


def run_file_key(run_id: str, name: str) -> str:
    return run_prefix(run_id) + name


def write_run_file(store: ObjectStore, run_id: str, name: str, document: object) -> str:
    """Write ``document`` as JSON to the run's folder; return the key."""
    key = run_file_key(run_id, name)
    data = json.dumps(document, indent=2, sort_keys=False).encode() + b"\n"
    store.put(key, data, mode=Overwrite())
    return key


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What a staged run was asked to do (``request.json``)."""

    run_id: str
    now_ms: int
    base_version: int | None
    dry_run: bool
    topics: tuple[str, ...] | None = None
    partitions: tuple[TopicPartition, ...] | None = None
    offsets_snapshot_id: str | None = None
    offsets_origin: str | None = None
    """``None``: the run has no offsets snapshot (consumed retention cannot apply)."""
    offsets_note: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Where the run came from (e.g. ``airflow_dag_id``, ``airflow_run_id``); reported, never interpreted."""

    @property
    def selection(self) -> Selection:
        return Selection(topics=self.topics, partitions=self.partitions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": STAGED_FORMAT_VERSION,
            "run_id": self.run_id,
            "now_ms": self.now_ms,
            "base_version": self.base_version,
            "dry_run": self.dry_run,
            "topics": None if self.topics is None else list(self.topics),
            "partitions": None
            if self.partitions is None
            else [{"topic": tp.topic, "partition": tp.partition} for tp in self.partitions],
            "offsets": None
            if self.offsets_origin is None
            else {
                "snapshot_id": self.offsets_snapshot_id,
                "origin": self.offsets_origin,
                "note": self.offsets_note,
            },
            "labels": dict(self.labels),
        }

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> RunRequest:
        topics = document.get("topics")
        partitions = document.get("partitions")
        offsets = document.get("offsets")
        return cls(
            run_id=str(document["run_id"]),
            now_ms=int(document["now_ms"]),
            base_version=None if document.get("base_version") is None else int(document["base_version"]),
            dry_run=bool(document["dry_run"]),
            topics=None if topics is None else tuple(str(t) for t in topics),
            partitions=None
            if partitions is None
            else tuple(TopicPartition(str(p["topic"]), int(p["partition"])) for p in partitions),
            offsets_snapshot_id=None if offsets is None else offsets.get("snapshot_id"),
            offsets_origin=None if offsets is None else str(offsets["origin"]),
            offsets_note="" if offsets is None else str(offsets.get("note", "")),
            labels={str(k): str(v) for k, v in (document.get("labels") or {}).items()},
        )


def read_request(store: ObjectStore, run_id: str) -> RunRequest:
    """The run's ``request.json``. Raises ``RunStateError`` when the run was never prepared."""
    return RunRequest.from_dict(read_run_json(store, run_id, REQUEST))


def read_run_offsets(store: ObjectStore, request: RunRequest) -> ResolvedOffsets | None:
    """The offsets snapshot the run uses (from its folder)."""
    if request.offsets_origin is None:
        return None
    key = run_file_key(request.run_id, OFFSETS)
    snapshot = snapshot_from_json(store.get(key), location=location_of(store, key))
    return ResolvedOffsets(
        snapshot, request.offsets_snapshot_id, request.offsets_origin, request.offsets_note
    )


def read_run_json(store: ObjectStore, run_id: str, name: str) -> dict[str, Any]:
    """A JSON document of the run's folder.

    Raises:
        RunStateError: it does not exist, or is not a JSON object.
        ManifestFormatError: it is not JSON (``lake.json_document.decode_json``).
    """
    document = read_run_json_or_none(store, run_id, name)
    if document is None:
        raise RunStateError(
            f"run {run_id!r} has no {name} (has the stage that writes it run?)",
            location=location_of(store, run_file_key(run_id, name)),
        )
    return document


def read_run_json_or_none(store: ObjectStore, run_id: str, name: str) -> dict[str, Any] | None:
    key = run_file_key(run_id, name)
    try:
        data = store.get(key)
    except ObjectNotFoundError:
        return None
    document = decode_json(data, location=location_of(store, key), kind=name)
    if not isinstance(document, dict):
        raise RunStateError(f"{name} is not a JSON object", location=location_of(store, key))
    return document
