"""The lake of the ``run --engine spark`` tests, holding both kinds of work: the compaction lake of
``compaction_lake`` (every cleaner rule the Spark engine must keep, two quarantined partitions) and
retention's (``t``: retention.ms, ``k``: consumed retention, with an offsets snapshot); its configuration
and its snapshot."""

from __future__ import annotations

from pathlib import Path

from compaction_lake import CONFIG_YAML, first_run_objects, upload
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import T0
from lake.retention_helpers import group, upload_fifteen_records, write_snapshot

DAY = 86_400_000
RETENTION_TOPICS = """\
  t:
    retention.ms: 10000
    file.delete.delay.ms: 0
  k:
    retention.commitoffset.enable: true
    retention.commitoffset.ms: 86400000
    retention.ms: 2592000000
"""
RUN_FOLDER_RETENTION_MS = 30 * DAY
LAKE_CONFIG = (
    CONFIG_YAML.replace(
        "broker:\n", f"broker:\n  kafka_segments.run.folder.retention.ms: {RUN_FOLDER_RETENTION_MS}\n"
    )
    + RETENTION_TOPICS
)
"""The compaction lake's topics (``c``, ``cd``, ``d``) and retention's; gc keeps run folders for 30 days."""
K0 = TopicPartition("k", 0)


def fill(store: ObjectStore) -> None:
    """The compaction lake, then ``t``'s two partitions (all past retention.ms) and ``k-0`` (two days old)."""
    upload(store, first_run_objects())
    for partition in (0, 1):
        upload_fifteen_records(store, ts=10, tp=TopicPartition("t", partition))
    upload_fifteen_records(store, ts=T0 - 2 * DAY, tp=K0)


def write_offsets(path: Path) -> Path:
    """The offsets snapshot at ``T0``: group ``slow`` has read ``k-0`` up to offset 7."""
    return write_snapshot(path, [group("slow", [(0, 7, T0)], subscribed=["k"], topic="k")], taken_at_ms=T0)
