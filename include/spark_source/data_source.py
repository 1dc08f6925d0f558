"""The ``kafka-segments`` Spark data source (Spark 4's Python Data Source API): the plan of
``kafka_segments.reading.read_lake`` made on the driver, one input partition per segment task, and each
task's records handed to Spark as Arrow batches (docs/reading.md)::

    from spark_source import register
    register(spark)
    spark.read.format("kafka-segments").option("lake", "s3://bucket/prefix").option("subscribe", "orders")

``register`` ships the library to the executors as the Spark jobs get it (``library_archive``, a zip of the
package added as a py-file, and this package beside it), registers the source and enables Python filter
pushdown (``spark.sql.python.filterPushdown.enabled``: Spark refuses a reader with ``pushFilters`` without
it)."""

from __future__ import annotations

import tempfile
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_segments.lake.time_pin import time_floor
from kafka_segments.reading.arrow import spark_schema
from kafka_segments.reading.errors import ReadOptionError
from kafka_segments.reading.options import ReadOptions, View, parse_options
from kafka_segments.reading.plan import plan_read
from kafka_segments.reading.pushdown import Narrowing
from kafka_segments.reading.tasks import SegmentTask, tasks_by_partition
from kafka_segments.storage import ObjectStore, open_store
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SOURCE_NAME = "kafka-segments"
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def lake_uri(options: Mapping[str, str]) -> str:
    """The lake of a read: option ``lake``, or the path given to ``load(path)``.

    Raises:
        ReadOptionError: neither is given.
    """
    given = {name.lower(): value for name, value in options.items()}
    lake = given.get("lake") or given.get("path")
    if not lake:
        raise ReadOptionError("lake", 'is missing: .option("lake", "s3://bucket/prefix") or .load(uri)')
    return lake


class TaskPartition(InputPartition):
    """The tasks one Spark task runs: one segment, or a whole partition for the compacted view."""

    def __init__(self, tasks: tuple[SegmentTask, ...]) -> None:
        super().__init__(tasks)


class LakeReader(DataSourceReader):
    """Plans on the driver, reads on the executors; pushed filters only skip tasks (Spark re-checks)."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.lake = lake_uri(options)
        self.options: ReadOptions = parse_options(options)
        self.narrowing = Narrowing()

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:  # noqa: N802 - Spark's name
        for pushed in filters:
            self.narrowing = self.narrowing.with_filter(pushed)
            yield pushed

    def partitions(self) -> Sequence[InputPartition]:
        store = open_store(self.lake)
        plan = plan_read(store, self.options)
        latest = self.options.view is View.LATEST
        tasks = self.narrowing.narrow(plan.tasks, records_too=not latest, floor_of=partial(time_floor, store))
        if latest:
            return [TaskPartition(tuple(group)) for group in tasks_by_partition(tuple(tasks))]
        return [TaskPartition((task,)) for task in tasks]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        # The decoder (numba's kernels, pyarrow) is imported here, in the executors' workers only: Spark asks
        # the schema and the plan in short-lived Python processes on the driver, which need neither.
        import pyarrow as pa
        from kafka_segments.reading.arrow import arrow_schema
        from kafka_segments.reading.reader import read_latest
        from kafka_segments.reading.segment_read import read_task

        store = worker_store(self.lake)
        tasks: tuple[SegmentTask, ...] = partition.value
        include_headers = self.options.include_headers
        # Spark keeps the first batch a reader gives for the whole task (``records_to_arrow_batches``'s
        # ``first_element``): an empty one, so no batch of records is held past its turn.
        yield pa.RecordBatch.from_pylist([], schema=arrow_schema(include_headers=include_headers))
        if self.options.view is View.LATEST:
            yield from read_latest(store, list(tasks), include_headers=include_headers)
            return
        for task in tasks:
            yield from read_task(store, task, include_headers=include_headers)


_WORKER_STORES: dict[str, ObjectStore] = {}


def worker_store(lake: str) -> ObjectStore:
    """The lake's store, opened once per Python worker (Spark reuses workers across tasks): a local lake's
    etags (its files' sha256, which a span's read is pinned to) are then hashed once per file and worker,
    not once per task."""
    if lake not in _WORKER_STORES:
        _WORKER_STORES[lake] = open_store(lake)
    return _WORKER_STORES[lake]


class KafkaSegmentsDataSource(DataSource):
    """``spark.read.format("kafka-segments")``: the schema and options of Spark's Kafka source over a lake."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> str:
        return spark_schema(include_headers=parse_options(self._read_options()).include_headers)

    def reader(self, schema: Any) -> DataSourceReader:
        return LakeReader(self._read_options())

    def _read_options(self) -> dict[str, str]:
        return {str(name): str(value) for name, value in self.options.items()}


def register(spark: SparkSession, *, ship_library: bool = True) -> None:
    """Make ``spark.read.format("kafka-segments")`` available in ``spark``.

    Args:
        ship_library: add the library's zip to the session's py-files (as the Spark jobs get it), so the
            executors import the same code; off when they already have it installed.
    """
    if ship_library:
        from kafka_segments.pipeline.engines.spark_submit import library_archive

        spark.sparkContext.addPyFile(str(library_archive()))
        spark.sparkContext.addPyFile(str(adapter_archive()))
    spark.conf.set(PUSHDOWN_CONF, "true")
    spark.dataSource.register(KafkaSegmentsDataSource)


def adapter_archive() -> Path:
    """A zip of this package for the executors' py-files (in a fresh temporary folder)."""
    package = Path(__file__).resolve().parent
    target = Path(tempfile.mkdtemp(prefix="spark_source-")) / "spark_source.zip"
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(package.glob("*.py")):
            archive.write(path, f"{package.name}/{path.name}")
    return target
