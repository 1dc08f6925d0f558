"""The data source's options without a Spark session: where the lake comes from, the schema it declares."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from kafka_segments.reading import ReadOptionError
from kafka_segments.storage import LocalStore
from kit import FakeClock
from lake.read_helpers import commit_lake, rich_specs
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


def test_the_schema_and_the_plan_load_no_decoder(tmp_path: Path) -> None:
    """Spark asks the schema and the plan in short-lived Python processes on the driver, one of each per
    query: neither loads numba's kernels nor pyarrow (seconds of every query's fixed cost). Only a
    timestamp option loads the header scan's kernels, to resolve it."""
    commit_lake(LocalStore(tmp_path / "lake"), dict(rich_specs()), clock=FakeClock(), operation="adopt")
    options = {"lake": str(tmp_path / "lake"), "subscribePattern": ".*"}
    code = (
        "import sys\n"
        "from spark_source.data_source import KafkaSegmentsDataSource\n"
        f"source = KafkaSegmentsDataSource({options!r})\n"
        "source.schema()\n"
        "print(len(source.reader(None).partitions()))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'numba', 'pyarrow'}))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, env=env)
    assert out.returncode == 0, out.stderr
    tasks, loaded = out.stdout.splitlines()
    assert int(tasks) > 0
    assert loaded == "[]"
