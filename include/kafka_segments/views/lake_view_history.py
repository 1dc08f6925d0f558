"""The lake view's history: one point per committed manifest version (docs/lake-view.md, "History").

Each version gives, per topic, its live bytes and its partitions' log start offsets (from the manifest: no
segment is read), and the commit's run, outcome and what each pass deleted (from the run's ``report.json``
when it has one: ``adopt``, ``fence`` and older runs may have none)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_segments.errors import ObjectNotFoundError
from kafka_segments.lake.history import manifest_versions, read_manifest
from kafka_segments.lake.layout import manifest_key, run_prefix
from kafka_segments.state import MANIFEST_FORMAT_VERSION, Manifest
from kafka_segments.storage.base import ObjectStore

REPORT_NAME = "report.json"
"""A committed run's report in its folder (docs/lake.md, "Layout")."""
COMMITTED = "committed"


@dataclass(frozen=True, slots=True)
class TopicPoint:
    """One topic at one manifest version."""

    version: int
    committed_at_ms: int
    size_bytes: int
    log_start_offsets: tuple[int, ...]
    """Per partition, in partition order."""

    @property
    def log_start_offset_sum(self) -> int:
        return sum(self.log_start_offsets)


@dataclass(frozen=True, slots=True)
class Deleted:
    """What one pass of a commit removed: a retention reason's segments and bytes, or compaction's segments
    replaced less written and bytes read less written."""

    name: str
    segments: int
    size_bytes: int


@dataclass(frozen=True, slots=True)
class Commit:
    """One committed manifest version: its run, outcome and what each pass deleted."""

    version: int
    run_id: str
    operation: str
    committed_at_ms: int
    outcome: str
    deleted: tuple[Deleted, ...]
    cleaner: Mapping[str, object]
    """Kafka's cleaner gauges of the run (the report's ``metrics.log_cleaner``: docs/metrics.md)."""


@dataclass(frozen=True, slots=True)
class History:
    """The commits (ascending) and, per topic, its points over them."""

    commits: tuple[Commit, ...]
    topics: Mapping[str, tuple[TopicPoint, ...]]


def read_history(store: ObjectStore, *, limit: int | None = None, head: Manifest | None = None) -> History:
    """The last ``limit`` retained versions (all when ``None``) up to ``head`` (already read: not read
    again; ``None``: up to the newest). Older versions are read by ``version_summary``.

    Raises:
        ManifestFormatError: a manifest is not valid (``lake.history.read_manifest``'s error).
    """
    versions = [v for v in manifest_versions(store) if head is None or v <= head.version]
    if limit is not None:
        versions = versions[-limit:] if limit > 0 else []
    summaries = [
        summary_of(head) if head is not None and head.version == v else version_summary(store, v)
        for v in versions
    ]
    return history_of(summaries, {s.run_id: read_report(store, s.run_id) for s in summaries})


@dataclass(frozen=True, slots=True)
class VersionSummary:
    """What the history needs of one manifest version."""

    version: int
    run_id: str
    operation: str
    committed_at_ms: int
    points: Mapping[str, TopicPoint]


def history_of(
    summaries: Sequence[VersionSummary], reports: Mapping[str, Mapping[str, Any] | None]
) -> History:
    """The history of ``summaries`` (ascending) with their runs' reports (``None``: no report)."""
    topics: dict[str, list[TopicPoint]] = {}
    for summary in summaries:
        for topic, point in summary.points.items():
            topics.setdefault(topic, []).append(point)
    commits = tuple(_commit(s, reports.get(s.run_id)) for s in summaries)
    return History(commits=commits, topics={t: tuple(points) for t, points in sorted(topics.items())})


def summary_of(manifest: Manifest) -> VersionSummary:
    rows = [(s.topic_partition.topic, s.log_start_offset, s.size_bytes) for s in manifest.partitions]
    return _summary(manifest.version, manifest.run_id, manifest.operation, manifest.committed_at_ms, rows)


def version_summary(store: ObjectStore, version: int) -> VersionSummary:
    """Version ``version``'s summary from its JSON, without building every segment entry (a 4,000-partition
    manifest decodes ~8x faster); a document that does not have the fields' types is read by the strict
    reader, which names what is wrong.

    Raises:
        ManifestFormatError: the manifest is not valid.
    """
    data = store.get(manifest_key(version))
    try:
        document = json.loads(data)
        if document["format_version"] != MANIFEST_FORMAT_VERSION or document["version"] != version:
            raise ValueError(version)
        rows = [
            (str(p["topic"]), int(p["log_start_offset"]), sum(int(s["size"]) for s in p["segments"]))
            for p in document["partitions"]
        ]
        header = (str(document["run_id"]), str(document["operation"]), int(document["committed_at_ms"]))
    except (ValueError, KeyError, TypeError):
        return summary_of(read_manifest(store, version))
    return _summary(version, *header, rows)


def _summary(
    version: int, run_id: str, operation: str, committed_at_ms: int, rows: Sequence[tuple[str, int, int]]
) -> VersionSummary:
    sizes: dict[str, int] = {}
    starts: dict[str, list[int]] = {}
    for topic, log_start_offset, size in rows:
        sizes[topic] = sizes.get(topic, 0) + size
        starts.setdefault(topic, []).append(log_start_offset)
    points = {t: TopicPoint(version, committed_at_ms, sizes[t], tuple(starts[t])) for t in sizes}
    return VersionSummary(version, run_id, operation, committed_at_ms, points)


def read_report(store: ObjectStore, run_id: str) -> Mapping[str, Any] | None:
    """A run's report document, ``None`` when it has none or it is not a JSON object."""
    try:
        document = json.loads(store.get(run_prefix(run_id) + REPORT_NAME))
    except (ObjectNotFoundError, ValueError):
        return None
    return document if isinstance(document, dict) else None


def _commit(manifest: VersionSummary, report: Mapping[str, Any] | None) -> Commit:
    outcome = COMMITTED if report is None else str(report.get("outcome") or COMMITTED)
    return Commit(
        version=manifest.version,
        run_id=manifest.run_id,
        operation=manifest.operation,
        committed_at_ms=manifest.committed_at_ms,
        outcome=outcome,
        deleted=() if report is None else deleted_by_pass(report),
        cleaner={} if report is None else dict(_mapping(_mapping(report.get("metrics")).get("log_cleaner"))),
    )


def deleted_by_pass(report: Mapping[str, Any]) -> tuple[Deleted, ...]:
    """Retention's passes (``plan.totals.by_reason``) then compaction's bytes read less bytes written."""
    plan = _mapping(report.get("plan"))
    by_reason = _mapping(_mapping(plan.get("totals")).get("by_reason"))
    passes = [
        Deleted(str(reason), _int(_mapping(v).get("segments")), _int(_mapping(v).get("bytes")))
        for reason, v in by_reason.items()
    ]
    compaction = _mapping(report.get("compaction"))
    totals = _mapping(compaction.get("totals"))
    if _int(totals.get("cleaned")):
        rounds = [_mapping(p) for p in compaction.get("partitions") or () if isinstance(p, dict)]
        segments = sum(
            len(p.get("segments_replaced") or ()) - len(p.get("segments_written") or ()) for p in rounds
        )
        removed = _int(totals.get("bytes_read")) - _int(totals.get("bytes_written"))
        passes.append(Deleted("compaction", segments, removed))
    return tuple(passes)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
