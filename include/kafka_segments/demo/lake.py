"""The demo lake: a small, realistic copy of a Kafka cluster's log directory, deterministic for its ``now``.

Written with the project's own writers, then uploaded with Kafka's plain names and adopted: ``customers``
(compacted, with tombstones and a committed and an aborted transaction), ``clickstream`` (delete policy,
consumed retention on; ``clickstream-2`` had ``kafka-delete-records`` applied up to offset 50, so its copied
``log-start-offset-checkpoint`` says 50) and ``__consumer_offsets`` (``demo.offsets``). With
``config/demo.yaml`` a run at ``now`` deletes segments of every ``clickstream`` partition (consumed
retention, retention.ms, the log start offset); a second run deletes nothing."""

from __future__ import annotations

import json
from dataclasses import dataclass

from kafka_segments.checkpoint import LOG_START_OFFSET_CHECKPOINT, format_offset_checkpoint
from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.demo.log import DAY_MS, HOUR_MS, Message, PartitionLog, Producer, partition_objects
from kafka_segments.demo.offsets import (
    CLICKSTREAM,
    CLICKSTREAM_PARTITIONS,
    consumer_offsets_objects,
    consumer_offsets_snapshot,
)
from kafka_segments.offsets.snapshot_store import SnapshotPin
from kafka_segments.offsets.sources import LAKE_SOURCE
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.record import Header
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition

DEMO_BUCKET = "kafka-segments-demo"
DEMO_PREFIX = "lake"
CUSTOMERS = "customers"
CUSTOMERS_PARTITIONS = 2
CLICKSTREAM_SEGMENT_AGES_H = ((240, 204), (204, 174), (174, 132), (132, 84), (84, 48), (48, 6))
"""Per clickstream segment: the age in hours (before ``now``) of its first and of its newest record."""
CLICKSTREAM_RECORDS_PER_SEGMENT = 40
CLICKSTREAM_BATCH_RECORDS = 10
DELETE_RECORDS_LOG_START = {TopicPartition(CLICKSTREAM, 2): 50}
"""What ``kafka-delete-records`` had done on the broker before the copy (the copied checkpoint file)."""
_PAGES = ("/", "/search", "/products/42", "/products/7", "/cart", "/checkout", "/account", "/help")


@dataclass(frozen=True, slots=True)
class DemoLake:
    """What ``build_demo_lake`` wrote."""

    now_ms: int
    location: str
    objects: int
    bytes: int
    segments: int
    committed_version: int | None
    """The manifest version adoption committed (``None`` when not adopted)."""


def demo_objects(now_ms: int) -> dict[str, bytes]:
    """Every object of the demo's log directory copy (segments, the log start offset checkpoint), by key."""
    objects: dict[str, bytes] = {}
    for partition in range(CUSTOMERS_PARTITIONS):
        objects.update(partition_objects(CUSTOMERS, partition, _customers(partition, now_ms)))
    for partition in range(CLICKSTREAM_PARTITIONS):
        objects.update(partition_objects(CLICKSTREAM, partition, _clickstream(partition, now_ms)))
    objects.update(consumer_offsets_objects(now_ms))
    objects[LOG_START_OFFSET_CHECKPOINT] = format_offset_checkpoint(DELETE_RECORDS_LOG_START)
    return objects


def build_demo_lake(
    store: ObjectStore, *, now_ms: int, adopt: bool = True, clock: Clock = wall_clock_ms
) -> DemoLake:
    """Upload the demo's objects into ``store`` and (``adopt``) commit them as manifest version 1.

    Raises:
        ObjectStoreError: the store could not be written.
        CommitConflictError, CommitStateUnknownError: as ``lake.adopt_run.adopt``.
    """
    objects = demo_objects(now_ms)
    for key, data in objects.items():
        store.put(key, data)
    version = None
    if adopt:
        from kafka_segments.lake.adopt_run import adopt as adopt_lake

        version = adopt_lake(store, now_ms=now_ms, clock=clock).committed_version
    return DemoLake(
        now_ms=now_ms,
        location=store.describe(),
        objects=len(objects),
        bytes=sum(len(data) for data in objects.values()),
        segments=sum(key.endswith(".log") for key in objects),
        committed_version=version,
    )


def pin_demo_offsets(store: ObjectStore, *, now_ms: int, at_ms: int) -> SnapshotPin:
    """Store and pin, for the logical time ``at_ms``, the offsets snapshot the ``lake`` source would have
    taken at ``at_ms`` from the demo built for ``now_ms`` (what a scheduled deployment would have pinned
    then). Backfills of ``at_ms`` and of later times without a pin of their own use it.

    Raises:
        ObjectStoreError: the store could not be written.
    """
    from kafka_segments.offsets.snapshot_store import pin_snapshot, store_snapshot

    stored = store_snapshot(store, consumer_offsets_snapshot(now_ms, at_ms=at_ms))
    return pin_snapshot(store, now_ms=at_ms, snapshot_id=stored.snapshot_id, source=LAKE_SOURCE)


def pin_demo_history(store: ObjectStore, *, now_ms: int) -> None:
    """The offsets a scheduled deployment would have pinned at the last two midnights before ``now_ms``
    (what backfills of those days use).

    Raises:
        ObjectStoreError: the store could not be written.
    """
    midnight = now_ms // DAY_MS * DAY_MS
    for days in (2, 1):
        pin_demo_offsets(store, now_ms=now_ms, at_ms=midnight - days * DAY_MS)


# -------------------------------------------------------------------------------------------------- topics


def _clickstream(partition: int, now_ms: int) -> PartitionLog:
    """Page views, lz4-compressed batches of 10 from one idempotent producer per partition."""
    log = PartitionLog()
    producer = Producer(producer_id=3000 + partition, epoch=0)
    per_batch = CLICKSTREAM_BATCH_RECORDS
    for oldest_h, newest_h in CLICKSTREAM_SEGMENT_AGES_H:
        log.roll()
        first_ms, last_ms = now_ms - oldest_h * HOUR_MS, now_ms - newest_h * HOUR_MS
        step = (last_ms - first_ms) // (CLICKSTREAM_RECORDS_PER_SEGMENT - 1)
        for start in range(0, CLICKSTREAM_RECORDS_PER_SEGMENT, per_batch):
            stamps = [first_ms + step * i for i in range(start, start + per_batch)]
            if start + per_batch == CLICKSTREAM_RECORDS_PER_SEGMENT:
                stamps[-1] = last_ms
            messages = [_page_view(partition, log.next_offset + i, ts) for i, ts in enumerate(stamps)]
            log.append(messages, producer=producer, compression=CompressionType.LZ4)
    return log


def _page_view(partition: int, offset: int, timestamp_ms: int) -> Message:
    user = f"user-{(offset * 7 + partition * 3) % 23:03d}"
    event = {
        "user": user,
        "page": _PAGES[(offset + partition) % len(_PAGES)],
        "session": f"s-{partition}-{offset // 12}",
        "ts": timestamp_ms,
    }
    headers = (Header("schema", b"clickstream.v2"),) if offset % 10 == 0 else ()
    return Message(timestamp_ms, user.encode(), json.dumps(event, sort_keys=True).encode(), headers)


def _customers(partition: int, now_ms: int) -> PartitionLog:
    """Profile updates keyed by customer id; tombstones; a committed and an aborted transaction."""
    log = PartitionLog()
    writer = Producer(producer_id=5000 + partition, epoch=2)
    importer = Producer(producer_id=5100 + partition, epoch=0)
    day = 0
    for segment in range(3):
        log.roll()
        for _batch in range(3):
            stamp = now_ms - (21 - day) * DAY_MS
            keys = [(day * 5 + i) % 12 for i in range(6)]
            log.append(
                [_profile(partition, key, stamp + i * 1000, version=day) for i, key in enumerate(keys)],
                producer=writer,
                compression=CompressionType.ZSTD,
            )
            day += 2
        closed = stamp + HOUR_MS  # the customer closed the account: a tombstone
        log.append([Message(closed, _customer_key(partition, 11 - segment), None)], producer=writer)
        if segment == 1:
            _import_transactions(log, importer, partition, closed + HOUR_MS)
    return log


def _import_transactions(log: PartitionLog, importer: Producer, partition: int, at_ms: int) -> None:
    """A bulk import: one transaction committed, the next aborted (its records stay in the log, invisible
    to read_committed consumers, and compaction will remove them)."""
    batch = [_profile(partition, 20 + i, at_ms + i, version=100) for i in range(4)]
    log.append(batch, producer=importer, transactional=True, compression=CompressionType.GZIP)
    log.end_transaction(importer, commit=True, timestamp_ms=at_ms + 10)
    retry = [_profile(partition, 24 + i, at_ms + 20 + i, version=101) for i in range(3)]
    log.append(retry, producer=importer, transactional=True, compression=CompressionType.GZIP)
    log.end_transaction(importer, commit=False, timestamp_ms=at_ms + 30)


def _customer_key(partition: int, customer: int) -> bytes:
    return f"customer-{partition}-{customer:03d}".encode()


def _profile(partition: int, customer: int, timestamp_ms: int, *, version: int) -> Message:
    profile = {
        "id": f"{partition}-{customer:03d}",
        "tier": ("bronze", "silver", "gold")[(customer + version) % 3],
        "email": f"c{partition}{customer:03d}@example.com",
        "version": version,
    }
    return Message(
        timestamp_ms, _customer_key(partition, customer), json.dumps(profile, sort_keys=True).encode()
    )
