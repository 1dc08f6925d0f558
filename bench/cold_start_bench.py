"""Cold start: how long a fresh Python process takes to reach its first kernel call, and to have called
every kernel of a run, with numba's cache empty (cold) and filled (warm) — issue 22, point 3.

Each sample is a fresh process importing ``kafka_segments`` from the Spark job's library archive (a zip, as
a Spark Python worker receiving ``--py-files`` does: ``records.fast.jit`` caches its kernels under the
archive's name in ``$KAFKA_SEGMENTS_CACHE_DIR/numba``). "cold" starts with an empty cache folder, "warm" with
the folder a previous process (or ``python -m kafka_segments.cli.warm --archive``, which ``scripts/setup``
runs) filled. Times are from the spawn: the imports, the first kernel call (``scan_header_table`` of one
batch) and a whole tiny run (``cli.warm``: ``run`` and ``export`` over every codec).

    .venv/bin/python bench/cold_start_bench.py                 # 1 cold and 3 warm samples
    .venv/bin/python bench/cold_start_bench.py --warm-repeats 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kafka_segments.pipeline.engines.spark_submit import library_archive

CHILD = """
import json, sys, tempfile, time
from pathlib import Path
start = time.time()
import numpy as np
from kafka_segments.records.fast import scan_header_table
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
imported = time.time()
scan_header_table(build_batch([Record(0, 0, b"k", b"v")]))
first = time.time()
from kafka_segments.cli.warm import warm
with tempfile.TemporaryDirectory() as work:
    warm(Path(work))
done = time.time()
import kafka_segments
print(json.dumps({"start": start, "imported": imported, "first_kernel": first, "run": done,
                  "package": kafka_segments.__file__}))
"""


def sample(archive: Path, cache: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(archive), "KAFKA_SEGMENTS_CACHE_DIR": str(cache)}
    spawned = time.time()
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the child failed: {done.stderr[-3000:]}")
    times = json.loads(done.stdout.splitlines()[-1])
    if ".zip" not in times["package"]:
        raise SystemExit(f"the child imported {times['package']}, not the archive")
    return {name: times[name] - spawned for name in ("start", "imported", "first_kernel", "run")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--warm-repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="cold-start-"))
    try:
        archive = library_archive(cache_dir=work / "spark")
        cold = sample(archive, work / "cache")
        warm = [sample(archive, work / "cache") for _ in range(args.warm_repeats)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    medians = {name: statistics.median(s[name] for s in warm) for name in cold}
    lines = [
        f"**Cold start** (a fresh process importing the package from its archive; load average "
        f"{os.getloadavg()[0]:.2f}; warm: median of {args.warm_repeats})",
        "",
        "| numba cache | imports s | first kernel call s | whole tiny run s |",
        "|---|---:|---:|---:|",
    ]
    for label, row in (("cold (empty)", cold), ("warm", medians)):
        lines.append(f"| {label} | {row['imported']:.2f} | {row['first_kernel']:.2f} | {row['run']:.2f} |")
    extra = cold["first_kernel"] - medians["first_kernel"]
    lines += [
        "",
        f"cold - warm, first kernel call: {extra:.2f} s; whole run: {cold['run'] - medians['run']:.2f} s",
    ]
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps({"cold": cold, "warm": warm, "warm_median": medians}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
