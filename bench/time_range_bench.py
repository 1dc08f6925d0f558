"""A one-hour query of a multi-hour partition (issue 23 point 5): bytes of ``.log`` read and CPU seconds
with a pushed ``timestamp >= lo AND timestamp < hi`` narrowed by the segments' pinned ``.timeindex``, and
without it (segments only: what the reader did before), in one run, back to back.

The partition holds ``--hours`` hours of CreateTime records (``--per-hour`` an hour, 100-byte values, in
batches of 10, each record up to ``--late-minutes`` older than the producer's clock), rolled every
``--segment-hours`` hours into segments written with Kafka's index interval (4096 bytes), uploaded under
Kafka's plain names with their ``.index`` and ``.timeindex`` and adopted (adoption checks and pins each
``.timeindex``). The query is hour ``--hour``, read as Spark's data source plans it (``Narrowing`` over
``plan_read`` with ``maxBytesPerPartition``), the filter then applied to the rows.

    .venv/bin/python bench/time_range_bench.py --hours 24 --per-hour 100000 --segment-hours 6 --hour 14
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.time_pin import time_floor
from kafka_segments.reading import plan_read
from kafka_segments.reading.pushdown import Narrowing
from kafka_segments.reading.segment_read import read_task
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import write_segment
from kafka_segments.storage import LocalStore, ObjectStore
from pyspark.sql.datasource import GreaterThanOrEqual, LessThan
from split_read_bench import Counting

T0 = 1_764_000_000_000
HOUR_MS = 3_600_000


def build_lake(root: Path, args: argparse.Namespace) -> LocalStore:
    store = LocalStore(root)
    rng = random.Random(1)
    offset = 0
    for first_hour in range(0, args.hours, args.segment_hours):
        batches = []
        for step in range(args.segment_hours * args.per_hour // 10):
            clock = T0 + first_hour * HOUR_MS + step * 10 * HOUR_MS // args.per_hour
            late = args.late_minutes * 60_000
            records = [
                Record(
                    offset + i, clock - rng.randint(0, late), f"k{offset + i}".encode(), rng.randbytes(100)
                )
                for i in range(10)
            ]
            batches.append(build_batch(records))
            offset += 10
        files = write_segment(batches)
        for name, data in files.files().items():
            store.put(f"clicks-0/{name}", data)
    adopt(store, now_ms=T0 + (args.hours + 1) * HOUR_MS)
    return store


def one_hour(
    store: ObjectStore, args: argparse.Namespace, *, time_index: bool
) -> tuple[int, int, int, float]:
    """(rows, tasks, .log bytes read, CPU seconds) of the hour's query."""
    low, high = T0 + args.hour * HOUR_MS, T0 + (args.hour + 1) * HOUR_MS
    start = resource.getrusage(resource.RUSAGE_SELF)
    plan = plan_read(store, {"subscribe": "clicks", "maxBytesPerPartition": str(args.max_bytes)})
    narrowing = Narrowing().with_filter(GreaterThanOrEqual(("timestamp",), _utc(low)))
    narrowing = narrowing.with_filter(LessThan(("timestamp",), _utc(high)))
    tasks = narrowing.narrow(
        plan.tasks, records_too=True, floor_of=partial(time_floor, store) if time_index else None
    )
    recording = Counting(store)
    rows = 0
    for task in tasks:
        for batch in read_task(
            recording,
            task,
            include_headers=False,
        ):
            times = batch.column("timestamp").cast("int64").to_numpy() // 1000
            rows += int(((times >= low) & (times < high)).sum())
    end = resource.getrusage(resource.RUSAGE_SELF)
    cpu = end.ru_utime + end.ru_stime - start.ru_utime - start.ru_stime
    return rows, len(tasks), recording.log_bytes, cpu


def _utc(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=int, default=24)
    parser.add_argument("--per-hour", type=int, default=100_000)
    parser.add_argument("--segment-hours", type=int, default=6)
    parser.add_argument("--late-minutes", type=int, default=10)
    parser.add_argument("--hour", type=int, default=14)
    parser.add_argument("--max-bytes", type=int, default=8 << 20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = build_lake(Path(folder), args)
        total = sum(path.stat().st_size for path in Path(folder).rglob("*.log"))
        print(f"partition: {total:,} bytes of .log in {args.hours // args.segment_hours} segments")
        for _ in range(2):  # the second of two identical runs
            results = {
                name: one_hour(store, args, time_index=name == "timeindex")
                for name in ("segments", "timeindex")
            }
        for name, (rows, tasks, read, cpu) in results.items():
            print(
                f"{name:>9}: {rows:,} rows, {tasks} tasks, {read:,} bytes read ({read / total:.1%}), "
                f"{cpu:.2f} CPU s"
            )


if __name__ == "__main__":
    main()
