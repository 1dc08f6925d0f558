"""The data source's options without a Spark session: where the lake comes from, the schema it declares."""

from __future__ import annotations

import pytest
from kafka_segments.reading import ReadOptionError
from spark_source import KafkaSegmentsDataSource
from spark_source.data_source import lake_uri

pytestmark = pytest.mark.unit


def test_the_lake_is_the_lake_option_or_the_load_path() -> None:
    assert lake_uri({"lake": "s3://b/p", "path": "ignored"}) == "s3://b/p"
    assert lake_uri({"path": "/data/lake"}) == "/data/lake"
    assert lake_uri({"LAKE": "s3://b/q"}) == "s3://b/q"
    with pytest.raises(ReadOptionError, match="option 'lake': is missing"):
        lake_uri({"subscribe": "orders"})


def test_the_schema_is_the_kafka_sources() -> None:
    plain = KafkaSegmentsDataSource({"lake": "/l", "subscribe": "t"})
    assert KafkaSegmentsDataSource.name() == "kafka-segments"
    assert plain.schema() == (
        "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
        "timestampType int"
    )
    headers = KafkaSegmentsDataSource({"lake": "/l", "subscribe": "t", "includeHeaders": "true"})
    assert headers.schema().endswith(", headers array<struct<key: string, value: binary>>")
