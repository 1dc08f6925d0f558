"""Building blocks of the compaction run tests: Kafka's LogCleanerTest logs in a lake, run, read back twice.

* ``LakeLog`` wraps the unit tests' ``LogBuilder`` (``rec`` / ``tomb`` / ``txn`` / ``commit`` / ``abort`` /
  ``roll``, as Kafka's LogCleanerTest builds logs) and uploads its segments under Kafka's plain names, the way
  a sync of a broker's log directory would: ``sync`` uploads each segment that is new or grew since the last
  sync (a grown active segment is re-adopted by the next run), with the indexes ``write_segment`` builds (open
  transactions carried from segment to segment, so ``.txnindex`` holds the aborts). With ``segment_bytes`` it
  rolls like a broker does (``LogSegment.shouldRoll``: the append would take the segment past
  ``segment.bytes``).
* ``compact_config`` is a configuration with ``cleanup.policy=compact`` and ``min.cleanable.dirty.ratio=0``
  (strictly greater: any dirty section is eligible) unless told otherwise; ``kafka_test_config`` adds the log
  configuration of Kafka's LogCleanerTest (``internal.segment.bytes``, ``segment.index.bytes`` 1024).
* ``undecodable``, ``upload_cleaner_checkpoint`` / ``upload_log_start_offsets``: a batch adoption accepts
  but a round cannot decode, and a copied log directory's checkpoint files.
* ``run_at`` is one ``run_retention`` at the logical time ``now``.
* ``read_lake`` reads the committed partition back with our reader (``iter_visible_batches``) **and** with
  kafka-python's ``MemoryRecords``, asserts both see the same batches (offsets, producer fields, flags,
  timestamps, delete horizon, records), and gives the observables Kafka's LogCleanerTest asserts on: keys,
  offsets, batch lasts, batch bases, last sequences.
"""

from __future__ import annotations

import struct
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_segments.checkpoint import format_offset_checkpoint
from kafka_segments.config import Config, parse_config
from kafka_segments.errors import ObjectNotFoundError
from kafka_segments.lake.history import manifest_versions, read_head
from kafka_segments.lake.layout import (
    CLEANER_OFFSET_CHECKPOINT_KEY,
    LOG_START_OFFSET_CHECKPOINT_KEY,
    index_keys,
)
from kafka_segments.lake.reader import iter_visible_batches, read_segment, resolve_manifest, visible_segments
from kafka_segments.pipeline.compaction.stage import CompactionStatus, PartitionCompaction
from kafka_segments.pipeline.retention_run import RunOptions, RunResult, run_retention
from kafka_segments.records import CompressionType
from kafka_segments.records.batch import ATTRIBUTES_OFFSET, CRC_OFFSET, BatchHeader
from kafka_segments.records.crc import crc32c
from kafka_segments.segment.txn_index import AbortedTxn, parse_txn_index
from kafka_segments.segment.writer import write_segment
from kafka_segments.state import PartitionState, SegmentEntry
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, upload_segment
from unit.compaction_helpers import LogBuilder

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.record.memory_records import MemoryRecords

TP = TopicPartition("t", 0)
DELETE_HORIZON_BIT = 0x40

RecordRow = tuple[int, int, bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]


# --- writing a log into the lake ---------------------------------------------------------------------------


@dataclass
class SizedLogBuilder(LogBuilder):
    """``LogBuilder`` that rolls before an append that would take the active segment past ``segment_bytes``
    (``LogSegment.shouldRoll``); ``None``: only ``roll()`` rolls."""

    segment_bytes: int | None = None

    def append(self, batch: bytes) -> int:
        batches = self.chunks[-1][1]
        full = (
            self.segment_bytes is not None and sum(len(b) for b in batches) + len(batch) > self.segment_bytes
        )
        if batches and full:
            self.roll()
        return super().append(batch)

    @property
    def segment_count(self) -> int:
        """Kafka's ``numberOfSegments``: the active segment counts, even when empty."""
        return len(self.chunks)


@dataclass
class LakeLog:
    """One partition's log as the broker writes it, and what of it was uploaded to the lake."""

    log: SizedLogBuilder = field(default_factory=SizedLogBuilder)
    tp: TopicPartition = TP
    uploaded: dict[int, int] = field(default_factory=dict)
    """Base offset -> number of batches when last uploaded."""

    @classmethod
    def of(
        cls, *, tp: TopicPartition = TP, timestamp: int | None = None, segment_bytes: int | None = None
    ) -> LakeLog:
        builder = SizedLogBuilder(segment_bytes=segment_bytes)
        if timestamp is not None:
            builder.timestamp = timestamp
        return cls(builder, tp)

    def sync(self, store: ObjectStore) -> list[str]:
        """Upload every segment that is new or grew since the last sync; returns the ``.log`` keys."""
        keys = []
        ongoing: Mapping[int, int] | None = None
        for base, batches in self.log.chunks:
            files = write_segment(batches, base_offset=base, ongoing_txns=ongoing)
            ongoing = files.ongoing_txns
            if self.uploaded.get(base) != len(batches):
                keys.append(upload_segment(store, self.tp, files))
                self.uploaded[base] = len(batches)
        return keys

    @property
    def bases(self) -> list[int]:
        return [base for base, _ in self.log.chunks]


def upload_cleaner_checkpoint(store: ObjectStore, offsets: Mapping[TopicPartition, int]) -> None:
    """A copied log directory's ``cleaner-offset-checkpoint`` (taken as is when the lake bootstraps)."""
    store.put(CLEANER_OFFSET_CHECKPOINT_KEY, format_offset_checkpoint(offsets))


def upload_log_start_offsets(store: ObjectStore, offsets: Mapping[TopicPartition, int]) -> None:
    """A copied log directory's ``log-start-offset-checkpoint`` (applied when the lake bootstraps)."""
    store.put(LOG_START_OFFSET_CHECKPOINT_KEY, format_offset_checkpoint(offsets))


def undecodable(batch: bytes) -> bytes:
    """``batch`` claiming gzip records it does not have, with a *valid* CRC: adoption (headers and CRCs)
    accepts it, a cleaning round cannot decode it."""
    buf = bytearray(batch)
    (attributes,) = struct.unpack_from(">h", buf, ATTRIBUTES_OFFSET)
    struct.pack_into(">h", buf, ATTRIBUTES_OFFSET, attributes | int(CompressionType.GZIP))
    struct.pack_into(">I", buf, CRC_OFFSET, crc32c(bytes(buf[ATTRIBUTES_OFFSET:])))
    return bytes(buf)


# --- configuration and runs --------------------------------------------------------------------------------


def dotted(name: str) -> str:
    """``min_cleanable_dirty_ratio`` -> ``min.cleanable.dirty.ratio`` (and the ``kafka_segments.`` prefix)."""
    return name.replace("_", ".").replace("kafka.segments.", "kafka_segments.")


def _yaml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return f'"{value}"'


def config_yaml(
    topics: Mapping[str, Mapping[str, object]], broker: Mapping[str, object] | None = None
) -> str:
    lines = []
    if broker:
        lines.append("broker:")
        lines.extend(f"  {name}: {_yaml_value(value)}" for name, value in broker.items())
    lines.append("topics:")
    for topic, settings in topics.items():
        lines.append(f"  {topic}:" if settings else f"  {topic}: {{}}")
        lines.extend(f"    {name}: {_yaml_value(value)}" for name, value in settings.items())
    return "\n".join(lines) + "\n"


def compaction_settings(**settings: object) -> dict[str, object]:
    """Topic settings for a compaction test: compact, dirty ratio 0, then ``settings`` (dotted names)."""
    return {
        "cleanup.policy": "compact",
        "min.cleanable.dirty.ratio": 0.0,
        **{dotted(name): value for name, value in settings.items()},
    }


def compact_config(
    *, broker: Mapping[str, object] | None = None, topic: str = "t", **settings: object
) -> Config:
    """One compacted topic (see ``compaction_settings``); ``broker`` uses dotted names as given."""
    return parse_config(
        config_yaml({topic: compaction_settings(**settings)}, broker), source="compaction-test.yaml"
    )


def kafka_test_config(segment_bytes: int, **settings: object) -> Config:
    """The log configuration of Kafka's LogCleanerTest / LogCleanerManagerTest: ``internal.segment.bytes``
    (segment.bytes without its 1 MiB minimum) and ``segment.index.bytes`` 1024, compacted."""
    topic = compaction_settings(internal_segment_bytes=segment_bytes, segment_index_bytes=1024, **settings)
    return parse_config(config_yaml({"t": topic}), source="compaction-test.yaml")


def topics_config(
    topics: Mapping[str, Mapping[str, object]], *, broker: Mapping[str, object] | None = None
) -> Config:
    return parse_config(config_yaml(topics, broker), source="compaction-test.yaml")


def run_at(
    store: ObjectStore, cfg: Config, now: int, *, dry_run: bool = False, clock: FakeClock | None = None
) -> RunResult:
    """One run at the logical time ``now`` (the wall clock is a fake that stays put: gc deletes nothing)."""
    options = RunOptions(now_ms=now, dry_run=dry_run)
    return run_retention(store, cfg, options, clock=clock or FakeClock())


def compaction_of(result: RunResult, tp: TopicPartition = TP) -> PartitionCompaction:
    found = result.compaction.partition(tp)
    if found is None:
        raise AssertionError(f"the run reports no compaction for {tp}: {result.compaction.to_dict()}")
    return found


def left_unread(result: RunResult, tp: TopicPartition = TP) -> None:
    """The run did not read ``tp``: on a format 2 lake a partition whose summary says the cleaner (and
    retention) cannot change it is carried into the commit as it is (docs/metadata-format-2.md, "The
    summary"), where a run over every partition reports it skipped (``tests/lake/test_format2_runs.py``
    checks the two decide the same)."""
    if result.compaction.partition(tp) is not None or any(
        p.topic_partition == tp for p in result.plan.partitions
    ):
        raise AssertionError(f"the run read {tp}: {result.compaction.to_dict()}")


def cleaned(result: RunResult, tp: TopicPartition = TP) -> PartitionCompaction:
    """The partition's round, which must have run."""
    found = compaction_of(result, tp)
    if found.status is not CompactionStatus.CLEANED or found.stats is None:
        raise AssertionError(f"{tp} was not cleaned: {found.to_dict()}")
    return found


def committed(store: ObjectStore, tp: TopicPartition = TP) -> PartitionState:
    state = resolve_manifest(store).partition(tp)
    if state is None:
        raise AssertionError(f"{tp} is not in the head manifest")
    return state


def latest_version(store: ObjectStore) -> int:
    versions = manifest_versions(store)
    return versions[-1] if versions else 0


def retired_reasons(store: ObjectStore) -> dict[str, str]:
    head = read_head(store)
    return {} if head is None else {r.key: r.reason for r in head.retired}


def segment_txn_index(store: ObjectStore, segment: SegmentEntry) -> tuple[AbortedTxn, ...]:
    """The aborted transactions of the segment's ``.txnindex`` object (none when there is no object: Kafka
    creates the file only with an entry)."""
    try:
        data = store.get(index_keys(segment.key)[-1])
    except ObjectNotFoundError:
        return ()
    return tuple(parse_txn_index(data, base_offset=segment.base_offset))


def object_keys(store: ObjectStore) -> set[str]:
    return {meta.key for meta in store.list()}


# --- reading the committed lake back, twice -----------------------------------------------------------------


@dataclass(frozen=True)
class BatchView:
    """What both readers must agree on about one batch."""

    base_offset: int
    last_offset: int
    magic: int
    attributes: int
    codec: int
    timestamp_type: int
    is_transactional: bool
    is_control: bool
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_sequence: int
    records_count: int
    size: int
    records: tuple[RecordRow, ...]

    @property
    def delete_horizon_ms(self) -> int | None:
        """KIP-534: the baseTimestamp field holds the horizon when attribute bit 6 is set."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_BIT else None

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id >= 0


def _our_view(header: BatchHeader, records: Sequence[Any]) -> BatchView:
    return BatchView(
        base_offset=header.base_offset,
        last_offset=header.last_offset,
        magic=header.magic,
        attributes=header.attributes & 0xFF,
        codec=int(header.compression),
        timestamp_type=int(header.timestamp_type),
        is_transactional=header.is_transactional,
        is_control=header.is_control,
        base_timestamp=header.base_timestamp,
        max_timestamp=header.max_timestamp,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        last_sequence=header.last_sequence,
        records_count=header.records_count,
        size=header.size_in_bytes,
        records=tuple(
            (r.offset, r.timestamp, r.key, r.value, tuple((h.key, h.value) for h in r.headers))
            for r in records
        ),
    )


def _kafka_python_view(batch: Any, log_start: int) -> BatchView:
    if not batch.validate_crc():
        raise AssertionError(f"kafka-python: bad CRC in the batch at offset {batch.base_offset}")
    records = tuple(
        (r.offset, r.timestamp, r.key, r.value, tuple(tuple(h) for h in r.headers))
        for r in batch
        if r.offset >= log_start
    )
    return BatchView(
        base_offset=batch.base_offset,
        last_offset=batch.last_offset,
        magic=batch.magic,
        attributes=batch.attributes & 0xFF,
        codec=batch.compression_type,
        timestamp_type=batch.timestamp_type,
        is_transactional=batch.is_transactional,
        is_control=batch.is_control_batch,
        base_timestamp=batch.first_timestamp,
        max_timestamp=batch.max_timestamp,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        last_sequence=batch.last_sequence,
        records_count=batch.records_count,
        size=batch.size_in_bytes,
        records=records,
    )


def kafka_python_batches(store: ObjectStore, state: PartitionState) -> list[BatchView]:
    """The visible batches as kafka-python's reader sees them (every batch must be v2 by then)."""
    views = []
    for segment in visible_segments(state):
        records = MemoryRecords(read_segment(store, segment))
        while (batch := records.next_batch()) is not None:
            if batch.magic != 2:
                raise AssertionError(f"{segment.key}: a magic {batch.magic} entry at {batch.next_offset - 1}")
            if batch.last_offset >= state.log_start_offset:
                views.append(_kafka_python_view(batch, state.log_start_offset))
    return views


def our_batches(store: ObjectStore, state: PartitionState) -> list[BatchView]:
    return [_our_view(batch.header, batch.records) for batch in iter_visible_batches(store, state)]


@dataclass(frozen=True)
class LakeView:
    """A committed partition, read back by both readers, with the observables of Kafka's LogCleanerTest."""

    state: PartitionState
    batches: tuple[BatchView, ...]

    @property
    def keys(self) -> list[int]:
        """Keys of non-control records with a value, in log order."""
        return [
            int(key)
            for b in self.batches
            if not b.is_control
            for _, _, key, value, _ in b.records
            if key is not None and value is not None
        ]

    @property
    def offsets(self) -> list[int]:
        """Offsets of every record with key and value, transaction markers included."""
        return [
            o
            for b in self.batches
            for o, _, key, value, _ in b.records
            if key is not None and value is not None
        ]

    @property
    def batch_lasts(self) -> list[int]:
        return [b.last_offset for b in self.batches]

    @property
    def batch_bases(self) -> list[int]:
        return [b.base_offset for b in self.batches]

    @property
    def last_sequences(self) -> dict[int, int]:
        return {
            b.producer_id: b.last_sequence for b in self.batches if not b.is_control and b.has_producer_id
        }

    @property
    def tombstone_keys(self) -> list[int]:
        return [
            int(key)
            for b in self.batches
            if not b.is_control
            for _, _, key, value, _ in b.records
            if key is not None and value is None
        ]

    @property
    def record_offsets(self) -> list[int]:
        """Every record's offset (control records, unkeyed records and tombstones included)."""
        return [row[0] for b in self.batches for row in b.records]

    def batch_at(self, offset: int) -> BatchView:
        for batch in self.batches:
            if batch.base_offset <= offset <= batch.last_offset:
                return batch
        raise AssertionError(f"no batch holds offset {offset}: {self.batch_bases}")

    @property
    def size(self) -> int:
        return self.state.size_bytes


def read_lake(store: ObjectStore, tp: TopicPartition = TP) -> LakeView:
    """The committed partition read by our reader and by kafka-python's; the two must agree batch by batch."""
    state = committed(store, tp)
    ours = our_batches(store, state)
    theirs = kafka_python_batches(store, state)
    if ours != theirs:
        mismatches = [(a, b) for a, b in zip(ours, theirs, strict=False) if a != b][:3]
        raise AssertionError(
            f"our reader and kafka-python's disagree on {tp} ({len(ours)} vs {len(theirs)} batches): "
            f"{mismatches}"
        )
    return LakeView(state, tuple(ours))
