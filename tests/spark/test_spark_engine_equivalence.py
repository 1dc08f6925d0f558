"""The Spark engine stages what the inline engine stages: Kafka's retention scenarios (UnifiedLogTest,
KIP-68/KIP-211, quarantine, adoption of new and regrown segments) executed twice on the same lake
head, once inline and once with ``SparkRunner`` on the session's ``local[2]`` Spark (executors open the lake
themselves: a local path, or ``s3://`` through ``AWS_ENDPOINT_URL`` in their environment), give the same
plan.json and the same staged manifest, up to the run ids."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.lake.run_folder import write_run_json
from kafka_segments.pipeline.engines import ClusterEngine
from kafka_segments.pipeline.offsets_input import OffsetsChoice
from kafka_segments.pipeline.stages import (
    VALIDATION,
    commit_staged,
    execute_run,
    prepare_run,
    reject_run,
    snapshot_offsets,
)
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import write_segment
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock, upload_segment
from lake.adoption_helpers import commit_marker, plain_batch, prefix_bytes, segment_of, txn_batch
from lake.retention_helpers import (
    TP,
    config,
    group,
    record_size,
    topic_yaml,
    upload_fifteen_records,
    upload_log_start_checkpoint,
    write_snapshot,
)
from spark_helpers import PANDAS_WARNING, Lake, staged_documents
from spark_runner import SparkRunner

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings(PANDAS_WARNING)]

DAY = 86_400_000
CONSUMED = {"retention_commitoffset_enable": True, "retention_commitoffset_ms": DAY, "retention_ms": 30 * DAY}
T1 = TopicPartition("t", 1)
U0, U1 = TopicPartition("u", 0), TopicPartition("u", 1)


@dataclass(frozen=True)
class Scenario:
    fill: Callable[[ObjectStore], object]
    yaml: str
    left: dict[TopicPartition, list[int]]
    """The segments' base offsets per partition once the Spark run is committed."""
    groups: list[dict[str, object]] | None = None
    quarantined: frozenset[TopicPartition] = field(default_factory=frozenset)


def _damaged(store: ObjectStore) -> None:
    upload_fifteen_records(store, ts=10)
    store.put(f"{TP.dir_name}/00000000000000000015.log", b"\x00" * 30)  # a damaged upload after the log end
    upload_fifteen_records(store, ts=10, tp=T1)


def _two_topics(store: ObjectStore) -> None:
    for tp in (TP, T1):
        upload_fifteen_records(store, ts=10, tp=tp)
    for tp in (U0, U1):
        upload_fifteen_records(store, ts=T0, tp=tp, keyed=True)


TWO_TOPICS_YAML = f"""\
topics:
  t:
    retention.ms: 10000
  u:
    cleanup.policy: compact,delete
    retention.bytes: {5 * record_size()}
"""

SCENARIOS = {
    "kafka_E1_shouldDeleteSizeBasedSegments": Scenario(
        lambda store: upload_fifteen_records(store, ts=T0),
        topic_yaml(retention_bytes=10 * record_size()),
        {TP: [5, 10]},
    ),
    "kafka_E2_time_retention_deletes_every_segment": Scenario(
        lambda store: upload_fifteen_records(store, ts=10), topic_yaml(retention_ms=10_000), {TP: []}
    ),
    "kafka_E3_shouldDeleteSegmentsReadyToBeDeleted_compact_delete": Scenario(
        lambda store: upload_fifteen_records(store, ts=10, keyed=True),
        topic_yaml(cleanup_policy="compact,delete", retention_ms=10_000),
        {TP: []},
    ),
    "kafka_E4_shouldDeleteStartOffsetBreachedSegmentsWhenPolicyDoesNotIncludeDelete": Scenario(
        lambda store: (
            upload_fifteen_records(store, ts=T0, keyed=True),
            upload_log_start_checkpoint(store, 5),
        ),
        topic_yaml(cleanup_policy="compact"),
        {TP: [5, 10]},
    ),
    "kip68_lagging_group_holds_retention_back": Scenario(
        lambda store: upload_fifteen_records(store, ts=T0 - 2 * DAY),
        topic_yaml(**CONSUMED),
        {TP: [5, 10]},
        groups=[
            group("live", [(0, 15, T0)], subscribed=["t"]),
            group("slow", [(0, 7, T0)], subscribed=["t"]),
        ],
    ),
    "quarantine_a_damaged_segment_leaves_only_its_partition_alone": Scenario(
        _damaged, topic_yaml(retention_ms=10_000), {T1: []}, quarantined=frozenset({TP})
    ),
    "every_topic_is_planned_as_one_task": Scenario(
        _two_topics, TWO_TOPICS_YAML, {TP: [], T1: [], U0: [10], U1: [10]}
    ),
}


@dataclass(frozen=True, slots=True)
class Pair:
    inline: str
    spark: str


def stage_both(
    lake: Lake,
    spark: SparkSession,
    yaml_text: str,
    clock: FakeClock,
    *,
    now_ms: int = T0,
    snapshot: Path | None = None,
) -> Pair:
    """Two runs prepared on the same head, executed inline and on Spark."""
    store, cfg = lake.store, config(yaml_text)
    choice = OffsetsChoice(file=None if snapshot is None else str(snapshot))
    offsets = snapshot_offsets(store, choice, now_ms=now_ms, dry_run=False)
    inline = prepare_run(store, now_ms=now_ms, offsets=offsets, dry_run=False, clock=clock).run_id
    on_spark = prepare_run(store, now_ms=now_ms, offsets=offsets, dry_run=False, clock=clock).run_id
    execute_run(store, cfg, inline, clock=clock)
    runner = SparkRunner(spark.sparkContext)
    execute_run(store, cfg, on_spark, engine=ClusterEngine(runner, lake.uri), clock=clock)
    return Pair(inline, on_spark)


def assert_same_and_commit_spark(store: ObjectStore, pair: Pair, clock: FakeClock) -> dict[str, Any]:
    ids = frozenset({pair.inline, pair.spark})
    inline = staged_documents(store, pair.inline, ids)
    on_spark = staged_documents(store, pair.spark, ids)
    assert (inline.pop("engine"), on_spark.pop("engine")) == ("inline", "spark")
    assert on_spark == inline
    reject_run(store, pair.inline, reason="compared with the Spark run", clock=clock)
    write_run_json(store, pair.spark, VALIDATION, {"run_id": pair.spark, "success": True, "suites": []})
    commit_staged(store, pair.spark, clock=clock)
    return on_spark


def committed_bases(store: ObjectStore) -> dict[TopicPartition, list[int]]:
    head = resolve_manifest(store)
    return {p.topic_partition: [s.base_offset for s in p.segments] for p in head.partitions}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_spark_stages_what_inline_stages(lake: Lake, spark: SparkSession, tmp_path: Path, name: str) -> None:
    scenario = SCENARIOS[name]
    scenario.fill(lake.store)
    snapshot = (
        None
        if scenario.groups is None
        else write_snapshot(tmp_path / "offsets.json", scenario.groups, taken_at_ms=T0)
    )
    clock = FakeClock()

    pair = stage_both(lake, spark, scenario.yaml, clock, snapshot=snapshot)

    staged = assert_same_and_commit_spark(lake.store, pair, clock)
    quarantined = {
        TopicPartition(item["topic"], item["partition"])
        for item in staged["report"]["adoption"]["quarantined"]
    }
    assert quarantined == scenario.quarantined
    bases = committed_bases(lake.store)
    assert {tp: bases.get(tp) for tp in scenario.left} == scenario.left


def _single(offset: int, ts: int) -> bytes:
    return build_batch([Record(offset, ts, None, b"test")], base_offset=offset)


def test_spark_adopts_new_and_regrown_segments_as_inline_does(lake: Lake, spark: SparkSession) -> None:
    """A committed lake the sync keeps writing to: the active segment grew (its open transaction committed)
    and new segments rolled; both engines adopt the same and apply ``retention.bytes`` the same."""
    store, clock = lake.store, FakeClock()
    upload_fifteen_records(store, ts=T0)
    producer = 7
    active = segment_of(
        [
            plain_batch(15, timestamp_ms=T0),
            txn_batch(17, 2, producer_id=producer),
            commit_marker(19, producer_id=producer),
        ]
    )
    key = f"{TP.dir_name}/00000000000000000015.log"
    store.put(key, prefix_bytes(active.log, 2))  # uploaded while the transaction is open
    yaml_text = topic_yaml(retention_bytes=12 * record_size())
    first = assert_same_and_commit_spark(store, stage_both(lake, spark, yaml_text, clock), clock)
    assert first["report"]["adoption"]["adopted_segments"] == 4
    assert committed_bases(store) == {TP: [5, 10, 15]}

    store.put(key, active.log)  # uploaded again, grown: the transaction committed
    upload_segment(store, TP, write_segment([_single(o, T0) for o in range(20, 25)], base_offset=20))
    clock.advance(60_000)
    second = assert_same_and_commit_spark(store, stage_both(lake, spark, yaml_text, clock), clock)

    assert (
        second["report"]["adoption"]["adopted_segments"],
        second["report"]["adoption"]["regrown_segments"],
    ) == (1, 1)
    # UnifiedLog.deleteRetentionSizeBreachedSegments: diff = 360 + 360 + 244 + 360 - 864 = 460; oldest first,
    # a segment goes iff diff - its size >= 0: [5-9] (460 - 360 = 100), then [10-14] does not fit
    assert committed_bases(store) == {TP: [10, 15, 20]}
    head = resolve_manifest(store).partition(TP)
    assert head is not None
    assert (head.log_end_offset, head.last_stable_offset, head.open_transactions) == (25, 25, ())
