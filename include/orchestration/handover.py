"""What the maintenance tasks hand each other through XCom: small JSON documents, never secrets (the lake
settings, the run's parameters, the offsets snapshot by id, or as JSON for a dry run's unstored one, and the
``RunHandle``). What the library's stages produce lives in the lake run's folder, not in XCom."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafka_segments.pipeline.offsets_input import ResolvedOffsets
    from kafka_segments.storage.base import ObjectStore

OFFSETS_XCOM_LOCATION = "the XCom of task snapshot_offsets"


@dataclass(frozen=True, slots=True)
class RunHandle:
    """A prepared lake run, as every task after ``prepare`` needs it."""

    lake: str
    config_path: str | None
    run_id: str
    dry_run: bool
    now_ms: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "lake": self.lake,
            "config_path": self.config_path,
            "run_id": self.run_id,
            "dry_run": self.dry_run,
            "now_ms": self.now_ms,
        }

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> RunHandle:
        config_path = document.get("config_path")
        return cls(
            lake=str(document["lake"]),
            config_path=None if config_path is None else str(config_path),
            run_id=str(document["run_id"]),
            dry_run=bool(document["dry_run"]),
            now_ms=int(document["now_ms"]),
        )


def offsets_to_xcom(resolved: ResolvedOffsets | None) -> dict[str, Any] | None:
    """The resolved offsets as a JSON document (``None``: the run has no offsets)."""
    if resolved is None:
        return None
    document: dict[str, Any] = {
        "snapshot_id": resolved.snapshot_id,
        "origin": resolved.origin,
        "note": resolved.note,
        "groups": len(resolved.snapshot.groups),
        "unreadable_groups": [error.group_id for error in resolved.snapshot.errors],
    }
    if resolved.snapshot_id is None:
        from kafka_segments.offsets.snapshot_codec import snapshot_to_json

        document["snapshot"] = snapshot_to_json(resolved.snapshot).decode("utf-8")
    return document


def offsets_from_xcom(store: ObjectStore, document: Mapping[str, Any] | None) -> ResolvedOffsets | None:
    """The offsets ``offsets_to_xcom`` described (a stored snapshot is read back and checked by its id)."""
    if document is None:
        return None
    from kafka_segments.offsets.snapshot_codec import snapshot_from_json
    from kafka_segments.offsets.snapshot_store import read_snapshot
    from kafka_segments.pipeline.offsets_input import ResolvedOffsets

    snapshot_id = document.get("snapshot_id")
    if snapshot_id is None:
        snapshot = snapshot_from_json(
            str(document["snapshot"]).encode("utf-8"), location=OFFSETS_XCOM_LOCATION
        )
    else:
        snapshot = read_snapshot(store, str(snapshot_id))
    return ResolvedOffsets(
        snapshot,
        None if snapshot_id is None else str(snapshot_id),
        str(document["origin"]),
        str(document.get("note") or ""),
    )
