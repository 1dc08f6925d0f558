"""The ``kafka-segments`` Spark data source returns what ``read_lake`` returns (itself checked against
kafka-python over ``export`` in tests/reading), for the options that change the plan: isolation, time
travel, the compacted view, filters pushed down; one input partition per segment. One shared lake per module
(on moto S3, read by the executors through the lake URI)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pytest
from kafka_segments.reading import arrow_schema, plan_read, read_lake
from kafka_segments.storage import ObjectStore
from kit import FakeClock
from lake.read_helpers import rich_lake
from s3_fixtures import new_s3_store
from spark_source import register

if TYPE_CHECKING:
    from kafka_segments.demo import EmbeddedS3
    from pyspark.sql import DataFrame, SparkSession

pytestmark = pytest.mark.spark

TOPICS = {"subscribe": "orders,payments"}
COLUMNS = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]


@pytest.fixture(scope="module")
def lake(s3_server: EmbeddedS3) -> tuple[ObjectStore, str]:
    store = new_s3_store(s3_server)
    rich_lake(store, FakeClock())
    return store, store.describe().rstrip("/")


@pytest.fixture(scope="module")
def source(spark: SparkSession) -> SparkSession:
    register(spark)
    return spark


def _frame(spark: SparkSession, lake: str, options: Mapping[str, str]) -> DataFrame:
    reader = spark.read.format("kafka-segments").option("lake", lake)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


def _rows(frame: DataFrame) -> list[tuple[Any, ...]]:
    return [
        (
            bytes(r.key) if r.key is not None else None,
            bytes(r.value) if r.value is not None else None,
            *r[2:5],
        )
        for r in frame.select(*COLUMNS).collect()
    ]


def _python(store: ObjectStore, options: Mapping[str, str]) -> list[tuple[Any, ...]]:
    schema = arrow_schema(include_headers=False)
    table = pa.Table.from_batches(list(read_lake(store, options)), schema=schema)
    return [(r["key"], r["value"], r["topic"], r["partition"], r["offset"]) for r in table.to_pylist()]


@pytest.mark.parametrize(
    "options",
    [
        TOPICS,
        {**TOPICS, "kafka.isolation.level": "read_committed"},
        {**TOPICS, "view": "latest"},
        {"subscribePattern": "pay.*", "versionAsOf": "1", "startingOffsets": "earliest"},
    ],
)
def test_the_data_source_returns_what_read_lake_returns(
    source: SparkSession, lake: tuple[ObjectStore, str], options: dict[str, str]
) -> None:
    store, uri = lake
    frame = _frame(source, uri, options)
    assert frame.schema.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,timestamp:timestamp,"
        "timestampType:int>"
    )
    assert sorted(_rows(frame), key=repr) == sorted(_python(store, options), key=repr)


def test_one_input_partition_per_segment_and_pushed_filters_skip_segments(
    source: SparkSession, lake: tuple[ObjectStore, str]
) -> None:
    store, uri = lake
    plan = plan_read(store, TOPICS)
    assert _frame(source, uri, TOPICS).rdd.getNumPartitions() == len(plan.tasks)
    narrowed = _frame(source, uri, TOPICS).where("topic = 'payments' AND partition = 0 AND offset >= 8")
    expected = [row for row in _python(store, TOPICS) if row[2] == "payments" and row[4] >= 8]
    assert sorted(_rows(narrowed), key=repr) == sorted(expected, key=repr)
    payments_tasks = [t for t in plan.tasks if t.topic_partition.topic == "payments" and t.end > 8]
    assert narrowed.rdd.getNumPartitions() == len(payments_tasks) < len(plan.tasks)


def test_headers_and_a_bad_option(source: SparkSession, lake: tuple[ObjectStore, str]) -> None:
    store, uri = lake
    frame = _frame(source, uri, {**TOPICS, "includeHeaders": "true"})
    assert frame.schema["headers"].dataType.simpleString() == "array<struct<key:string,value:binary>>"
    assert frame.count() == len(_python(store, TOPICS))
    with pytest.raises(Exception, match=r"option 'kafka\.isolation\.level'"):
        _frame(source, uri, {**TOPICS, "kafka.isolation.level": "dirty"}).collect()
