"""Metadata at scale (issue 33): what a run costs on a lake of P partitions x S segments, one fresh process
per step, as a user runs it (``scale_bench.py --metadata``).

For each shape (``--shapes 100x100,200x500``, or ``--partitions P --segments S``) a local lake of one topic
is built quickly: each partition gets S tiny ``.log`` files (one batch of ``--records`` records; the same
bytes in every partition, written with the project's own writer, Kafka's plain names). Then, each in a fresh
process run through ``bench/counted_cli.py`` (the command line with the lake's store counted):

* **adopt** — ``kafka-segments adopt``: the bootstrap, every segment adopted into version 1;
* **run, nothing due** — ``kafka-segments run --engine inline`` with nothing to delete or adopt;
* **run, 1% new** — the same after 1% of the partitions (at least one) got one new segment each;
* **describe** — ``kafka-segments describe --json`` of the head.

Per step: wall, CPU (user + system) and peak RSS of the process (``os.wait4``), the head manifest's size
after it, the bytes it wrote to ``_kafka_segments/`` (the version's manifest objects, and all), bytes read,
requests by kind, and the bytes a local lake hashed to know its files' etags. Nothing here is asserted;
``tests/lake/test_run_cost.py`` checks the counts that matter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import write_segment

CLI_CHILD = Path(__file__).resolve().parent / "counted_cli.py"
KAFKA_SEGMENTS = Path(sys.executable).parent / "kafka-segments"
START_MS = 1_763_000_000_000
MINUTE_MS = 60_000
NOW_MS = START_MS + 24 * 60 * MINUTE_MS
"""A day after the records: nothing is due under a 7-day retention."""
TOPIC = "scale"
CONFIG = """\
broker:
  log.retention.hours: 168
  log.segment.delete.delay.ms: 0
"""
STEPS = ("adopt", "run, nothing due", "run, 1% new", "describe")
METADATA_AREAS = ("manifests", "partitions")


@dataclass(frozen=True)
class Step:
    """One command's process: its resources and what it did to the lake."""

    seconds: float
    cpu_seconds: float
    max_rss_mb: float
    head_version: int
    head_manifest_bytes: int
    counts: dict[str, Any]


def parse_shapes(text: str) -> list[tuple[int, int]]:
    """``"100x100,200x500"`` -> ``[(100, 100), (200, 500)]`` (partitions x segments per partition)."""
    shapes = []
    for item in text.split(","):
        partitions, _, segments = item.strip().partition("x")
        shapes.append((int(partitions), int(segments)))
    return shapes


def segment_logs(count: int, *, records: int, first: int = 0) -> list[tuple[str, bytes]]:
    """``count`` consecutive segments' ``.log`` (name, bytes), ``records`` records each, from ``first``."""
    logs = []
    for index in range(count):
        base = first + index * records
        ts = START_MS + base
        batch = build_batch(
            [Record(base + i, ts, f"k{base + i}".encode(), b"v" * 20) for i in range(records)]
        )
        files = write_segment([batch], base_offset=base)
        logs.extend((name, data) for name, data in files.files().items() if name.endswith(".log"))
    return logs


def build_lake(root: Path, partitions: int, logs: list[tuple[str, bytes]]) -> None:
    for partition in range(partitions):
        folder = root / f"{TOPIC}-{partition}"
        folder.mkdir(parents=True)
        for name, data in logs:
            (folder / name).write_bytes(data)


def head(root: Path) -> tuple[int, int]:
    """The head version and its manifest's size (0, 0 without one)."""
    manifests = sorted((root / "_kafka_segments" / "manifests").glob("*.json"))
    if not manifests:
        return 0, 0
    return int(manifests[-1].stem), manifests[-1].stat().st_size


def measure(root: Path, args: list[str], *, count: bool) -> Step:
    """Run ``kafka-segments args`` in a fresh process (counted through ``counted_cli.py`` when ``count``)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as counts_file:
        env = {**os.environ, "SCALE_BENCH_COUNTS": counts_file.name}
        argv = [sys.executable, str(CLI_CHILD), *args] if count else [str(KAFKA_SEGMENTS), *args]
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        stderr = child.stderr.read() if child.stderr is not None else b""
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise SystemExit(f"kafka-segments {' '.join(args)} exited {code}: {stderr.decode()[-2000:]}")
        text = Path(counts_file.name).read_text(encoding="utf-8") if count else ""
    counts = summarize(json.loads(text)) if text else {}
    version, size = head(root)
    return Step(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, version, size, counts)


def summarize(raw: dict[str, Any]) -> dict[str, Any]:
    """One process's counts over the stores it opened: requests by kind, bytes by area."""
    requests: dict[str, int] = {}
    read: dict[str, int] = {}
    written: dict[str, int] = {}
    for store in raw["stores"]:
        for by_kind in store["requests"].values():
            for kind, n in by_kind.items():
                requests[kind] = requests.get(kind, 0) + n
        for area, n in store["bytes_read"].items():
            read[area] = read.get(area, 0) + n
        for area, n in store["bytes_written"].items():
            written[area] = written.get(area, 0) + n
    return {
        "requests": requests,
        "bytes_read": read,
        "bytes_written": written,
        "metadata_written": sum(written.get(area, 0) for area in METADATA_AREAS),
        "lake_metadata_written": sum(n for area, n in written.items() if area != "segments"),
        "local_hashed": raw.get("local_hashed", {}),
    }


def run_shape(work: Path, partitions: int, segments: int, *, records: int, count: bool) -> dict[str, Any]:
    root = work / f"lake-{partitions}x{segments}"
    config = work / "config.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    build_start = time.perf_counter()
    build_lake(root, partitions, segment_logs(segments, records=records))
    build_seconds = time.perf_counter() - build_start
    lake = ["--lake", str(root)]
    run = ["run", *lake, "--config", str(config), "--engine", "inline"]
    steps: dict[str, Step] = {}
    steps["adopt"] = measure(root, ["adopt", *lake, "--now", str(NOW_MS)], count=count)
    steps["run, nothing due"] = measure(root, [*run, "--now", str(NOW_MS + MINUTE_MS)], count=count)
    changed = max(1, partitions // 100)
    for partition in range(changed):  # one new segment each, after the partition's last
        for name, data in segment_logs(1, records=records, first=segments * records):
            (root / f"{TOPIC}-{partition}" / name).write_bytes(data)
    steps["run, 1% new"] = measure(root, [*run, "--now", str(NOW_MS + 2 * MINUTE_MS)], count=count)
    steps["describe"] = measure(root, ["describe", *lake, "--json"], count=count)
    return {
        "partitions": partitions,
        "segments_per_partition": segments,
        "segments": partitions * segments,
        "changed_partitions": changed,
        "build_seconds": build_seconds,
        "steps": {name: vars(step) for name, step in steps.items()},
    }


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f}" if n >= 1e5 else f"{n / 1e6:,.3f}"


def table(result: dict[str, Any]) -> str:
    lines = [
        f"**Metadata at scale** (local lake, one topic, `.log` files of {result['records']} records; "
        "one fresh process per step; MB = 10^6 bytes)",
        "",
        "| lake | step | wall s | CPU s | peak RSS MB | head manifest MB (version) | manifest MB written | "
        "MB written to `_kafka_segments/` | MB read | requests | MB hashed (local etags) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for shape in result["shapes"]:
        label = (
            f"{shape['partitions']:,} × {shape['segments_per_partition']:,} = {shape['segments']:,} segments"
        )
        for name in STEPS:
            step = shape["steps"][name]
            counts = step["counts"]
            requests = ", ".join(f"{kind} {n:,}" for kind, n in sorted(counts.get("requests", {}).items()))
            read = sum(counts.get("bytes_read", {}).values())
            hashed = counts.get("local_hashed", {}).get("bytes", 0)
            lines.append(
                f"| {label} | {name} | {step['seconds']:.1f} | {step['cpu_seconds']:.1f} | "
                f"{step['max_rss_mb']:.0f} | {_mb(step['head_manifest_bytes'])} (v{step['head_version']}) | "
                f"{_mb(counts.get('metadata_written', 0))} | {_mb(counts.get('lake_metadata_written', 0))} | "
                f"{_mb(read)} | {requests} | {_mb(hashed)} |"
            )
            label = ""
    return "\n".join(lines)


def main(shapes: list[tuple[int, int]], *, records: int, work_dir: str | None, count: bool) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="scale-metadata-", dir=work_dir) as work:
        for partitions, segments in shapes:
            rows.append(run_shape(Path(work), partitions, segments, records=records, count=count))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)  # progress: the shape just measured
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "records": records,
        "shapes": rows,
        "machine": {"nproc": os.cpu_count(), "load_average": os.getloadavg()},
    }
