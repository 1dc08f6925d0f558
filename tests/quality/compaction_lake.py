"""A lake where one run compacts and deletes, the stages before validation, and edits of the staged output.

Topic ``c`` (cleanup.policy compact), partition ``c-0``: three closed segments and the active one, one
single-record batch per offset, every record at ``OLD``::

    [0-2] k1=a k2=a k3=a | [3-5] k1=b k2=<tombstone> k4=b | [6-7] k1=c k5=c | [8] k6=d (active)

Kafka's round (``Cleaner.doClean``) ends at the active segment (8), recopies everything below it into one
group (the segments are far below segment.bytes) with the base offset 0, and keeps the latest record per key:
``k3@2, k2@4 (tombstone, stamped with its delete horizon), k4@5, k1@6, k5@7``; the checkpoint becomes 8.
Partition ``c-1`` holds only its active segment: nothing to clean (skipped).

Topic ``cd`` (compact,delete, retention.ms 1000), partition ``cd-0``: the same log. The round writes the same
output, then every deletion pass runs over the log the round left: retention.ms deletes the output and the
(old) active segment, the log start offset becomes the log end offset 9, and the checkpoint stays 8, below
it (``deleteOldSegments`` does not touch the cleaner checkpoint).

Topic ``t`` (delete, retention.ms 1000), partition ``t-0``: ``[0-4]`` at ``OLD``, ``[5-9]`` at ``NOW``:
retention.ms deletes ``[0-4]``.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka_segments.config import Config
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import write_segment
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, upload_segment
from lake.retention_helpers import config, single_record_batch

from quality.helpers import NOW, stage

OLD = 10
C0 = TopicPartition("c", 0)
C1 = TopicPartition("c", 1)
CD0 = TopicPartition("cd", 0)
T0 = TopicPartition("t", 0)

Entry = tuple[int, str, str | None]
"""(offset, key, value); a ``None`` value is a tombstone."""

COMPACTED_LOG: tuple[tuple[Entry, ...], ...] = (
    ((0, "k1", "a"), (1, "k2", "a"), (2, "k3", "a")),
    ((3, "k1", "b"), (4, "k2", None), (5, "k4", "b")),
    ((6, "k1", "c"), (7, "k5", "c")),
    ((8, "k6", "d"),),
)
END_OFFSET = 8
"""The round's end offset: the active segment's base offset."""
CLEANED_KEYS = [("k3", b"a"), ("k2", None), ("k4", b"b"), ("k1", b"c"), ("k5", b"c"), ("k6", b"d")]
"""``c-0`` after the round: the latest record per key, in offset order (the tombstone is kept)."""

YAML = """\
topics:
  c:
    cleanup.policy: compact
  cd:
    cleanup.policy: compact,delete
    retention.ms: 1000
  t:
    retention.ms: 1000
"""


def compaction_config() -> Config:
    return config(YAML)


def keyed_batch(offset: int, key: str, value: str | None, *, ts: int = OLD) -> bytes:
    record = Record(offset, ts, key.encode(), None if value is None else value.encode())
    return build_batch([record], base_offset=offset)


def upload_keyed_log(
    store: ObjectStore, tp: TopicPartition, log: Sequence[Sequence[Entry]], *, ts: int = OLD
) -> None:
    for segment in log:
        batches = [keyed_batch(offset, key, value, ts=ts) for offset, key, value in segment]
        upload_segment(store, tp, write_segment(batches, base_offset=segment[0][0]))


def compaction_lake(store: ObjectStore, clock: FakeClock) -> None:
    """Upload every partition and adopt them (version 1)."""
    upload_keyed_log(store, C0, COMPACTED_LOG)
    upload_keyed_log(store, C1, COMPACTED_LOG[-1:])
    upload_keyed_log(store, CD0, COMPACTED_LOG)
    for base, ts in ((0, OLD), (5, NOW)):
        batches = [single_record_batch(o, ts=ts) for o in range(base, base + 5)]
        upload_segment(store, T0, write_segment(batches, base_offset=base))
    adopt(store, now_ms=NOW, clock=clock)


def staged_compaction_run(store: ObjectStore, clock: FakeClock, *, dry_run: bool = False) -> str:
    """The lake above, prepared and executed (staged, not validated); returns the run id."""
    compaction_lake(store, clock)
    return stage(store, compaction_config(), clock, dry_run=dry_run)
