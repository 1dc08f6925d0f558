"""Scale benchmark: plan, run, gc and describe on local lakes of 1k, 4k and 16k partitions (issue 20).

Builds, for each size, a local-directory lake of P partitions x S small segments written with the project's
own writer (``build_batch`` + ``write_segment``; every partition gets the same bytes, with Kafka's plain
names, waiting for adoption), then runs the command line on it as a user would, one fresh process per step:

* **plan** — ``kafka-segments plan --json`` (a dry run: adoption and the retention plan in memory);
* **run** — ``kafka-segments run --engine inline --no-gc``: adopt, plan, commit (retention removes every
  segment but the newest of each partition; ``file.delete.delay.ms`` is 0);
* **gc** — ``kafka-segments gc --execute``: deletes the retired segments and their indexes;
* **describe** — ``kafka-segments describe --json`` of the head.

Each step's wall time, CPU time (user + system) and peak memory (max RSS) come from ``os.wait4`` of its
process, so they include the interpreter, the imports and numba's cache load (about 5-7 s of CPU for the
steps that read segments). The table also gives, between consecutive sizes, the added CPU time per added
partition: when a step is linear that column stays flat as the lake grows (a quadratic step would double it
at every 4x). CPU time is the column to compare on a shared machine: wall time also counts waiting for the
cores and the disk (``--work-dir /dev/shm`` keeps the lakes off the disk).

Usage::

    .venv/bin/python bench/scale_bench.py                          # 1,000 and 4,000 partitions x 4 segments
    .venv/bin/python bench/scale_bench.py --sizes 1000,4000,16000  # and 16,000
    .venv/bin/python bench/scale_bench.py --quick                  # 20 and 40 partitions, for the smoke test
    .venv/bin/python bench/scale_bench.py --json out.json

Results go to ``bench/RESULTS.md`` by hand (copy the printed table).

``--metadata`` measures instead what the lake's metadata costs as it grows (issue 33: ``scale_metadata.py``):
``adopt``, a ``run`` with nothing due, a ``run`` after 1% of the partitions got a segment, and ``describe``,
on lakes of P partitions x S segments, with the bytes each step wrote and read and its requests::

    .venv/bin/python bench/scale_bench.py --metadata --partitions 200 --segments 500
    .venv/bin/python bench/scale_bench.py --metadata --shapes 100x100,200x500 --work-dir /dev/shm
    .venv/bin/python bench/scale_bench.py --metadata --shapes 2000x500 --formats 2   # 10^6, format 2 only

Each shape is measured in both manifest formats (``--formats 1,2``): format 2 is what every commit writes
(its bootstrap streams partition by partition);
format 1's steps run through ``counted_cli.py`` with their commits in the previous release's format.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import SegmentFiles, write_segment

CLI = Path(sys.executable).parent / "kafka-segments"
START_MS = 1_763_000_000_000
DAY_MS = 86_400_000
NOW_MS = START_MS + 30 * DAY_MS
TOPIC = "scale"
CONFIG = """\
broker:
  log.retention.hours: 168
  log.segment.delete.delay.ms: 0
"""
STEPS = ("plan", "run", "gc", "describe")


@dataclass(frozen=True)
class Shape:
    segments: int
    batches: int
    records: int
    value_bytes: int


@dataclass(frozen=True)
class Measured:
    seconds: float
    cpu_seconds: float
    max_rss_mb: float


def make_segments(shape: Shape) -> list[SegmentFiles]:
    """One partition's segments: all but the newest are older than the 7-day retention at ``NOW_MS``."""
    value = b"v" * shape.value_bytes
    segments = []
    offset = 0
    for segment in range(shape.segments):
        newest = segment == shape.segments - 1
        ts = NOW_MS - DAY_MS if newest else START_MS + segment * DAY_MS
        base = offset
        batches = []
        for _ in range(shape.batches):
            records = [Record(offset + i, ts, f"k{offset + i}".encode(), value) for i in range(shape.records)]
            batches.append(build_batch(records, base_offset=offset))
            offset += shape.records
        segments.append(write_segment(batches, base_offset=base))
    return segments


def build_lake(root: Path, partitions: int, segments: list[SegmentFiles]) -> int:
    """Write every partition's files under ``root`` (a local lake: one file per object); returns the count."""
    files = [(name, data) for files in segments for name, data in files.files().items()]
    for partition in range(partitions):
        folder = root / f"{TOPIC}-{partition}"
        folder.mkdir(parents=True)
        for name, data in files:
            (folder / name).write_bytes(data)
    return partitions * len(files)


def measure(args: list[str]) -> Measured:
    """Run the command line in a fresh process; its wall time and max RSS (``os.wait4``)."""
    start = time.perf_counter()
    child = subprocess.Popen(
        [str(CLI), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ.copy()
    )
    stderr = child.stderr.read() if child.stderr is not None else b""
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"kafka-segments {' '.join(args)} exited {child.returncode}: {stderr.decode()}")
    return Measured(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def run_size(work: Path, partitions: int, segments: list[SegmentFiles]) -> dict[str, Any]:
    root = work / f"lake-{partitions}"
    config = work / "config.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    build_start = time.perf_counter()
    objects = build_lake(root, partitions, segments)
    build_seconds = time.perf_counter() - build_start
    lake = ["--lake", str(root)]
    common = [*lake, "--config", str(config), "--now", str(NOW_MS)]
    steps = {
        "plan": measure(["plan", *common, "--json"]),
        "run": measure(["run", *common, "--engine", "inline", "--no-gc"]),
        "gc": measure(["gc", *lake, "--execute"]),
        "describe": measure(["describe", *lake, "--json"]),
    }
    left = sum(1 for path in root.rglob("*.log") if "_kafka_segments" not in path.parts)
    if left != partitions:
        raise SystemExit(f"expected one .log per partition after gc, found {left}")
    shutil.rmtree(root)
    return {
        "partitions": partitions,
        "objects": objects,
        "build_seconds": build_seconds,
        "steps": {name: vars(value) for name, value in steps.items()},
    }


def table(result: dict[str, Any]) -> str:
    shape = result["shape"]
    sizes = result["sizes"]
    header = [f"{row['partitions']:,} partitions" for row in sizes]
    marginal = [f"{a['partitions']:,}→{b['partitions']:,}" for a, b in pairwise(sizes)]
    objects = ", ".join(f"{row['objects']:,}" for row in sizes)
    lines = [
        f"**Scale** (local lake; {shape['segments']} segments per partition of {shape['batches']} batches x "
        f"{shape['records']} records of {shape['value_bytes']} B: {objects} objects; one fresh process per "
        f"step; wall s / CPU s / max RSS MB)",
        "",
        "| step | " + " | ".join([*header, *(f"CPU µs per added partition {m}" for m in marginal)]) + " |",
        "|---|" + "---:|" * (len(header) + len(marginal)),
    ]
    for step in STEPS:
        cells = [step]
        for row in sizes:
            measured = row["steps"][step]
            cells.append(
                f"{measured['seconds']:.1f} / {measured['cpu_seconds']:.1f} / {measured['max_rss_mb']:.0f}"
            )
        for small, large in pairwise(sizes):
            added = large["steps"][step]["cpu_seconds"] - small["steps"][step]["cpu_seconds"]
            cells.append(f"{added / (large['partitions'] - small['partitions']) * 1e6:,.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    startup = result["startup"]
    lines.append("")
    lines.append(
        f"Startup alone (`kafka-segments --version`): {startup['seconds']:.1f} s wall, "
        f"{startup['cpu_seconds']:.1f} s CPU, {startup['max_rss_mb']:.0f} MB."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="1000,4000", help="partition counts, comma-separated")
    parser.add_argument("--segments", type=int, default=4, help="segments per partition")
    parser.add_argument("--batches", type=int, default=2, help="batches per segment")
    parser.add_argument("--records", type=int, default=5, help="records per batch")
    parser.add_argument("--value-bytes", type=int, default=50)
    parser.add_argument("--work-dir", help="where to build the lakes (default: a temporary directory)")
    parser.add_argument("--quick", action="store_true", help="20 and 40 partitions x 3 segments (smoke test)")
    parser.add_argument("--json", help="write the results as JSON to this file")
    metadata = parser.add_argument_group("metadata at scale (issue 33)")
    metadata.add_argument("--metadata", action="store_true", help="adopt, run and describe as the lake grows")
    metadata.add_argument("--partitions", type=int, help="with --segments: one shape P x S")
    metadata.add_argument("--shapes", help="shapes PxS, comma-separated (e.g. 100x100,200x500)")
    metadata.add_argument("--no-count", action="store_true", help="run the plain command line, uncounted")
    metadata.add_argument("--s3", action="store_true", help="the lake on moto's S3 server, behind a proxy")
    metadata.add_argument("--latency-ms", type=int, default=20, help="with --s3: added to every reply")
    metadata.add_argument(
        "--formats",
        default="1,2",
        help="manifest formats to measure each shape in (format 1: as the previous release wrote it)",
    )
    args = parser.parse_args(argv)
    if args.metadata:
        return metadata_main(args)
    if args.quick:
        args.sizes, args.segments = "20,40", 3
    sizes = [int(size) for size in args.sizes.split(",")]
    shape = Shape(args.segments, args.batches, args.records, args.value_bytes)
    segments = make_segments(shape)
    with tempfile.TemporaryDirectory(prefix="scale-bench-", dir=args.work_dir) as work:
        startup = measure(["--version"])
        rows = []
        for partitions in sizes:
            rows.append(run_size(Path(work), partitions, segments))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)  # progress: the size just measured
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "shape": vars(shape),
        "startup": vars(startup),
        "sizes": rows,
        "machine": {"python": platform.python_version(), "nproc": os.cpu_count()},
    }
    print(table(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=2)
    return 0


def metadata_main(args: argparse.Namespace) -> int:
    import scale_metadata

    if args.quick:
        shapes = [(20, 3)]
    elif args.shapes:
        shapes = scale_metadata.parse_shapes(args.shapes)
    else:
        shapes = [(args.partitions or 100, args.segments)]
    count = not args.no_count
    latency = args.latency_ms if args.s3 else None
    formats = tuple(int(f) for f in args.formats.split(","))
    result = scale_metadata.main(
        shapes,
        records=args.records,
        work_dir=args.work_dir,
        count=count,
        s3_latency_ms=latency,
        formats=formats,
    )
    print(scale_metadata.table(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
