"""The lake view: one page of what a lake holds, did and will do, from data only (docs/lake-view.md).

Built from the manifests, the runs' reports, the offsets snapshot the next run would use (its door resolves
it by the runs' own rule, ``pipeline.stages.next_run_offsets``, and passes it in) and, when given, the
configuration: no segment is read, and of a format 2 version's partition manifests only those the page needs
more of than the root's summaries (``views.lake_view_reads``). ``describe --html`` renders
it as a static file (``views.lake_view_html``); the Airflow plugin serves the same page. The partitions
are ``describe``'s (``views.describe``: the same numbers as ``describe --json``); with a configuration,
each also gets what the next run's retention would do (``retention.plan``), and the groups the partition
the next run stops at."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kafka_segments.compaction.eligibility import UNLIMITED
from kafka_segments.config import Config
from kafka_segments.config.model import TopicConfig
from kafka_segments.lake.reader import resolve_root
from kafka_segments.offsets.resolved import ResolvedOffsets
from kafka_segments.retention.consumed import ConsumedIndexes, consumed_bound
from kafka_segments.retention.plan import PartitionPlan, plan_retention
from kafka_segments.retention.rules import passes_for
from kafka_segments.state import OffsetSnapshot, PartitionSummary
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kafka_segments.views.describe import LakeDescription, PartitionDescription
from kafka_segments.views.describe_compaction import CompactionContext, compaction_outlooks, summary_outlook
from kafka_segments.views.lake_view_groups import GroupView, group_views
from kafka_segments.views.lake_view_history import History, read_history
from kafka_segments.views.lake_view_reads import ViewPartitions, read_view_partitions
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
    """The view of the lake at ``version`` (the head when ``None``) at ``now_ms``: its root, and of its
    partitions only those the page needs more of than their summaries (``views.lake_view_reads``).

    ``offsets``: the next run's snapshot at ``now_ms`` (``pipeline.stages.next_run_offsets``); ``compaction``
    carries the configuration (its time should be ``now_ms``); ``history_versions``: how many versions the
    history shows (``None``: all).

    Raises:
        NoCommittedStateError, ManifestVersionNotFoundError: see ``reader.resolve_root``.
        ManifestFormatError: a manifest or a run report is not valid (naming the object and the field).
    """
    root = resolve_root(store, version)
    snapshot = None if offsets is None else offsets.snapshot
    config = None if compaction is None else compaction.config
    partitions = read_view_partitions(store, root, config, now_ms=now_ms, snapshot=snapshot)
    retention = {} if config is None else next_retention(partitions, config, now_ms=now_ms, snapshot=snapshot)
    holders = {tp: r.holder for tp, r in retention.items() if r.holder is not None}
    configs = {} if config is None else {topic: config.for_topic(topic) for topic in root.topics}
    return LakeView(
        description=describe_partitions(partitions, location=store.describe(), compaction=compaction),
        now_ms=now_ms,
        max_compaction_lag_ms={t: c.max_compaction_lag_ms for t, c in sorted(configs.items()) if c.compact},
        retention=retention,
        uncleanable=uncleanable(read_report(store, root.run_id)),
        offsets=offsets,
        groups=()
        if snapshot is None
        else group_views(
            snapshot,
            partitions,
            now_ms=now_ms,
            retention_ms={t: c.offsets_retention_ms for t, c in configs.items()},
            holders=holders,
        ),
        history=read_history(store, limit=history_versions, head=root),
    )


def describe_partitions(
    partitions: ViewPartitions, *, location: str, compaction: CompactionContext | None
) -> LakeDescription:
    """``describe``'s description of the version (``describe_manifest``'s numbers): a partition read from its
    state, any other from its summary (its compaction outlook by ``summary_outlook``)."""
    root = partitions.root
    states = partitions.states
    outlooks = {} if compaction is None else compaction_outlooks(list(states.values()), compaction)
    rows = []
    for topic_partition, summary in partitions.summaries.items():
        state = states.get(topic_partition)
        if state is not None:
            rows.append(PartitionDescription.of(state, outlooks.get(topic_partition)))
            continue
        outlook = None
        if compaction is not None:
            outlook = summary_outlook(summary, compaction.config.for_topic(topic_partition.topic))
        rows.append(PartitionDescription.of_summary(topic_partition, summary, outlook))
    return LakeDescription(
        location=location,
        version=root.version,
        run_id=root.run_id,
        operation=root.header.operation,
        committed_at_ms=root.committed_at_ms,
        partitions=tuple(rows),
        compaction_now_ms=None if compaction is None else compaction.now_ms,
        compaction_budget=UNLIMITED if compaction is None else compaction.budget,
    )


def next_retention(
    partitions: ViewPartitions, config: Config, *, now_ms: int, snapshot: OffsetSnapshot | None
) -> dict[TopicPartition, NextRetention]:
    """Per partition, the next run's retention at ``now_ms`` (the plan ``describe --config`` shows): the
    retention plan of the partitions read, and for the others (which no pass changes: ``lake.summary_scope``)
    their log start offset as it is, with the passes that would run and the group holding them."""
    states = list(partitions.states.values())
    topics = sorted(partitions.root.topics)
    plan = plan_retention(states, [config.for_topic(t) for t in topics], now_ms=now_ms, snapshot=snapshot)
    planned = {p.topic_partition: _next(p) for p in plan.partitions}
    indexes = None if snapshot is None else ConsumedIndexes(snapshot, now_ms=now_ms)
    return {
        tp: planned.get(tp) or _unchanged(tp, summary, config.for_topic(tp.topic), indexes)
        for tp, summary in partitions.summaries.items()
    }


def _unchanged(
    topic_partition: TopicPartition,
    summary: PartitionSummary,
    config: TopicConfig,
    indexes: ConsumedIndexes | None,
) -> NextRetention:
    bound = consumed_bound(
        None if indexes is None else indexes.for_topic(config),
        config,
        partition=topic_partition.partition,
        log_start_offset=summary.log_start_offset,
    )
    return NextRetention(
        deleted_segments=0,
        deleted_bytes=0,
        log_start_offset=summary.log_start_offset,
        passes=tuple(reason.value for reason in passes_for(config)),
        holder=None if bound.holder is None else bound.holder.group_id,
    )


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
