"""The lake view: one page of what a lake holds, did and will do, from data only (docs/lake-view.md).

Built from the manifests, the runs' reports, the offsets snapshot the next run would use (its door resolves
it by the runs' own rule, ``pipeline.stages.next_run_offsets``, and passes it in) and, when given, the
configuration: no segment is read. ``describe --html`` renders
it as a static file (``views.lake_view_html``); the Airflow plugin serves the same page. The partitions
are ``describe``'s (``views.describe``: the same numbers as ``describe --json``); with a configuration,
each also gets what the next run's retention would do (``retention.plan``), and the groups the partition
the next run stops at."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kafka_segments.config import Config
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.offsets.resolved import ResolvedOffsets
from kafka_segments.retention.plan import PartitionPlan, plan_retention
from kafka_segments.state import Manifest, OffsetSnapshot
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kafka_segments.views.describe import LakeDescription, describe_manifest
from kafka_segments.views.describe_compaction import CompactionContext
from kafka_segments.views.lake_view_groups import GroupView, group_views
from kafka_segments.views.lake_view_history import History, read_history
from kafka_segments.views.run_report import RunReport, read_report

DEFAULT_HISTORY_VERSIONS = 100
"""How many of the newest retained manifest versions the history shows by default (one GET each)."""


@dataclass(frozen=True, slots=True)
class NextRetention:
    """What the next run's retention would do to one partition (``describe --config``'s ``next_run``)."""

    deleted_segments: int
    deleted_bytes: int
    log_start_offset: int
    passes: tuple[str, ...]
    holder: str | None
    """The consumer group holding consumed retention back here (KIP-68), if any."""


@dataclass(frozen=True, slots=True)
class Uncleanable:
    """A partition the head's run quarantined (adoption) or could not clean (compaction), with why."""

    topic: str
    partition: int
    reason: str


@dataclass(frozen=True, slots=True)
class LakeView:
    """Everything the page shows about one lake at ``now_ms``."""

    description: LakeDescription
    now_ms: int
    max_compaction_lag_ms: Mapping[str, int]
    """Per compacted topic, with a configuration (empty without)."""
    retention: Mapping[TopicPartition, NextRetention]
    """With a configuration (empty without)."""
    uncleanable: tuple[Uncleanable, ...]
    offsets: ResolvedOffsets | None
    """The offsets snapshot the next run would use, and where it came from (``None``: none at all)."""
    groups: tuple[GroupView, ...]
    history: History
    run_links: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """Per run id, ``(label, href)`` links for its commits and dry runs (the Airflow plugin sets them: the
    run's report, validation page, Data Docs and Airflow run); empty: no links column."""


def build_lake_view(
    store: ObjectStore,
    *,
    now_ms: int,
    version: int | None = None,
    offsets: ResolvedOffsets | None,
    compaction: CompactionContext | None = None,
    history_versions: int | None = DEFAULT_HISTORY_VERSIONS,
) -> LakeView:
    """The view of the lake at ``version`` (the head when ``None``) at ``now_ms``.

    ``offsets``: the next run's snapshot at ``now_ms`` (``pipeline.stages.next_run_offsets``); ``compaction``
    carries the configuration (its time should be ``now_ms``); ``history_versions``: how many versions the
    history shows (``None``: all).

    Raises:
        NoCommittedStateError, ManifestVersionNotFoundError: see ``reader.resolve_manifest``.
        ManifestFormatError: a manifest or a run report is not valid (naming the object and the field).
    """
    manifest = resolve_manifest(store, version)
    snapshot = None if offsets is None else offsets.snapshot
    config = None if compaction is None else compaction.config
    retention = {} if config is None else next_retention(manifest, config, now_ms=now_ms, snapshot=snapshot)
    holders = {tp: r.holder for tp, r in retention.items() if r.holder is not None}
    topics = {state.topic_partition.topic for state in manifest.partitions}
    configs = {} if config is None else {topic: config.for_topic(topic) for topic in topics}
    return LakeView(
        description=describe_manifest(manifest, location=store.describe(), compaction=compaction),
        now_ms=now_ms,
        max_compaction_lag_ms={t: c.max_compaction_lag_ms for t, c in sorted(configs.items()) if c.compact},
        retention=retention,
        uncleanable=uncleanable(read_report(store, manifest.run_id)),
        offsets=offsets,
        groups=()
        if snapshot is None
        else group_views(
            snapshot,
            manifest,
            now_ms=now_ms,
            retention_ms={t: c.offsets_retention_ms for t, c in configs.items()},
            holders=holders,
        ),
        history=read_history(store, limit=history_versions, head=manifest),
    )


def next_retention(
    manifest: Manifest, config: Config, *, now_ms: int, snapshot: OffsetSnapshot | None
) -> dict[TopicPartition, NextRetention]:
    """Per partition, the next run's retention at ``now_ms`` (the plan ``describe --config`` shows)."""
    topics = sorted({state.topic_partition.topic for state in manifest.partitions})
    plan = plan_retention(
        manifest.partitions, [config.for_topic(t) for t in topics], now_ms=now_ms, snapshot=snapshot
    )
    return {p.topic_partition: _next(p) for p in plan.partitions}


def _next(plan: PartitionPlan) -> NextRetention:
    return NextRetention(
        deleted_segments=len(plan.deletions),
        deleted_bytes=plan.bytes_deleted,
        log_start_offset=plan.new_log_start_offset,
        passes=tuple(reason.value for reason in plan.passes),
        holder=None if plan.holder is None else plan.holder.group_id,
    )


def uncleanable(report: RunReport | None) -> tuple[Uncleanable, ...]:
    """The partitions a run's report names as quarantined by adoption or by a failed cleaning round."""
    if report is None:
        return ()
    found = [
        Uncleanable(q.topic_partition.topic, q.topic_partition.partition, f"adoption: {q.reason}")
        for q in report.quarantined
    ]
    found += [
        Uncleanable(r.topic_partition.topic, r.topic_partition.partition, f"uncleanable: {r.error}")
        for r in report.rounds
        if r.status == "quarantined"
    ]
    return tuple(sorted(found, key=lambda u: (u.topic, u.partition)))
