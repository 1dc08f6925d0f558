"""Adoption benchmark: a lake of P partitions x S segments on moto's S3 server (issue 3, item 12).

Measures, in one run against the same server:

* **upload** — putting every segment (``.log`` + ``.index`` + ``.timeindex``) with Kafka's plain names;
* **reference: GET every .log** — downloading every segment body with the same worker count, no parsing:
  the I/O floor adoption cannot beat;
* **adopt** — ``kafka_segments.lake.adopt_run.adopt`` (numba kernels compiled beforehand): list, read each
  new segment, CRC-checked header scan, sha256, commit manifest version 1;
* **re-adopt, nothing new** — the same call again: list + compare with the manifest; must read no segment
  body (counted) and commit nothing;
* **plan from the manifest** — read the head manifest and walk every segment entry the way a retention
  plan does (per partition: size, log start/end, time-retention candidates), without touching segments.

Usage::

    .venv/bin/python bench/adoption_bench.py                 # 1,000 partitions x 10 segments
    .venv/bin/python bench/adoption_bench.py --quick         # 20 x 3, for the smoke test
    .venv/bin/python bench/adoption_bench.py --json out.json

Results go to ``bench/RESULTS.md`` by hand (copy the printed table).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS, embedded_s3_server
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.history import read_head
from kafka_segments.lake.scan import summarize_segment
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import SegmentFiles, write_segment
from kafka_segments.storage import ObjectStore, S3Store

BUCKET = "adoption-bench"
DAY_MS = 86_400_000


@dataclass(frozen=True)
class Shape:
    partitions: int
    segments: int
    batches: int
    records: int
    value_bytes: int
    workers: int


class CountingStore:
    """Counts segment body reads (get / get_range of ``.log`` keys); every other call goes to ``inner``."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner
        self.body_reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def get(self, key: str) -> bytes:
        self.body_reads += key.endswith(".log")
        return self.inner.get(key)

    def get_range(self, key: str, *, start: int, end: int, if_match: str | None = None) -> bytes:
        self.body_reads += key.endswith(".log")
        return self.inner.get_range(key, start=start, end=end, if_match=if_match)


def make_segments(shape: Shape, *, start_ms: int) -> list[SegmentFiles]:
    """One partition's segments (every partition gets the same bytes: partitions are independent)."""
    value = b"x" * shape.value_bytes
    segments = []
    offset = 0
    for segment in range(shape.segments):
        batches = []
        base = offset
        for batch in range(shape.batches):
            ts = start_ms + (segment * shape.batches + batch) * 1000
            records = [
                Record(offset + i, ts, f"key-{offset + i}".encode(), value) for i in range(shape.records)
            ]
            batches.append(build_batch(records, base_offset=offset))
            offset += shape.records
        segments.append(write_segment(batches, base_offset=base))
    return segments


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, result


def upload(store: ObjectStore, shape: Shape, segments: list[SegmentFiles]) -> int:
    items = [
        (f"bench-{p}/{name}", data)
        for p in range(shape.partitions)
        for files in segments
        for name, data in files.files().items()
    ]
    with ThreadPoolExecutor(shape.workers) as pool:
        list(pool.map(lambda item: store.put(item[0], item[1]), items))
    return len(items)


def get_all_logs(store: ObjectStore, shape: Shape) -> int:
    keys = [meta.key for meta in store.list() if meta.key.endswith(".log")]
    with ThreadPoolExecutor(shape.workers) as pool:
        return sum(len(data) for data in pool.map(store.get, keys))


def plan_from_manifest(store: ObjectStore, *, now_ms: int) -> int:
    head = read_head(store)
    if head is None:
        raise SystemExit("no manifest after adoption")
    candidates = 0
    for state in head.partitions:
        cutoff = now_ms - 7 * DAY_MS
        _ = (state.size_bytes, state.log_start_offset, state.log_end_offset, state.last_stable_offset)
        for segment in state.segments:
            if segment.largest_timestamp_ms < cutoff:
                candidates += 1
    return candidates


def run(shape: Shape, *, repeats: int) -> dict[str, Any]:
    start_ms = 1_763_000_000_000
    segments = make_segments(shape, start_ms=start_ms)
    compile_seconds = timed(lambda: summarize_segment(segments[0].log, key="warm-up", base_offset=0))[0]
    segment_bytes = sum(files.size for files in segments) * shape.partitions
    os.environ.setdefault("AWS_ACCESS_KEY_ID", EMBEDDED_CREDENTIALS["aws_access_key_id"])
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", EMBEDDED_CREDENTIALS["aws_secret_access_key"])
    rows: dict[str, list[float]] = {"upload": [], "reference": [], "adopt": [], "readopt": [], "plan": []}
    reads_on_readopt = []
    now_ms = start_ms + 30 * DAY_MS
    workers = shape.workers
    with embedded_s3_server() as server:
        server.client().create_bucket(Bucket=BUCKET)
        for repeat in range(repeats):
            store = S3Store(BUCKET, f"run-{repeat}", endpoint_url=server.endpoint_url, region=DEFAULT_REGION)
            seconds, objects = timed(lambda store=store: upload(store, shape, segments))
            rows["upload"].append(seconds)
            rows["reference"].append(timed(lambda store=store: get_all_logs(store, shape))[0])
            seconds, report = timed(lambda store=store: adopt(store, now_ms=now_ms, max_workers=workers))
            if report.committed_version != 1 or report.result.quarantined:
                raise SystemExit(f"unexpected adoption result: {report.to_text()}")
            rows["adopt"].append(seconds)
            counting = CountingStore(store)
            seconds, again = timed(lambda c=counting: adopt(c, now_ms=now_ms, max_workers=workers))
            if again.committed_version is not None:
                raise SystemExit("re-adoption committed although nothing changed")
            rows["readopt"].append(seconds)
            reads_on_readopt.append(counting.body_reads)
            rows["plan"].append(timed(lambda store=store: plan_from_manifest(store, now_ms=now_ms))[0])
    medians = {name: statistics.median(values) for name, values in rows.items()}
    return {
        "shape": shape.__dict__,
        "objects": objects,
        "segment_bytes": segment_bytes,
        "seconds": medians,
        "all_seconds": rows,
        "body_reads_on_readopt": reads_on_readopt,
        "numba_compile_seconds": compile_seconds,
        "machine": {"python": platform.python_version(), "nproc": os.cpu_count()},
    }


def table(result: dict[str, Any]) -> str:
    shape = result["shape"]
    seconds = result["seconds"]
    segments = shape["partitions"] * shape["segments"]
    mb = result["segment_bytes"] / 1e6
    reference = seconds["reference"]
    lines = [
        f"**Adoption** ({shape['partitions']:,} partitions x {shape['segments']} segments = {segments:,} "
        f"segments, {mb:.1f} MB of .log, {shape['workers']} workers, moto S3 server on loopback; "
        f"medians of {len(result['all_seconds']['adopt'])})",
        "",
        "| step | seconds | segments/s | MB/s | vs reference |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, label in (
        ("upload", f"upload ({result['objects']:,} objects)"),
        ("reference", "reference: GET every .log, no parsing"),
        ("adopt", "adopt (GET + CRC header scan + sha256 + commit)"),
        ("readopt", "re-adopt, nothing new (list + manifest compare)"),
        ("plan", "plan from the manifest (no segment reads)"),
    ):
        value = seconds[name]
        rates = f"{segments / value:,.0f} | {mb / value:,.1f}"
        lines.append(f"| {label} | {value:.2f} | {rates} | {value / reference:.2f}x |")
    lines.append("")
    lines.append(f"Segment bodies read by the re-adoption: {result['body_reads_on_readopt']}")
    lines.append(
        f"Header-scan kernels compiled (or loaded from numba's cache) before timing: "
        f"{result['numba_compile_seconds']:.2f} s"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--segments", type=int, default=10)
    parser.add_argument("--batches", type=int, default=10, help="batches per segment")
    parser.add_argument("--records", type=int, default=10, help="records per batch")
    parser.add_argument("--value-bytes", type=int, default=100)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="20 partitions x 3 segments (smoke test)")
    parser.add_argument("--json", help="write the results as JSON to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.partitions, args.segments = 20, 3
    shape = Shape(args.partitions, args.segments, args.batches, args.records, args.value_bytes, args.workers)
    result = run(shape, repeats=args.repeats)
    print(table(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=2)
    return 0 if all(reads == 0 for reads in result["body_reads_on_readopt"]) else 1


if __name__ == "__main__":
    sys.exit(main())
