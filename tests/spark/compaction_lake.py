"""A compacted lake for the Spark-parity tests: Kafka-named segment objects covering what a cleaning round
must reproduce byte for byte on any engine (docs/compaction.md), and the configuration that cleans it.

Topics and partitions (one round per eligible partition; ``now`` = ``NOW1`` for the first run):

* ``c`` (``cleanup.policy=compact``):
  * ``c-0`` LZ4: keys updated across segments, unkeyed records (dropped by the round), tombstones in
    single-record and multi-record batches (kept and stamped with ``now + delete.retention.ms`` by the first
    round, dropped by a round at or after that horizon);
  * ``c-1`` ZSTD: producer 1's transaction spans segments and commits, producer 2's spans segments and aborts
    (its data is dropped, its marker and ``.txnindex`` entry kept while its batches are traversed),
    producer 3 is idempotent and its last batch loses every record to a newer value (kept empty: the
    producer is active: RETAIN_EMPTY), producer 4's transaction commits in the next segment;
  * ``c-2`` a legacy v1 segment (plain messages, a v1 tombstone and a GZIP wrapper: rewritten as v2)
    followed by v2 segments (one SNAPPY batch);
  * ``c-3`` an LZ4 batch whose CRC is right but whose payload does not decompress: adoption (header scan)
    accepts it, the round fails on it and the partition is quarantined for the run (Kafka marks it
    uncleanable);
  * ``c-4`` a segment with a flipped byte: adoption's CRC check quarantines the partition.
* ``cd`` (``compact,delete``, ``retention.ms`` 2 days): two old segments and newer ones; the round runs first,
  then time retention removes the cleaned old segments in the same run.
* ``d`` (``delete``): two old segments deleted by ``retention.ms``, the newest kept.

``internal.segment.bytes`` is set so that grouping (``Cleaner.groupSegmentsBySize``) merges some
neighbouring segments and not others; ``index.interval.bytes`` is small so the rebuilt ``.index`` and
``.timeindex`` have entries to compare.

``second_run_objects`` are the segments a broker sync uploads before the second run (at ``NOW2`` = ``NOW1``
+ ``delete.retention.ms``): a new active segment for ``c-0`` and ``c-1`` makes their previous active
segments cleanable, and the round recopies the whole log below its end, tombstones past their horizon
included (an expired horizon alone triggers no round).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kafka_segments.records import CompressionType
from kafka_segments.records.batch import ATTRIBUTES_OFFSET, CRC_OFFSET, RECORDS_OFFSET
from kafka_segments.records.crc import crc32c
from kafka_segments.segment.writer import write_segment
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import T0
from unit.compaction_helpers import LogBuilder, legacy_message, legacy_wrapper

HOUR = 3_600_000
DAY = 24 * HOUR
NOW1 = T0
"""The first run's logical time."""
DELETE_RETENTION_MS = HOUR
NOW2 = NOW1 + DELETE_RETENTION_MS
"""The second run's logical time: the first round's tombstone horizon (``currentTime < horizon`` fails)."""
RECENT = NOW1 - HOUR
"""When the recent records were written (producers stay active: producer.id.expiration.ms is a day)."""
OLD = NOW1 - 10 * DAY
"""When the old records of ``cd`` and ``d`` were written (past their two-day retention.ms)."""
INDEX_INTERVAL_BYTES = 128
SEGMENT_BYTES = 700
"""``internal.segment.bytes`` of ``c``: two neighbouring segments fit in one group, three do not."""
CD_SEGMENT_BYTES = 220
"""``internal.segment.bytes`` of ``cd``: its two old segments make one group, the newer ones one each."""

C = [TopicPartition("c", p) for p in range(5)]
CD0 = TopicPartition("cd", 0)
D0 = TopicPartition("d", 0)
UNCLEANABLE = C[3]
"""Quarantined by the round (its payload cannot be decompressed)."""
DAMAGED = C[4]
"""Quarantined by adoption (a CRC mismatch)."""

LZ4, ZSTD, GZIP, SNAPPY = (
    CompressionType.LZ4,
    CompressionType.ZSTD,
    CompressionType.GZIP,
    CompressionType.SNAPPY,
)

CONFIG_YAML = f"""\
broker:
  producer.id.expiration.ms: {DAY}
topics:
  c:
    cleanup.policy: compact
    delete.retention.ms: {DELETE_RETENTION_MS}
    min.cleanable.dirty.ratio: 0.0
    internal.segment.bytes: {SEGMENT_BYTES}
    index.interval.bytes: {INDEX_INTERVAL_BYTES}
  cd:
    cleanup.policy: compact,delete
    retention.ms: {2 * DAY}
    delete.retention.ms: {DELETE_RETENTION_MS}
    min.cleanable.dirty.ratio: 0.0
    internal.segment.bytes: {CD_SEGMENT_BYTES}
    index.interval.bytes: {INDEX_INTERVAL_BYTES}
  d:
    retention.ms: {2 * DAY}
"""


@dataclass
class PartitionLog:
    """A partition's log built with ``LogBuilder``, turned into Kafka-named segment objects."""

    topic_partition: TopicPartition
    log: LogBuilder = field(default_factory=lambda: LogBuilder(timestamp=RECENT))

    def objects(self, *, skip: int = 0) -> dict[str, bytes]:
        """``<topic>-<p>/<base>.log`` (+ indexes) of every segment after the first ``skip`` ones; open
        transactions carry over from one segment to the next (``.txnindex`` of the aborting segment)."""
        out: dict[str, bytes] = {}
        ongoing: Mapping[int, int] = {}
        for index, (base, batches) in enumerate(self.log.chunks):
            files = write_segment(
                batches, base_offset=base, ongoing_txns=ongoing, index_interval_bytes=INDEX_INTERVAL_BYTES
            )
            ongoing = files.ongoing_txns
            if index >= skip:
                out.update({f"{self.topic_partition.dir_name}/{n}": d for n, d in files.files().items()})
        return out


def _c0() -> PartitionLog:
    part = PartitionLog(C[0])
    log = part.log
    log.records([(0, 0), (1, 1), (2, 2)], codec=LZ4)
    log.records([(3, 3), (4, 4), (5, 5)], codec=LZ4)
    log.records([(None, "u0"), (None, "u1")], codec=LZ4)
    log.roll()
    log.records([(0, 10), (1, 11)], codec=LZ4)
    log.rec(6, 6, codec=LZ4)
    log.records([(7, 7), (8, 8)], codec=LZ4)
    log.roll()
    log.tomb(2)
    log.tomb(3, codec=LZ4)
    log.records([(4, None), (9, 9)], codec=LZ4)
    log.roll()
    log.records([(10, 10), (11, 11), (None, "u2")], codec=LZ4)
    log.rec(5, 15, codec=LZ4)
    log.roll()
    log.records([(12, 12), (None, "u3")], codec=LZ4)
    return part


def _c1() -> PartitionLog:
    part = PartitionLog(C[1])
    log = part.log
    log.txn(1, [1, 2], codec=ZSTD)
    log.txn(2, [3, 4], codec=ZSTD)
    log.records([(5, 5), (6, 6)], producer_id=3, codec=ZSTD)
    log.roll()
    log.txn(1, [5], codec=ZSTD)
    log.txn(2, [1], codec=ZSTD)
    log.abort(2)
    log.records([(7, 7)], producer_id=3, codec=ZSTD)
    log.roll()
    log.commit(1)
    log.records([(8, 8)], producer_id=3, codec=ZSTD)
    log.rec(8, 80, codec=ZSTD)
    log.txn(4, [9], codec=ZSTD)
    log.roll()
    log.commit(4)
    log.rec(2, 20, codec=ZSTD)
    log.roll()
    log.rec(1, 100, codec=ZSTD)
    return part


def _c2() -> PartitionLog:
    part = PartitionLog(C[2])
    log = part.log
    inner = b"".join(
        legacy_message(1, i, str(k).encode(), b"w", timestamp=RECENT) for i, k in enumerate([1, 3, 4])
    )
    for entry in (
        legacy_message(1, 0, b"1", b"a", timestamp=RECENT),
        legacy_message(1, 1, b"2", None, timestamp=RECENT),
        legacy_wrapper(4, GZIP, inner, timestamp=RECENT),
    ):
        log.append(entry)
    log.roll()
    log.rec(1, "b")
    log.records([(3, "c"), (5, "d")], codec=SNAPPY)
    log.roll()
    log.rec(6, 6)
    return part


def _c3() -> PartitionLog:
    """Offset 0 is fine; the LZ4 batch at offsets 1-6 keeps its frame's first bytes and then garbage, under a
    recomputed CRC (CRC-32C from the attributes to the end): intact for a header scan, undecodable."""
    part = PartitionLog(C[3])
    log = part.log
    log.rec(0, 0)
    log.records([(k, k) for k in range(1, 7)], codec=LZ4)
    batches = log.chunks[-1][1]
    broken = bytearray(batches[-1])
    garbage_from = RECORDS_OFFSET + 8
    broken[garbage_from:] = b"\x5a" * (len(broken) - garbage_from)
    broken[CRC_OFFSET:ATTRIBUTES_OFFSET] = struct.pack(">I", crc32c(bytes(broken[ATTRIBUTES_OFFSET:])))
    batches[-1] = bytes(broken)
    log.roll()
    log.rec(1, 1)
    return part


def _c4() -> PartitionLog:
    part = PartitionLog(C[4])
    log = part.log
    log.records([(0, 0), (1, 1)])
    log.roll()
    log.records([(0, 2), (1, 3)])
    log.roll()
    log.rec(2, 2)
    return part


def _damage(objects: dict[str, bytes]) -> None:
    """Flip one byte inside the records of ``c-4``'s second segment (its CRC no longer matches)."""
    key = f"{DAMAGED.dir_name}/00000000000000000002.log"
    data = bytearray(objects[key])
    data[-3] ^= 0x01
    objects[key] = bytes(data)


def _cd0() -> PartitionLog:
    part = PartitionLog(CD0)
    log = part.log
    log.records([(k, k) for k in range(4)], timestamp=OLD)
    log.roll()
    log.records([(k, 10 + k) for k in range(2, 6)], timestamp=OLD)
    log.roll()
    log.records([(0, 20), (1, 21)])
    log.rec(6, 26)
    log.roll()
    log.records([(4, 30), (7, 37)])
    log.roll()
    log.rec(8, 40)
    return part


def _d0() -> PartitionLog:
    part = PartitionLog(D0)
    log = part.log
    for stamp in (OLD, OLD):
        log.records([(None, "x"), (None, "y")], timestamp=stamp)
        log.roll()
    log.records([(None, "z")])
    return part


def partition_logs() -> list[PartitionLog]:
    return [_c0(), _c1(), _c2(), _c3(), _c4(), _cd0(), _d0()]


def first_run_objects() -> dict[str, bytes]:
    """Every object of the lake before the first run (Kafka's names, as a sync of log directories)."""
    objects: dict[str, bytes] = {}
    for part in partition_logs():
        objects.update(part.objects())
    _damage(objects)
    return objects


def second_run_objects() -> dict[str, bytes]:
    """The segments uploaded after the first commit: one new active segment for ``c-0`` and ``c-1``."""
    objects: dict[str, bytes] = {}
    for part in partition_logs()[:2]:
        rolled = len(part.log.chunks)
        part.log.roll()
        part.log.rec(13, 13, codec=LZ4)
        objects.update(part.objects(skip=rolled))
    return objects


def upload(store: ObjectStore, objects: Mapping[str, bytes]) -> None:
    for key, data in sorted(objects.items()):
        store.put(key, data)


def segment_keys(keys: Iterable[str]) -> list[str]:
    """The keys under partition directories (not the lake's own ``_kafka_segments/`` documents)."""
    return sorted(key for key in keys if not key.startswith("_"))
