"""Large segments read in byte spans (issue 23 point 5): the same lake read whole-segment and split, in one
run, back to back.

The topic is ``--segments`` copies of one cached ``bench/gen_data.py`` segment, rebased to consecutive
offsets and adopted into a local lake, each with the ``.index`` Kafka's log recovery would build for it
(``segment.recovery.rebuild_indexes``). Measured, each the second of two identical runs:

* ``read_lake`` full scan, unsplit and with ``maxBytesPerPartition``: seconds, and CPU seconds of the
  process (``resource.getrusage``), and the seconds to the first batch of the first task;
* an offset range of ``--range`` records in the middle of the topic: bytes of ``.log`` read, seconds;
* planning alone (``plan_read``, reads each large segment's ``.index``);
* Spark ``local[N]``: the source unsplit, split, Parquet of the same records, and a Python data source
  that yields ready-made Arrow batches of the same 7 columns and rows (no decoding: the API's ceiling);
  CPU seconds there are the whole process tree's (the JVM and its Python workers), from ``/proc``.

    .venv/bin/python bench/split_read_bench.py --records 1000000 --segments 4 --max-bytes 33554432
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from gen_data import SegmentSpec, segment
from kafka_segments.clock import wall_clock_ms
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.reading import plan_read, read_lake
from kafka_segments.segment.recovery import rebuild_indexes
from kafka_segments.storage import LocalStore, ObjectStore
from reading_bench import TOPIC, rebased, spark_scan

Row = tuple[str, float, float, str]


class Counting:
    """Counts the bytes of ``.log`` objects read through ``get``/``get_range`` of a store."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner
        self.log_bytes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def get(self, key: str) -> bytes:
        return self._seen(key, self.inner.get(key))

    def get_range(self, key: str, *, start: int, end: int, if_match: str | None = None) -> bytes:
        return self._seen(key, self.inner.get_range(key, start=start, end=end, if_match=if_match))

    def _seen(self, key: str, data: bytes) -> bytes:
        self.log_bytes += len(data) if key.endswith(".log") else 0
        return data


def build_lake(root: Path, spec: SegmentSpec, copies: int) -> tuple[LocalStore, int]:
    data = segment(spec).read()
    store = LocalStore(root / "lake")
    for copy in range(copies):
        base = copy * spec.records
        log = rebased(data, base)
        store.put(f"{TOPIC}-0/{base:020d}.log", log)
        index = rebuild_indexes(log, base_offset=base, verify_crc=False).segment.offset_index
        store.put(f"{TOPIC}-0/{base:020d}.index", index)
    adopt(store, now_ms=wall_clock_ms())
    return store, spec.records * copies


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measured(run: Callable[[], Any], *, clock: Callable[[], float] = cpu_seconds) -> tuple[float, float, Any]:
    run()  # warm-up: kernels, page cache, Python workers
    wall, cpu = time.perf_counter(), clock()
    result = run()
    return time.perf_counter() - wall, clock() - cpu, result


def scan(store: ObjectStore, options: dict[str, str]) -> tuple[int, int, float]:
    """(records, value bytes, seconds to the first batch)."""
    start = time.perf_counter()
    first = None
    count = total = 0
    for batch in read_lake(store, {"subscribe": TOPIC, **options}):
        first = time.perf_counter() - start if first is None else first
        count += batch.num_rows
        total += pc.sum(pc.binary_length(batch.column("value"))).as_py() or 0
    return count, total, first or 0.0


def python_rows(store: LocalStore, records: int, args: argparse.Namespace) -> list[Row]:
    split = {"maxBytesPerPartition": str(args.max_bytes)}
    rows: list[Row] = []
    for name, options in (("read_lake, unsplit", {}), (f"read_lake, split at {args.max_bytes:,} B", split)):
        wall, cpu, (count, total, first) = measured(lambda o=options: scan(store, o))
        assert count == records, (name, count)
        rows.append((name, wall, cpu, f"first batch after {first:.2f} s; {total:,} value bytes"))
    middle = records // 2
    window = {
        "startingOffsets": json.dumps({TOPIC: {"0": middle}}),
        "endingOffsets": json.dumps({TOPIC: {"0": middle + args.range}}),
    }
    for name, options in (("offset range, unsplit", window), ("offset range, split", {**window, **split})):
        counting = Counting(store)
        wall, cpu, (count, _, _) = measured(lambda o=options, c=counting: scan(c, o))  # type: ignore[misc]
        read = counting.log_bytes // 2  # the warm-up and the measured run read the same
        rows.append((name, wall, cpu, f"{count:,} records, {read:,} .log bytes read"))
    wall, cpu, plan = measured(lambda: plan_read(store, {"subscribe": TOPIC, **split}))
    rows.append(("plan_read, split", wall, cpu, f"{len(plan.tasks)} tasks"))
    return rows


def spark_rows(store: LocalStore, root: Path, records: int, args: argparse.Namespace) -> list[Row]:
    from pyspark.sql import SparkSession
    from spark_source import register

    pq.write_table(pa.Table.from_batches(list(read_lake(store, {"subscribe": TOPIC}))), root / "t.parquet")
    spark = SparkSession.builder.master(f"local[{args.cores}]").appName("split-bench").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark, ship_library=False)
    spark.dataSource.register(ReadyArrowSource)
    lake = spark.read.format("kafka-segments").option("lake", str(root / "lake")).option("subscribe", TOPIC)
    frames = {
        "Spark, source unsplit": lake.load,
        f"Spark, source split at {args.max_bytes:,} B": lambda: lake.option(
            "maxBytesPerPartition", str(args.max_bytes)
        ).load(),
        "Spark, Parquet": lambda: spark.read.parquet(str(root / "t.parquet")),
        "Spark, ready Arrow batches (API ceiling)": lambda: (
            spark.read.format("ready-arrow")
            .option("rows", str(records))
            .option("partitions", str(args.segments))
            .load()
        ),
    }
    rows: list[Row] = []
    for name, frame in frames.items():
        wall, cpu, (count, total) = measured(lambda f=frame: spark_scan(f()), clock=tree_cpu_seconds)  # type: ignore[misc]
        rows.append((name, wall, cpu, f"{count:,} records, {total:,} value bytes"))
    spark.stop()
    return rows


def ready_arrow_source() -> type:
    """A Python data source whose ``read()`` yields one ready-made Arrow batch of the 7 columns over and
    over (100 B values, 10 B keys): the cost of Spark's Python Data Source API alone."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class Reader(DataSourceReader):
        def __init__(self, options: dict[str, str]) -> None:
            self.rows = int(options["rows"])
            self.count = int(options["partitions"])

        def partitions(self) -> Sequence[InputPartition]:
            return [InputPartition(i) for i in range(self.count)]

        def read(self, partition: InputPartition) -> Iterator[Any]:
            import numpy as np
            import pyarrow as pa
            from kafka_segments.reading.arrow import arrow_schema

            size = 65_536
            binary = [
                pa.FixedSizeBinaryArray.from_buffers(
                    pa.binary(n), size, [None, pa.py_buffer(np.ones(size * n, np.uint8))]
                ).cast(pa.binary())
                for n in (10, 100)
            ]
            batch = pa.RecordBatch.from_arrays(
                [
                    *binary,
                    pa.repeat(pa.scalar("bench", pa.string()), size),
                    pa.repeat(pa.scalar(0, pa.int32()), size),
                    pa.array(np.arange(size, dtype=np.int64)),
                    pa.array(np.arange(size, dtype=np.int64)).cast(pa.timestamp("us", tz="UTC")),
                    pa.array(np.zeros(size, dtype=np.int32)),
                ],
                schema=arrow_schema(include_headers=False),
            )
            left = self.rows // self.count
            while left > 0:
                yield batch.slice(0, min(size, left))
                left -= size

    class Source(DataSource):
        @classmethod
        def name(cls) -> str:
            return "ready-arrow"

        def schema(self) -> str:
            from kafka_segments.reading.arrow import spark_schema

            return spark_schema(include_headers=False)

        def reader(self, schema: Any) -> DataSourceReader:
            return Reader(dict(self.options))

    return Source


def tree_cpu_seconds() -> float:
    """CPU seconds of this process and every process below it (Spark's JVM and its Python workers),
    including their children that ended (``/proc/<pid>/stat``: utime, stime, cutime, cstime)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = sum(int(v) for v in fields[11:15]) / tick
    mine = os.getpid()

    def below(pid: int) -> bool:
        while pid > 1:
            if pid == mine:
                return True
            pid = parents.get(pid, 0)
        return False

    return sum(seconds for pid, seconds in times.items() if below(pid))


ReadyArrowSource = ready_arrow_source()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=1_000_000, help="records per segment")
    parser.add_argument("--segments", type=int, default=4)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--max-bytes", type=int, default=32 << 20, help="maxBytesPerPartition")
    parser.add_argument("--range", type=int, default=10_000, help="records of the offset-range read")
    parser.add_argument("--cores", type=int, default=2, help="Spark's local[N]")
    parser.add_argument("--skip-spark", action="store_true")
    args = parser.parse_args()
    spec = SegmentSpec(records=args.records, value_size=args.value_size, codec="none")
    with tempfile.TemporaryDirectory(prefix="split-bench-") as folder:
        root = Path(folder)
        store, records = build_lake(root, spec, args.segments)
        size = sum(path.stat().st_size for path in (root / "lake").glob("*/*.log"))
        rows = python_rows(store, records, args)
        if not args.skip_spark:
            rows += spark_rows(store, root, records, args)
    print(f"{records:,} records of {args.value_size} B in {args.segments} segment(s), {size:,} .log bytes")
    print("| run | seconds | CPU seconds | records/s | records per CPU second | notes |")
    print("|---|---:|---:|---:|---:|---|")
    for name, wall, cpu, notes in rows:
        full = "range" not in name and "plan" not in name
        rate = f"{records / wall / 1e6:.2f} M" if full else ""
        per_cpu = f"{records / cpu / 1e6:.2f} M" if full and cpu > 0 else ""
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {rate} | {per_cpu} | {notes} |")


if __name__ == "__main__":
    main()
