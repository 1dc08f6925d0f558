"""Compaction on the Spark engine gives the inline engine's bytes (proof point 10 of the compaction issue).

The lake of ``compaction_lake`` (tombstones, transactions committed and aborted across segments, idempotent
producers, unkeyed records, LZ4/ZSTD/SNAPPY/GZIP, a legacy v1 segment, a compact,delete topic, a delete topic,
two quarantined partitions) is uploaded to two fresh S3 prefixes. Two runs follow, each prepared with the same
fixed run id on both copies: ``execute_run`` inline on one copy, ``execute_run`` with ``SparkRunner`` on the
session's ``local[2]`` Spark on the other (executors open the copy through ``s3://``). Both copies are
committed after each run; before the second run a broker sync rolls ``c-0`` and ``c-1``, and the second run's
``now`` is the first round's tombstone horizon.

Compared after each run: plan.json, the staged manifest and the staged report (up to the copies' prefixes,
wall-clock times and phase timings), the bytes of every object the rounds wrote (``.log``, ``.index``,
``.timeindex``, ``.txnindex``), and the committed records as our reader and kafka-python's ``MemoryRecords``
read them. The Kafka rules themselves are checked on the committed result (docs/compaction.md; Kafka's
LogCleanerTest).

``kafka-segments run --engine spark`` (a real ``spark-submit`` and the GX validation stage) on this lake is
``test_spark_cli.py``'s.
"""

from __future__ import annotations

import json
import pickle
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from compaction_lake import (
    CD0,
    CONFIG_YAML,
    D0,
    DAMAGED,
    DELETE_RETENTION_MS,
    NOW1,
    NOW2,
    UNCLEANABLE,
    C,
    first_run_objects,
    second_run_objects,
    upload,
)
from kafka_segments.clock import Clock
from kafka_segments.demo import EmbeddedS3
from kafka_segments.lake.codec import manifest_to_json
from kafka_segments.lake.reader import iter_visible_batches, read_segment, resolve_manifest, visible_segments
from kafka_segments.lake.run_folder import read_staged_manifest
from kafka_segments.pipeline.compaction.stage import CompactionStatus, PartitionCompaction
from kafka_segments.pipeline.compaction.task import CompactionTask
from kafka_segments.pipeline.engines import ClusterEngine, TaskRunner, compaction_task
from kafka_segments.pipeline.engines import tasks as engines_module
from kafka_segments.pipeline.stages import (
    PLAN,
    STAGED,
    commit_staged,
    execute_run,
    prepare_run,
    read_run_json,
)
from kafka_segments.records.batch import RecordBatch
from kafka_segments.records.log import iter_batches
from kafka_segments.records.record import Record
from kafka_segments.segment.txn_index import parse_txn_index
from kafka_segments.state import PartitionState, SegmentOrigin
from kafka_segments.storage import S3Store
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock
from lake.retention_helpers import config
from s3_fixtures import BUCKET, new_s3_store
from spark_helpers import PANDAS_WARNING, normalized, written_by
from spark_runner import SparkRunner

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.record.memory_records import MemoryRecords

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings(PANDAS_WARNING)]

T = TypeVar("T")
R = TypeVar("R")

RUNS = {"parity-1": NOW1, "parity-2": NOW2}
"""The runs' fixed ids (the same on both copies, so written keys match exactly) and logical times."""
FIRST, SECOND = RUNS
SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex")

RecordView = tuple[int, int, bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]
BatchView = tuple[int, int, list[RecordView]]
"""(base offset, magic, records as (offset, timestamp, key, value, headers)), control records included."""


# ------------------------------------------------------------------------------------------------ runner


@dataclass(frozen=True, slots=True)
class Mapped:
    """One fan-out a runner was handed: the function, its items and what came back."""

    fn: Callable[..., Any]
    items: tuple[Any, ...]
    results: tuple[Any, ...]


@dataclass
class RecordingRunner:
    """``SparkRunner`` remembering every fan-out (the run's report still names the engine ``spark``)."""

    inner: SparkRunner
    calls: list[Mapped] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        results = self.inner.map(fn, items)
        self.calls.append(Mapped(fn, tuple(items), tuple(results)))
        return results


# ------------------------------------------------------------------------------------------ one copy, read


@dataclass(frozen=True, slots=True)
class Copy:
    """What one engine did to its copy of the lake in one run."""

    staged: dict[str, Any]
    """plan.json, the staged manifest and the staged report, normalised; ``engine``: the report's engine."""
    written: dict[str, bytes]
    """Every object the run wrote under a partition directory (its run id is in the key) -> its bytes."""
    committed: Any
    """The committed head manifest, normalised."""
    states: dict[TopicPartition, PartitionState]
    records: dict[TopicPartition, list[BatchView]]
    """The committed, visible batches of every readable partition (our reader)."""
    decoded: dict[TopicPartition, list[BatchView]]
    """The batches of the visible segments' bytes, as our codec decodes them."""
    kafka_python: dict[TopicPartition, list[BatchView]]
    """The same bytes as kafka-python's ``MemoryRecords`` decodes them."""
    segments: dict[TopicPartition, list[bytes]]
    """The visible segments' ``.log`` bytes of every readable partition."""


def staged_of(store: S3Store, run_id: str, prefixes: Sequence[str]) -> dict[str, Any]:
    staged = read_run_json(store, run_id, STAGED)
    report = dict(staged["report"])
    manifest = (
        json.loads(manifest_to_json(read_staged_manifest(store, run_id))) if staged["changed"] else None
    )
    return {
        "engine": report.pop("engine"),
        "plan": normalized(read_run_json(store, run_id, PLAN), wall_clock=True, prefixes=prefixes),
        "manifest": normalized(manifest, wall_clock=True, prefixes=prefixes),
        "report": normalized(report, wall_clock=True, prefixes=prefixes),
    }


def _records(records: Iterable[Record]) -> list[RecordView]:
    return [
        (r.offset, r.timestamp, r.key, r.value, tuple((h.key, h.value) for h in r.headers)) for r in records
    ]


def our_view(data: bytes) -> list[BatchView]:
    return [(e.header.base_offset, e.header.magic, _records(e.records)) for e in iter_batches(data)]


def kafka_python_view(data: bytes) -> list[BatchView]:
    """The batches as kafka-python decodes them, CRCs checked."""
    out: list[BatchView] = []
    reader = MemoryRecords(data)
    while (batch := reader.next_batch()) is not None:
        if not batch.validate_crc():
            raise AssertionError(f"kafka-python finds a bad CRC in the batch at offset {batch.base_offset}")
        records = [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in batch]
        out.append((batch.base_offset, batch.magic, records))
    return out


def read_committed(
    store: S3Store, staged: dict[str, Any], written: dict[str, bytes], prefixes: Sequence[str]
) -> Copy:
    """The copy after its commit; partitions the run quarantined are not decoded (their data is bad)."""
    head = resolve_manifest(store)
    states = {state.topic_partition: state for state in head.partitions}
    unreadable = quarantined_in(staged)
    readable = {tp: state for tp, state in states.items() if tp not in unreadable}
    segments = {tp: [read_segment(store, s) for s in visible_segments(st)] for tp, st in readable.items()}
    return Copy(
        staged=staged,
        written=written,
        committed=normalized(json.loads(manifest_to_json(head)), wall_clock=True, prefixes=prefixes),
        states=states,
        records={
            tp: [
                (b.header.base_offset, b.header.magic, _records(b.records))
                for b in iter_visible_batches(store, st)
            ]
            for tp, st in readable.items()
        },
        decoded={tp: [b for data in datas for b in our_view(data)] for tp, datas in segments.items()},
        kafka_python={
            tp: [b for data in datas for b in kafka_python_view(data)] for tp, datas in segments.items()
        },
        segments=segments,
    )


def quarantined_in(staged: dict[str, Any]) -> set[TopicPartition]:
    """The partitions adoption or a failed round quarantined, from the staged report."""
    adoption = {
        TopicPartition(q["topic"], q["partition"]) for q in staged["report"]["adoption"]["quarantined"]
    }
    rounds = {
        TopicPartition(p["topic"], p["partition"])
        for p in staged["plan"]["compaction"]["partitions"]
        if p["status"] == CompactionStatus.QUARANTINED.value
    }
    return adoption | rounds


# ------------------------------------------------------------------------------------------ both engines


@dataclass(frozen=True, slots=True)
class RunPair:
    inline: Copy
    spark: Copy
    spark_calls: tuple[Mapped, ...]
    driver_rounds: tuple[TopicPartition, ...]
    """Rounds the driver process ran during the Spark run (none: they belong on the executors)."""
    spark_lake: str
    """The URI the Spark run's executors opened."""


@dataclass(frozen=True, slots=True)
class Engines:
    inline: S3Store
    spark: S3Store
    uri: str
    """The Spark copy's URI (what the executors open)."""
    prefixes: tuple[str, str]
    inline_clock: Clock
    spark_clock: Clock


def execute_spark(engines: Engines, run_id: str, runner: TaskRunner) -> tuple[TopicPartition, ...]:
    """``execute_run`` on Spark; returns the partitions whose round ran in this (the driver) process."""
    driver_rounds: list[TopicPartition] = []
    real = engines_module.compact_partition

    def in_driver(
        store: Any, run: Any, state: PartitionState, *args: Any, **kwargs: Any
    ) -> PartitionCompaction:
        driver_rounds.append(state.topic_partition)
        return real(store, run, state, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engines_module, "compact_partition", in_driver)
        execute_run(
            engines.spark,
            config(CONFIG_YAML),
            run_id,
            engine=ClusterEngine(runner, engines.uri),
            clock=engines.spark_clock,
        )
    return tuple(driver_rounds)


def run_both(engines: Engines, run_id: str, runner: SparkRunner) -> RunPair:
    """One run prepared with ``run_id`` on both copies, executed inline and on Spark, both committed."""
    now = RUNS[run_id]
    for store, clock in ((engines.inline, engines.inline_clock), (engines.spark, engines.spark_clock)):
        prepare_run(store, now_ms=now, offsets=None, dry_run=False, run_id=run_id, clock=clock)
    execute_run(engines.inline, config(CONFIG_YAML), run_id, clock=engines.inline_clock)
    recording = RecordingRunner(runner)
    driver_rounds = execute_spark(engines, run_id, recording)
    copies = []
    for store, clock in ((engines.inline, engines.inline_clock), (engines.spark, engines.spark_clock)):
        staged, written = staged_of(store, run_id, engines.prefixes), written_by(store, run_id)
        commit_staged(store, run_id, require_validation=False, clock=clock)
        copies.append(read_committed(store, staged, written, engines.prefixes))
    return RunPair(copies[0], copies[1], tuple(recording.calls), driver_rounds, engines.uri)


@pytest.fixture(scope="module")
def parity(s3_server: EmbeddedS3, spark: SparkSession) -> dict[str, RunPair]:
    """Both runs on both copies (one lake build for the whole module)."""
    inline, on_spark = new_s3_store(s3_server), new_s3_store(s3_server)
    prefixes = (inline.prefix.rstrip("/"), on_spark.prefix.rstrip("/"))
    engines = Engines(inline, on_spark, f"s3://{BUCKET}/{prefixes[1]}", prefixes, FakeClock(), FakeClock())
    runner = SparkRunner(spark.sparkContext)
    objects = first_run_objects()
    upload(inline, objects)
    upload(on_spark, objects)
    pairs = {FIRST: run_both(engines, FIRST, runner)}
    rolled = second_run_objects()
    upload(inline, rolled)
    upload(on_spark, rolled)
    pairs[SECOND] = run_both(engines, SECOND, runner)
    return pairs


def compaction_of(copy: Copy, tp: TopicPartition) -> dict[str, Any]:
    (found,) = [
        p
        for p in copy.staged["plan"]["compaction"]["partitions"]
        if (p["topic"], p["partition"]) == (tp.topic, tp.partition)
    ]
    return dict(found)


def headers_and_records(copy: Copy, tp: TopicPartition) -> list[tuple[RecordBatch, list[Record]]]:
    """The committed v2 batches of ``tp`` with their records."""
    return [
        (entry, list(entry.records))
        for data in copy.segments[tp]
        for entry in iter_batches(data)
        if isinstance(entry, RecordBatch)
    ]


def live_pairs(copy: Copy, tp: TopicPartition) -> list[tuple[bytes | None, bytes]]:
    """(key, value) of every committed data record with a value, in log order."""
    return [
        (r.key, r.value)
        for batch, records in headers_and_records(copy, tp)
        if not batch.header.is_control
        for r in records
        if r.value is not None
    ]


def tombstones(copy: Copy, tp: TopicPartition) -> list[tuple[int, int | None]]:
    """(offset, the batch's delete horizon) of every committed tombstone."""
    return [
        (r.offset, batch.header.delete_horizon_ms)
        for batch, records in headers_and_records(copy, tp)
        for r in records
        if r.value is None and not batch.header.is_control
    ]


def pairs(*items: tuple[int | None, int | str]) -> list[tuple[bytes | None, bytes]]:
    return [(None if k is None else str(k).encode(), str(v).encode()) for k, v in items]


# ------------------------------------------------------------------------------------------------- parity


@pytest.mark.parametrize("run_id", list(RUNS))
def test_spark_stages_the_plan_manifest_and_report_the_inline_engine_stages(
    parity: dict[str, RunPair], run_id: str
) -> None:
    inline, on_spark = parity[run_id].inline.staged, parity[run_id].spark.staged
    assert (inline["engine"], on_spark["engine"]) == ("inline", "spark")
    assert on_spark["plan"] == inline["plan"]
    assert on_spark["manifest"] == inline["manifest"]
    assert on_spark["report"] == inline["report"]
    cleaned = [p for p in on_spark["plan"]["compaction"]["partitions"] if p["status"] == "cleaned"]
    assert cleaned, "no round ran: nothing was compared"


@pytest.mark.parametrize("run_id", list(RUNS))
def test_every_object_the_rounds_wrote_has_the_same_bytes_on_both_engines(
    parity: dict[str, RunPair], run_id: str
) -> None:
    inline, on_spark = parity[run_id].inline.written, parity[run_id].spark.written
    assert sorted(on_spark) == sorted(inline)
    assert {key[key.rindex(".") :] for key in inline} == set(SEGMENT_SUFFIXES)
    non_empty = {key[key.rindex(".") :] for key, data in inline.items() if data}
    assert non_empty == set(SEGMENT_SUFFIXES)  # every kind has content to compare (index.interval.bytes 128)
    different = [key for key, data in inline.items() if on_spark[key] != data]
    assert different == []


@pytest.mark.parametrize("run_id", list(RUNS))
def test_both_committed_lakes_read_back_the_same_records_with_both_readers(
    parity: dict[str, RunPair], run_id: str
) -> None:
    pair = parity[run_id]
    assert pair.spark.committed == pair.inline.committed
    assert set(pair.inline.records) == {C[0], C[1], C[2], CD0, D0}
    assert pair.spark.records == pair.inline.records
    for copy in (pair.inline, pair.spark):
        assert copy.kafka_python == copy.decoded
        assert all(copy.records[tp] for tp in copy.records)


@pytest.mark.parametrize("run_id", list(RUNS))
def test_the_spark_run_cleans_on_the_executors_and_its_round_results_come_back_through_the_runner(
    parity: dict[str, RunPair], run_id: str
) -> None:
    pair = parity[run_id]
    assert pair.driver_rounds == ()
    mapped = {call.fn.__name__: call for call in pair.spark_calls}
    assert {"read_task", "compaction_task", "plan_topic"} <= set(mapped)
    rounds = mapped["compaction_task"]
    assert rounds.fn is compaction_task
    tasks = [task for task in rounds.items if isinstance(task, CompactionTask)]
    assert len(tasks) == len(rounds.items)
    expected = [C[0], C[1], C[2], UNCLEANABLE, CD0] if run_id == FIRST else [C[0], C[1], UNCLEANABLE]
    assert sorted(task.state.topic_partition for task in tasks) == expected  # budget order: dirtiest first
    for task in tasks:
        assert task.lake == pair.spark_lake
        assert pickle.loads(pickle.dumps(task)) == task
    results = [r for r in rounds.results if isinstance(r, PartitionCompaction)]
    assert [r.topic_partition for r in results] == [task.state.topic_partition for task in tasks]
    staged = {(p["topic"], p["partition"]): p for p in pair.spark.staged["plan"]["compaction"]["partitions"]}
    for result in results:
        tp = result.topic_partition
        assert normalized(result.to_dict(), wall_clock=True) == normalized(
            staged[(tp.topic, tp.partition)], wall_clock=True
        )


@pytest.mark.parametrize("run_id", list(RUNS))
def test_a_quarantined_partition_is_reported_alike_by_both_engines(
    parity: dict[str, RunPair], run_id: str
) -> None:
    pair = parity[run_id]
    for copy in (pair.inline, pair.spark):
        assert quarantined_in(copy.staged) == {UNCLEANABLE, DAMAGED}
        entry = compaction_of(copy, UNCLEANABLE)
        assert entry["status"] == "quarantined"
        assert "c-3/00000000000000000000.log at byte" in entry["error"]
        assert "cannot decompress LZ4 records" in entry["error"]
        assert entry["segments_written"] == []
        state = copy.states[UNCLEANABLE]
        assert [(s.key, s.origin) for s in state.segments] == [
            ("c-3/00000000000000000000.log", SegmentOrigin.ADOPTED),
            ("c-3/00000000000000000007.log", SegmentOrigin.ADOPTED),
        ]
        assert state.cleaner_checkpoint is None
        assert DAMAGED not in copy.states
    assert compaction_of(pair.spark, UNCLEANABLE) == compaction_of(pair.inline, UNCLEANABLE)
    assert (
        pair.spark.staged["report"]["adoption"]["quarantined"]
        == pair.inline.staged["report"]["adoption"]["quarantined"]
    )


# ------------------------------------------------------------------------------ the Kafka rules, on Spark


def test_kafka_tombstones_are_stamped_by_the_first_round_and_dropped_by_a_round_at_their_horizon(
    parity: dict[str, RunPair],
) -> None:
    """KIP-534: a tombstone first written out by a round is kept with deleteHorizonMs = cleaning time
    + delete.retention.ms; a round with currentTime >= horizon drops it. Unkeyed records in the
    mapped range are dropped, keys keep their latest value only; the active segment is never cleaned."""
    first, second = parity[FIRST].spark, parity[SECOND].spark
    assert tombstones(first, C[0]) == [(o, NOW1 + DELETE_RETENTION_MS) for o in (13, 14, 15)]
    assert live_pairs(first, C[0]) == pairs(
        (0, 10), (1, 11), (6, 6), (7, 7), (8, 8), (9, 9), (10, 10), (11, 11), (5, 15), (12, 12), (None, "u3")
    )
    assert tombstones(second, C[0]) == []
    assert live_pairs(second, C[0]) == pairs(
        (0, 10), (1, 11), (6, 6), (7, 7), (8, 8), (9, 9), (10, 10), (11, 11), (5, 15), (12, 12), (13, 13)
    )


def test_kafka_aborted_data_goes_and_the_last_batches_of_active_producers_stay_empty(
    parity: dict[str, RunPair],
) -> None:
    """``Cleaner.cleanInto``: producer 2's aborted batches (spanning segments 0 and 1) are dropped, its last
    data batch is kept empty (RETAIN_EMPTY: the producer is active) so its ABORT marker stays with its
    ``.txnindex`` entry re-appended to the written segment; idempotent producer 3's last batch lost its record
    to a newer value and is kept empty; producer 1's transaction (also spanning segments) commits and keeps
    only latest keys. Batches keep their offsets and producer metadata."""
    copy = parity[FIRST].spark
    batches = headers_and_records(copy, C[1])
    empty = [(b.header.producer_id, b.header.last_offset) for b, records in batches if not records]
    assert empty == [(2, 7), (3, 11)]
    aborted_data = [
        r.offset for b, rs in batches if b.header.producer_id == 2 and not b.header.is_control for r in rs
    ]
    assert aborted_data == []
    assert live_pairs(copy, C[1]) == pairs((1, 1), (6, 6), (5, 5), (7, 7), (8, 80), (9, 9), (2, 20), (1, 100))
    markers = [(b.header.producer_id, b.header.base_offset) for b, _ in batches if b.header.is_control]
    assert markers == [(2, 8), (1, 10), (4, 14)]
    (txn_index,) = [
        data for key, data in copy.written.items() if key.startswith("c-1/") and key.endswith(".txnindex")
    ]
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in parse_txn_index(txn_index)] == [(2, 2, 8)]


def test_kafka_a_legacy_v1_segment_is_rewritten_as_v2_batches(parity: dict[str, RunPair]) -> None:
    """``MemoryRecords.filterTo``: a 4.x cleaner writes v0/v1 entries as v2 (the GZIP wrapper's survivor keeps
    its codec; a legacy entry's rebuilt batch starts at its first retained record, ``baseOffset`` of
    ``MemoryRecords.buildRetainedRecordsInto``); a kept v1 tombstone is stamped with the v2 delete horizon
    (KIP-534); the SNAPPY batch whose records all survive is copied verbatim."""
    copy = parity[FIRST].spark
    batches = headers_and_records(copy, C[2])
    assert {b.header.magic for b, _ in batches} == {2}
    assert tombstones(copy, C[2]) == [(1, NOW1 + DELETE_RETENTION_MS)]
    assert live_pairs(copy, C[2]) == pairs((4, "w"), (1, "b"), (3, "c"), (5, "d"), (6, 6))
    codecs = [(b.header.base_offset, b.header.compression.name) for b, _ in batches]
    assert codecs == [(1, "NONE"), (4, "GZIP"), (5, "NONE"), (6, "SNAPPY"), (8, "NONE")]
    snappy = next(b for b, _ in batches if b.header.base_offset == 6)
    assert bytes(snappy.raw) in first_run_objects()["c-2/00000000000000000005.log"]


def test_kafka_compact_delete_cleans_then_time_retention_deletes_the_old_cleaned_segment(
    parity: dict[str, RunPair],
) -> None:
    """compact,delete: the round runs first (its two old segments make one group; the newer segments'
    output is byte-identical and they stay as they are), then retention.ms deletes the cleaned old segment
    in the same run; the delete topic loses its two old segments."""
    copy = parity[FIRST].spark
    entry = compaction_of(copy, CD0)
    assert entry["segments_replaced"] == ["cd-0/00000000000000000000.log", "cd-0/00000000000000000004.log"]
    assert entry["segments_written"] == ["cd-0/00000000000000000000-parity-1.log"]
    assert entry["stats"]["segments_kept"] == 2
    (planned,) = [p for p in copy.staged["plan"]["plan"]["partitions"] if p["topic"] == "cd"]
    assert planned["log_start_offset"] == {"before": 0, "after": 8}
    state = copy.states[CD0]
    assert [s.key for s in state.segments] == [f"cd-0/{base:020d}.log" for base in (8, 11, 13)]
    assert state.log_start_offset == 8
    assert [s.base_offset for s in copy.states[D0].segments] == [4]
    assert copy.states[D0].log_start_offset == 4
    retired = [(r["key"], r["reason"]) for r in copy.committed["retired"] if r["topic"] == "cd"]
    assert retired == [
        ("cd-0/00000000000000000000.log", "compaction"),
        ("cd-0/00000000000000000004.log", "compaction"),
        ("cd-0/00000000000000000000-parity-1.log", "retention.ms"),
    ]


def test_kafka_grouping_merges_neighbouring_segments_into_one_cleaned_segment(
    parity: dict[str, RunPair],
) -> None:
    """``Cleaner.groupSegmentsBySize``: consecutive segments are cleaned into one while their sizes fit
    internal.segment.bytes; the group takes its first segment's base offset."""
    entry = compaction_of(parity[FIRST].spark, C[0])
    assert entry["segments_replaced"] == [f"c-0/{base:020d}.log" for base in (0, 8, 13, 17)]
    assert entry["segments_written"] == [f"c-0/{base:020d}-parity-1.log" for base in (0, 13)]


def test_a_rounds_report_names_only_the_segments_this_run_wrote(parity: dict[str, RunPair]) -> None:
    """Second round of ``c-0``: the first group's output (written by the first run) comes out byte-identical
    and stays (``segments_kept`` 1); only the second group is written by this run."""
    entry = compaction_of(parity[SECOND].spark, C[0])
    assert (entry["stats"]["segments_written"], entry["stats"]["segments_kept"]) == (1, 1)
    assert entry["segments_written"] == ["c-0/00000000000000000013-parity-2.log"]
