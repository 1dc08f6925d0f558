"""The table sync's speed (issue 34): segments → Parquet files of an Iceberg table, against ``read_lake``'s
full scan of the same records (the columnar reader both use). The topic is ``--segments`` copies of one cached
``bench/gen_data.py`` segment (100 B values by default) adopted into a local lake (``reading_bench``'s lake).

    .venv/bin/python bench/tables_bench.py --records 1000000 --segments 4   # 4 M records

Records/s per core: records over the process's CPU time (the sync is one thread but for pyarrow's writer).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gen_data import SegmentSpec
from kafka_segments.reading import read_lake
from kafka_segments.tables import sync_tables
from reading_bench import TOPIC, build_lake


def measured(run: Callable[[], Any]) -> tuple[float, float]:
    """Wall and CPU seconds of ``run()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1_000_000, help="records per segment")
    parser.add_argument("--segments", type=int, default=4)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--codec", default="none")
    args = parser.parse_args()
    spec = SegmentSpec(records=args.records, value_size=args.value_size, codec=args.codec)
    with tempfile.TemporaryDirectory() as folder:
        store, records = build_lake(Path(folder), spec, args.segments)
        options = {"subscribe": TOPIC, "kafka.isolation.level": "read_committed", "includeHeaders": "true"}
        scan = measured(lambda: sum(batch.num_rows for batch in read_lake(store, options)))
        sync = measured(lambda: sync_tables(store, topics=[TOPIC]))
        again = measured(lambda: sync_tables(store, topics=[TOPIC]))
    print(f"{records:,} records of {args.value_size} B ({args.codec}), {args.segments} segment(s)")
    for name, (wall, cpu) in (("read_lake scan", scan), ("tables sync", sync), ("sync again", again)):
        rate = records / cpu / 1e6
        print(f"  {name:<15} {wall:6.2f} s wall {cpu:6.2f} s CPU  {rate:5.2f} M records/s per core")


if __name__ == "__main__":
    main()
