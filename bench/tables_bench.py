"""The tables' speed (issue 34): the sync (segments → Parquet files of an Iceberg table) against
``read_lake``'s full scan of the same records (the columnar reader both use), and with ``--spark`` the
reading bench's full scan (``count()`` and ``sum(length(value))``) in the same run: Spark over the table's
Parquet files (planned with pyiceberg), Spark through the ``kafka-segments`` data source, and
``read_lake``. The topic is
``--segments`` copies of one cached ``bench/gen_data.py`` segment (100 B values by default) adopted into a
local lake (``reading_bench``'s lake).

    .venv/bin/python bench/tables_bench.py --records 1000000 --segments 4            # the sync, 4 M records
    .venv/bin/python bench/tables_bench.py --records 1000000 --segments 10 --spark   # + the scans, 10 M
    .venv/bin/python bench/tables_bench.py --records 1000000 --segments 1 --json     # values decoded (JSON)

Records/s per core: the sync's records over the process's CPU time (one thread but for pyarrow's writer);
Spark's rates divide by the cores Spark was given (``--cores``); ``read_lake`` uses one.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gen_data import SegmentSpec
from kafka_segments.config import Config, parse_config
from kafka_segments.reading import read_lake
from kafka_segments.storage import LocalStore
from kafka_segments.tables import CatalogSettings, open_catalog, sync_tables
from reading_bench import TOPIC, build_lake, python_scan, spark_scan, timed


def measured(run: Callable[[], Any]) -> tuple[float, float]:
    """Wall and CPU seconds of ``run()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def table_files(store: LocalStore) -> list[str]:
    """The Parquet files of the table's current snapshot (pyiceberg's plan)."""
    table = open_catalog(store, CatalogSettings()).load_table(("kafka_segments", TOPIC))
    return [task.file.file_path for task in table.scan().plan_files()]


def spark_scans(store: LocalStore, root: Path, cores: int) -> dict[str, tuple[float, tuple[int, int], int]]:
    """The reading bench's scan through Spark: over the table's files, and through the data source; each
    the second of two identical queries (the first starts the workers and loads the kernels)."""
    from pyspark.sql import SparkSession
    from spark_source import register

    spark = SparkSession.builder.master(f"local[{cores}]").appName("tables-bench").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark, ship_library=False)
    results = {}
    table = spark.read.parquet(*table_files(store))
    spark_scan(table)
    results["Spark over the table's Parquet files"] = (*timed(lambda: spark_scan(table)), cores)
    lake = spark.read.format("kafka-segments").option("lake", str(root / "lake")).option("subscribe", TOPIC)
    spark_scan(lake.load())
    results["Spark, kafka-segments source"] = (*timed(lambda: spark_scan(lake.load())), cores)
    spark.stop()
    return results


def json_config(enabled: bool) -> Config | None:
    """With ``--json``: the topic's values decoded into ``value_json`` (``table.value.format: json``)."""
    if not enabled:
        return None
    return parse_config(f"topics:\n  {TOPIC}:\n    kafka_segments.table.value.format: json\n", source="bench")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=1_000_000, help="records per segment")
    parser.add_argument("--segments", type=int, default=4)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--codec", default="none")
    parser.add_argument("--spark", action="store_true", help="also the full scans through Spark")
    parser.add_argument("--cores", type=int, default=2, help="Spark's local[N]")
    parser.add_argument("--json", action="store_true", help="the sync decodes the JSON values too")
    args = parser.parse_args()
    spec = SegmentSpec(records=args.records, value_size=args.value_size, codec=args.codec)
    with tempfile.TemporaryDirectory(prefix="tables-bench-") as folder:
        store, records = build_lake(Path(folder), spec, args.segments)
        options = {"subscribe": TOPIC, "kafka.isolation.level": "read_committed", "includeHeaders": "true"}
        scan = measured(lambda: sum(batch.num_rows for batch in read_lake(store, options)))
        config = json_config(args.json)
        sync = measured(lambda: sync_tables(store, topics=[TOPIC], config=config))
        again = measured(lambda: sync_tables(store, topics=[TOPIC], config=config))
        scans = {"read_lake (Python, Arrow)": (*timed(lambda: python_scan(store)), 1)}
        if args.spark:
            scans.update(spark_scans(store, Path(folder), args.cores))
    decoded = ", values decoded (JSON)" if args.json else ""
    print(f"{records:,} records of {args.value_size} B ({args.codec}), {args.segments} segment(s){decoded}")
    for name, (wall, cpu) in (("read_lake scan", scan), ("tables sync", sync), ("sync again", again)):
        rate = records / cpu / 1e6
        print(f"  {name:<15} {wall:6.2f} s wall {cpu:6.2f} s CPU  {rate:5.2f} M records/s per core")
    print("| reader | seconds | records | value bytes | records/s | records/s per core |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (seconds, (count, total), cores) in scans.items():
        rate = count / seconds
        per_core = rate / cores / 1e6
        print(f"| {name} | {seconds:.2f} | {count:,} | {total:,} | {rate / 1e6:.2f} M | {per_core:.2f} M |")


if __name__ == "__main__":
    main()
