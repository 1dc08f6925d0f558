"""The ``kafka-segments`` Spark data source over a lake whose segments are split into byte spans
(``maxBytesPerPartition``): one input partition per span, the rows of the unsplit ``read_lake``, and a pushed
offset filter leaves only the spans that may hold it (on moto S3: ranged reads pinned with If-Match), and a
`.index` crafted to point at a forged batch changes no row."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from kafka_segments.lake.layout import index_keys
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.reading import plan_read
from kafka_segments.segment.files import FileKind
from kafka_segments.storage import ObjectStore
from kit import FakeClock
from pyspark.sql import functions as F  # noqa: N812 - Spark's convention
from reading.split_helpers import TP, commit_events, event_batches, rows
from reading.test_crafted_index import CARRIER, carrier_files, crafted_index, stage
from reading.time_helpers import HOUR_MS, T0, all_rows, as_datetime, click_batches, commit_clicks, in_window
from reading.time_helpers import TP as CLICKS
from s3_fixtures import new_s3_store
from spark_source import register

if TYPE_CHECKING:
    from kafka_segments.demo import EmbeddedS3
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

SPLIT = {"subscribe": TP.topic, "maxBytesPerPartition": "6000"}


@pytest.fixture(scope="module")
def lake(s3_server: EmbeddedS3) -> tuple[ObjectStore, str]:
    store = new_s3_store(s3_server)
    commit_events(store, event_batches(3, count=300), cut=220, log_start=5, clock=FakeClock())
    return store, store.describe().rstrip("/")


def _frame(spark: SparkSession, lake: str, options: dict[str, str]) -> DataFrame:
    reader = spark.read.format("kafka-segments").option("lake", lake)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def _keys(found: list[Any]) -> list[tuple[Any, ...]]:
    return [(bytes(r.key) if r.key is not None else None, r.offset) for r in found]


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_a_split_lake_reads_as_the_unsplit_one(
    spark: SparkSession, lake: tuple[ObjectStore, str], isolation: str
) -> None:
    register(spark)
    store, uri = lake
    options = {**SPLIT, "kafka.isolation.level": isolation}
    frame = _frame(spark, uri, options)
    tasks = plan_read(store, options).tasks
    assert frame.rdd.getNumPartitions() == len(tasks) > 4
    want = [(r["key"], r["offset"]) for r in rows(store, {**options, "maxBytesPerPartition": str(1 << 40)})]
    assert sorted(_keys(frame.select("key", "offset").collect()), key=repr) == sorted(want, key=repr)


def test_a_pushed_offset_filter_keeps_the_spans_that_hold_it(
    spark: SparkSession, lake: tuple[ObjectStore, str]
) -> None:
    register(spark)
    store, uri = lake
    narrowed = _frame(spark, uri, SPLIT).where("offset >= 500 AND offset < 530")
    assert narrowed.rdd.getNumPartitions() <= 3 < len(plan_read(store, SPLIT).tasks)
    want = [(r["key"], r["offset"]) for r in rows(store, {"subscribe": TP.topic}) if 500 <= r["offset"] < 530]  # type: ignore[operator]
    assert _keys(narrowed.select("key", "offset").orderBy("offset").collect()) == want


def test_a_pushed_one_hour_filter_starts_inside_the_segment(
    spark: SparkSession, s3_server: EmbeddedS3
) -> None:
    register(spark)
    store = new_s3_store(s3_server)
    commit_clicks(store, click_batches(3, hours=6), cuts=(80, 160))
    options = {"subscribe": CLICKS.topic, "maxBytesPerPartition": "2000"}
    low, high = T0 + 3 * HOUR_MS + HOUR_MS // 2, T0 + 4 * HOUR_MS + HOUR_MS // 2
    frame = _frame(spark, store.describe().rstrip("/"), options)
    hour = frame.where((F.col("timestamp") >= as_datetime(low)) & (F.col("timestamp") < as_datetime(high)))
    later = frame.where(F.col("timestamp") >= as_datetime(T0 + 2 * HOUR_MS))  # no span starts past the hour
    assert hour.rdd.getNumPartitions() < later.rdd.getNumPartitions() < len(plan_read(store, options).tasks)
    want = [(r["key"], r["offset"]) for r in in_window(all_rows(store), low, high)]
    assert _keys(hour.select("key", "offset").orderBy("offset").collect()) == want


def test_a_crafted_index_changes_no_row_through_spark(spark: SparkSession, s3_server: EmbeddedS3) -> None:
    """A `.index` replaced after the commit by one pointing at a forged batch inside a record value: before,
    Spark's split read gave the carrier's offset twice; now the index is not the pinned one and the segment
    is one task (``tests/reading/test_crafted_index.py``)."""
    register(spark)
    store = new_s3_store(s3_server)
    files, forged_at = carrier_files()
    stage(store, {FileKind.LOG: files.log, FileKind.INDEX: files.offset_index})
    segment = resolve_manifest(store).partitions[0].segments[0]
    store.put(index_keys(segment.key)[0], crafted_index(forged_at, offset=CARRIER + 1))
    frame = _frame(
        spark, store.describe().rstrip("/"), {"subscribe": TP.topic, "maxBytesPerPartition": "6000"}
    )
    found = [(r.offset, bytes(r.value)) for r in frame.select("offset", "value").orderBy("offset").collect()]
    assert found == [(row["offset"], row["value"]) for row in rows(store, {"subscribe": TP.topic})]
