"""``SparkRunner`` keeps the TaskRunner contract (results in the items' order, no Spark job for no items), and
everything a run sends through a runner survives the trip to an executor and back: the items and the
results as Spark's data serializer ships them (the standard ``pickle``)."""

from __future__ import annotations

import operator
import os
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pytest
from kafka_segments.lake.adoption_reads import ReadResult
from kafka_segments.pipeline.engines import ClusterEngine, ReadTask, TopicPlanTask
from kafka_segments.pipeline.offsets_input import OffsetsChoice
from kafka_segments.pipeline.stages import PLAN, execute_run, prepare_run, read_run_json, snapshot_offsets
from kafka_segments.records.fast import HeaderTable
from kafka_segments.retention.plan import PartitionPlan
from kafka_segments.storage import LocalStore
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock
from lake.retention_helpers import TP, config, group, topic_yaml, upload_fifteen_records, write_snapshot
from spark_helpers import PANDAS_WARNING
from spark_runner import SparkRunner

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings(PANDAS_WARNING)]

T = TypeVar("T")
R = TypeVar("R")


def test_results_come_back_in_the_items_order(spark: SparkSession) -> None:
    runner = SparkRunner(spark.sparkContext, slices_per_core=3)
    items = list(range(101))
    assert runner.slices(len(items)) == 6  # local[2]: 2 cores x 3
    assert runner.map(operator.neg, items) == [-i for i in items]


def test_one_job_per_map_and_none_for_no_items(spark: SparkSession) -> None:
    sc = spark.sparkContext
    runner = SparkRunner(sc)
    sc.setJobGroup("runner-jobs", "SparkRunner job count")
    try:
        assert runner.map(operator.neg, []) == []
        assert sc.statusTracker().getJobIdsForGroup("runner-jobs") == []
        assert runner.map(operator.neg, (3,)) == [-3]
        assert len(sc.statusTracker().getJobIdsForGroup("runner-jobs")) == 1
    finally:
        sc.setJobGroup("", "")


def test_the_runner_hands_its_settings_to_every_task(spark: SparkSession) -> None:
    """How a job's ``AWS_*`` settings reach executors without ``spark.executorEnv`` on the command line."""
    name = "KAFKA_SEGMENTS_TEST_HANDED_SETTING"
    assert SparkRunner(spark.sparkContext).map(os.getenv, [name]) == [None]
    runner = SparkRunner(spark.sparkContext, environ={name: "from the driver"})
    assert runner.map(os.getenv, [name] * 5) == ["from the driver"] * 5


def test_slices_never_exceed_the_items(spark: SparkSession) -> None:
    runner = SparkRunner(spark.sparkContext)
    assert [runner.slices(n) for n in (0, 1, 5, 8, 1000)] == [1, 1, 5, 8, 8]
    with pytest.raises(ValueError, match="slices_per_core"):
        SparkRunner(spark.sparkContext, slices_per_core=0)


class RoundTripRunner:
    """Runs tasks here, but sends every item and result through what Spark does to them."""

    name = "round-trip"

    def __init__(self) -> None:
        self.items: list[object] = []
        self.results: list[object] = []

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        out = []
        for item in items:
            shipped = pickle.loads(pickle.dumps(item))
            assert shipped == item
            result = fn(shipped)
            returned = pickle.loads(pickle.dumps(result))
            assert_same_result(returned, result)
            self.items.append(shipped)
            self.results.append(returned)
            out.append(returned)
        return out


def assert_same_result(returned: Any, result: Any) -> None:
    if isinstance(result, ReadResult):  # eq=False: compare what adoption reads of it
        assert (returned.key, returned.bytes_read, returned.entry, returned.problem, returned.ignored) == (
            result.key,
            result.bytes_read,
            result.entry,
            result.problem,
            result.ignored,
        )
        assert (returned.table is None) == (result.table is None)
        if result.table is not None:
            for name in HeaderTable.__dataclass_fields__:
                assert np.array_equal(getattr(returned.table, name), getattr(result.table, name)), name
    else:
        assert returned == result


def test_everything_a_run_sends_through_its_runner_survives_the_trip(tmp_path: Path) -> None:
    """Adoption reads (``ReadTask`` → ``ReadResult`` with its ``HeaderTable``, a quarantine) and per-topic
    planning (``TopicPlanTask`` with ``TopicConfig`` and ``OffsetSnapshot`` → ``PartitionPlan``s)."""
    store = LocalStore(tmp_path / "lake")
    upload_fifteen_records(store, ts=T0)
    store.put(f"{TP.dir_name}/00000000000000000015.log", b"\x00" * 30)
    other = TopicPartition("t", 1)
    upload_fifteen_records(store, ts=T0, tp=other)
    snapshot = write_snapshot(
        tmp_path / "offsets.json", [group("slow", [(1, 7, T0)], subscribed=["t"])], taken_at_ms=T0
    )
    clock = FakeClock()
    offsets = snapshot_offsets(store, OffsetsChoice(file=str(snapshot)), now_ms=T0, dry_run=False)
    cfg = config(topic_yaml(retention_commitoffset_enable=True, retention_commitoffset_ms=0))
    runner = RoundTripRunner()
    tripped = prepare_run(store, now_ms=T0, offsets=offsets, dry_run=False, clock=clock).run_id
    inline = prepare_run(store, now_ms=T0, offsets=offsets, dry_run=False, clock=clock).run_id

    execute_run(store, cfg, tripped, engine=ClusterEngine(runner, str(tmp_path / "lake")), clock=clock)
    execute_run(store, cfg, inline, clock=clock)

    kinds = {type(item).__name__ for item in runner.items}
    assert kinds == {ReadTask.__name__, TopicPlanTask.__name__}
    plan_task = next(item for item in runner.items if isinstance(item, TopicPlanTask))
    assert plan_task.snapshot is not None
    assert dict(plan_task.config.sources)  # the settings' origins made the trip too
    tables = [r for r in runner.results if isinstance(r, ReadResult) and r.table is not None]
    problems = [r for r in runner.results if isinstance(r, ReadResult) and r.problem is not None]
    plans = [p for r in runner.results if isinstance(r, tuple) for p in r]
    assert (len(tables), len(problems)) == (6, 1)
    assert all(isinstance(p, PartitionPlan) for p in plans)
    assert [p.topic_partition for p in plans] == [other]  # t-0 is quarantined before it was ever adopted
    assert plans[0].holder is not None  # group "slow" at 7 holds t-1 back
    documents = [read_run_json(store, run_id, PLAN)["plan"] for run_id in (tripped, inline)]
    assert documents[0] == documents[1]
