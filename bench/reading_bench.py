"""Full scans of one topic read from the lake (issue 23): ``count()`` and ``sum(length(value))``.

In one run, on the same records: Spark over the ``kafka-segments`` data source, Spark over Parquet (the
ceiling), ``read_lake`` in one Python process (Arrow batches, no Spark), and kafka-python over an ``export``
of the lake (the floor). The topic is ``--segments`` copies of one cached ``bench/gen_data.py`` segment
(100 B values by default), rebased to consecutive offsets and adopted into a local lake.

    .venv/bin/python bench/reading_bench.py --records 1000000 --segments 10   # 10 M records

Records/s per core divides by the cores Spark was given (``--cores``); the Python readers use one.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from gen_data import SegmentSpec, segment
from kafka_segments.clock import wall_clock_ms
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.export import export_lake
from kafka_segments.reading import read_lake
from kafka_segments.records.fast import scan_header_table
from kafka_segments.storage import LocalStore

TOPIC = "bench"


def rebased(data: bytes, base: int) -> bytes:
    """The segment with every batch's base offset moved up by ``base`` (the field is outside the CRC)."""
    table = scan_header_table(data)
    out = bytearray(data)
    view = np.frombuffer(out, dtype=np.uint8)
    for position, offset in zip(table.position.tolist(), table.base_offset.tolist(), strict=True):
        view[position : position + 8] = np.frombuffer((offset + base).to_bytes(8, "big"), dtype=np.uint8)
    return bytes(out)


def build_lake(root: Path, spec: SegmentSpec, copies: int) -> tuple[LocalStore, int]:
    data = segment(spec).read()
    store = LocalStore(root / "lake")
    for copy in range(copies):
        base = copy * spec.records
        store.put(f"{TOPIC}-0/{base:020d}.log", rebased(data, base))
    adopt(store, now_ms=wall_clock_ms())
    return store, spec.records * copies


def timed(run: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = run()
    return time.perf_counter() - start, result


def python_scan(store: LocalStore) -> tuple[int, int]:
    count = total = 0
    for batch in read_lake(store, {"subscribe": TOPIC}):
        count += batch.num_rows
        total += pc.sum(pc.binary_length(batch.column("value"))).as_py() or 0
    return count, total


def kafka_python_scan(folder: Path) -> tuple[int, int]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record.memory_records import MemoryRecords
    count = total = 0
    for log in sorted(folder.glob("*/*.log")):
        for batch in MemoryRecords(log.read_bytes()):
            for record in batch:
                count += 1
                total += len(record.value) if record.value is not None else 0
    return count, total


def spark_scan(frame: Any) -> tuple[int, int]:
    row = frame.selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0]
    return int(row.n), int(row.bytes or 0)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=1_000_000, help="records per segment")
    parser.add_argument("--segments", type=int, default=10)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--codec", default="none")
    parser.add_argument("--cores", type=int, default=2, help="Spark's local[N]")
    parser.add_argument("--skip-kafka-python", action="store_true")
    args = parser.parse_args()
    spec = SegmentSpec(records=args.records, value_size=args.value_size, codec=args.codec)
    with tempfile.TemporaryDirectory(prefix="reading-bench-") as folder:
        root = Path(folder)
        store, records = build_lake(root, spec, args.segments)
        results: dict[str, tuple[float, tuple[int, int], int]] = {}
        python_scan(store)  # warm-up: kernels compiled or loaded from numba's cache
        seconds, answer = timed(lambda: python_scan(store))
        results["read_lake (Python, Arrow)"] = (seconds, answer, 1)
        pq.write_table(
            pa.Table.from_batches(list(read_lake(store, {"subscribe": TOPIC}))), root / "t.parquet"
        )
        if not args.skip_kafka_python:
            export_lake(store, root / "export")
            seconds, answer = timed(lambda: kafka_python_scan(root / "export"))
            results["kafka-python over export"] = (seconds, answer, 1)
        from pyspark.sql import SparkSession
        from spark_source import register

        spark = SparkSession.builder.master(f"local[{args.cores}]").appName("reading-bench").getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        register(spark, ship_library=False)
        lake = (
            spark.read.format("kafka-segments").option("lake", str(root / "lake")).option("subscribe", TOPIC)
        )
        spark_scan(lake.load())  # warm-up: workers started, kernels compiled
        seconds, answer = timed(lambda: spark_scan(lake.load()))
        results["Spark, kafka-segments source"] = (seconds, answer, args.cores)
        parquet = spark.read.parquet(str(root / "t.parquet"))
        spark_scan(parquet)
        seconds, answer = timed(lambda: spark_scan(parquet))
        results["Spark, Parquet"] = (seconds, answer, args.cores)
        spark.stop()
    print(f"{records:,} records of {args.value_size} B ({args.codec}), {args.segments} segment(s)")
    print("| reader | seconds | records | value bytes | records/s | records/s per core |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (seconds, (count, total), cores) in results.items():
        rate = count / seconds
        print(
            f"| {name} | {seconds:.2f} | {count:,} | {total:,} | {rate / 1e6:.2f} M "
            f"| {rate / cores / 1e6:.2f} M |"
        )


if __name__ == "__main__":
    main()
