"""Which partitions of a format 2 base a run reads (issue 33; docs/metadata-format-2.md, "The summary"):
those its listing shows changed (``lake.listing_scope``), and those of its selection where a rule may have
something to do at the run's ``now`` by the root's summary (``lake.summary_scope``, the rule the lake view
reads by too). Every other partition is left unread and carried into the commit as it is: the rules would
leave it unchanged, so the decisions are the ones a run over every partition makes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafka_segments.config import Config
from kafka_segments.config.model import TopicConfig
from kafka_segments.errors import PartitionNotFoundError
from kafka_segments.lake.adoption import SegmentReader
from kafka_segments.lake.adoption_report import AdoptionResult
from kafka_segments.lake.listing_scope import listing_changes
from kafka_segments.lake.roots import VersionRoot
from kafka_segments.lake.runs import Selection
from kafka_segments.lake.summary_scope import partition_may_change
from kafka_segments.lake.tail_listing import as_adoption_listing, list_tails
from kafka_segments.lake.transaction import LakeTransaction
from kafka_segments.retention.consumed import ConsumedIndexes
from kafka_segments.state import MANIFEST_FORMAT_2, OffsetSnapshot
from kafka_segments.storage.base import ObjectMeta
from kafka_segments.topic_partition import TopicPartition


def run_scope(
    root: VersionRoot | None,
    listing: Sequence[ObjectMeta],
    config: Config,
    *,
    now_ms: int,
    snapshot: OffsetSnapshot | None,
    selection: Selection,
    starts: Mapping[TopicPartition, str] | None = None,
) -> frozenset[TopicPartition] | None:
    """The partitions a run on ``root`` reads, or ``None`` for all of them (a format 1 base, or none).
    ``starts``: the partitions ``listing`` holds only after a key (``lake.tail_listing``)."""
    if root is None or root.format_version != MANIFEST_FORMAT_2:
        return None
    scope = set(listing_changes(root, listing, starts=starts))
    indexes = None if snapshot is None else ConsumedIndexes(snapshot, now_ms=now_ms)
    configs: dict[str, TopicConfig] = {}
    for partition in root.partitions:
        topic_partition = partition.topic_partition
        if topic_partition in scope or topic_partition not in selection:
            continue
        topic = topic_partition.topic
        if topic not in configs:
            configs[topic] = config.for_topic(topic)
        if partition_may_change(partition, configs[topic], now_ms=now_ms, indexes=indexes):
            scope.add(topic_partition)
    return frozenset(scope)


def adopt_in_scope(
    txn: LakeTransaction,
    config: Config,
    *,
    snapshot: OffsetSnapshot | None,
    reader: SegmentReader | None,
    full_listing: bool = False,
) -> AdoptionResult:
    """A run's adoption: its listing (a format 2 base: each partition's tail, ``lake.tail_listing``;
    else, or with ``full_listing``, the whole lake), the base narrowed to ``run_scope`` (format 2), the
    run's selection checked against every partition the lake has once adopted.

    Raises:
        PartitionNotFoundError: the run chose a topic or partition the lake does not have (``--topics``,
            the DAG's ``topics``/``partitions``): an input error, a typo plans nothing.
    """
    store, record, root = txn.store, txn.run, txn.base_root
    tails = None
    if root is not None and root.format_version == MANIFEST_FORMAT_2 and not full_listing:
        tails = list_tails(store, root)
    listing = list(store.list()) if tails is None else list(tails.objects)
    scope = run_scope(
        root,
        listing,
        config,
        now_ms=record.now_ms,
        snapshot=snapshot,
        selection=record.selection,
        starts=None if tails is None else tails.starts,
    )
    if scope is not None:
        txn.narrow(scope)
    if tails is not None and txn.base is not None:
        listing = as_adoption_listing(store, tails, txn.base)
    adoption = txn.adopt(reader=reader, listing=listing)
    partitions = txn.partitions_after(adoption)
    missing = record.selection.missing(partitions)
    if missing:
        topics = sorted({tp.topic for tp in partitions})
        raise PartitionNotFoundError(
            f"run {record.run_id!r} chose {', '.join(missing)}, not in the lake "
            f"(topics: {', '.join(topics) or '(none)'})",
            location=store.describe(),
        )
    return adoption
