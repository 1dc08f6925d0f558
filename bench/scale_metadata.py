"""Metadata at scale (issue 33): what a run costs on a lake of P partitions x S segments, one fresh process
per step, as a user runs it (``scale_bench.py --metadata``).

For each shape (``--shapes 100x100,200x500``, or ``--partitions P --segments S``) a local lake of one topic
is built quickly: each partition gets S tiny ``.log`` files (one batch of ``--records`` records; the same
bytes in every partition, written with the project's own writer, Kafka's plain names). Then, each in a fresh
process run through ``bench/counted_cli.py`` (the command line with the lake's store counted):

* **adopt** — ``kafka-segments adopt``: the bootstrap, every segment adopted into version 1 (in
  format 2 streamed partition by partition);
* **gc, first pass** — ``kafka-segments gc --execute``: on format 2 the lake's first pass lists it whole and
  records the runs it settled (``lake.gc_record``), as a lake in service has; the runs' gc then lists
  each partition's tail;
* **run, nothing due** — ``kafka-segments run --engine inline`` with nothing to delete or adopt;
* **run, 1% new, 1% due** — the same a minute later, after 1% of the partitions (at least one) got one new
  segment each, when the first segment of another 1% (their first segment's records are older, written
  ``retention.ms`` + 90 s before the bench's ``now``) is past ``retention.ms``;
* **describe** — ``kafka-segments describe --json`` of the head.

Per step: wall, CPU (user + system) of the process (``os.wait4``) and its peak RSS (its own ``VmHWM``, which
``counted_cli.py`` reports: ``wait4``'s also counts the bench's memory at the fork; uncounted, ``wait4``'s),
the head manifest's size after it, the bytes it wrote to ``_kafka_segments/`` (the version's manifest
objects, and all), bytes read, requests by kind, and the bytes a local lake hashed to know its files' etags.
Nothing here is asserted;
``tests/lake/test_run_cost.py`` checks the counts that matter.

``--s3``: the lake is on moto's S3 server (in this process) instead, behind ``tests/fault_proxy.py``'s proxy
holding every reply back ``--latency-ms`` (20); each step also reports the HTTP requests the proxy saw, by
method. The lake is written straight into moto's backend (in this process), not through the proxy, and
moto's listing answers from sorted names (``moto_listing.py``: moto walks the whole bucket for each page).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import write_segment

CLI_CHILD = Path(__file__).resolve().parent / "counted_cli.py"
KAFKA_SEGMENTS = Path(sys.executable).parent / "kafka-segments"
FORMAT_ENV = "SCALE_BENCH_FORMAT"
"""The manifest format the child's commits write (``counted_cli.py``): 1 measures the previous release."""
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
STEPS = ("adopt", "gc, first pass", "run, nothing due", "run, 1% new, 1% due", "describe")
RETENTION_MS = 168 * 60 * MINUTE_MS
"""``CONFIG``'s ``log.retention.hours``."""
DUE_MS = NOW_MS + 90_000 - RETENTION_MS
"""The timestamp of the first segment of the partitions whose retention is due: past ``retention.ms`` at the
"1% new, 1% due" run (``NOW_MS`` + 2 minutes), not yet at the "nothing due" one (+ 1 minute)."""
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
    total: str = ""
    """A run's last line of totals (``total: N segment(s), B bytes deleted in ...``), else empty."""


def parse_shapes(text: str) -> list[tuple[int, int]]:
    """``"100x100,200x500"`` -> ``[(100, 100), (200, 500)]`` (partitions x segments per partition)."""
    shapes = []
    for item in text.split(","):
        partitions, _, segments = item.strip().partition("x")
        shapes.append((int(partitions), int(segments)))
    return shapes


def segment_logs(
    count: int, *, records: int, first: int = 0, first_ts: int | None = None
) -> list[tuple[str, bytes]]:
    """``count`` consecutive segments' ``.log`` (name, bytes), ``records`` records each, from ``first``
    (``first_ts``: the first segment's records' timestamp)."""
    logs: list[tuple[str, bytes]] = []
    for index in range(count):
        base = first + index * records
        ts = START_MS + base if first_ts is None or index else first_ts
        batch = build_batch(
            [Record(base + i, ts, f"k{base + i}".encode(), b"v" * 20) for i in range(records)]
        )
        files = write_segment([batch], base_offset=base)
        logs.extend((name, data) for name, data in files.files().items() if name.endswith(".log"))
    return logs


class Lake(Protocol):
    """Where a shape's lake lives: its URI for the command line, how to write into it, and its head."""

    env: dict[str, str]

    @property
    def uri(self) -> str: ...

    def write(self, files: list[tuple[str, bytes]]) -> None: ...

    def head(self) -> tuple[int, int]:
        """The head version and its manifest's size (0, 0 without one)."""
        ...

    def http_requests(self) -> dict[str, int]:
        """HTTP requests by method since the last call (empty for a local lake)."""
        ...


@dataclass
class LocalLake:
    root: Path
    env: dict[str, str]

    @property
    def uri(self) -> str:
        return str(self.root)

    def write(self, files: list[tuple[str, bytes]]) -> None:
        for key, data in files:
            path = self.root / key
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

    def head(self) -> tuple[int, int]:
        manifests = sorted((self.root / "_kafka_segments" / "manifests").glob("*.json"))
        if not manifests:
            return 0, 0
        return int(manifests[-1].stem), manifests[-1].stat().st_size

    def http_requests(self) -> dict[str, int]:
        return {}


@dataclass
class S3Lake:
    store: Any
    """An ``S3Store`` straight on the server (the proxy is for the command line)."""
    proxy: Any
    uri: str
    env: dict[str, str]
    backend: Any = None
    """moto's S3 backend when the server runs in this process: the lake is written into it directly (a
    PUT over HTTP costs moto ~5 ms of CPU; 100k of them took 8 minutes on this machine under load)."""

    def write(self, files: list[tuple[str, bytes]]) -> None:
        if self.backend is not None:
            bucket, _, prefix = self.uri.removeprefix("s3://").partition("/")
            for key, data in files:
                self.backend.put_object(bucket, f"{prefix}/{key}", data)
            return
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda file: self.store.put(file[0], file[1]), files))

    def head(self) -> tuple[int, int]:
        manifests = list(self.store.list("_kafka_segments/manifests/"))
        if not manifests:
            return 0, 0
        return int(manifests[-1].key.rsplit("/", 1)[1].split(".")[0]), manifests[-1].size

    def http_requests(self) -> dict[str, int]:
        with self.proxy.lock:
            seen = Counter(method for method, _ in self.proxy.requests)
            self.proxy.requests.clear()
        return dict(sorted(seen.items()))


@contextmanager
def s3_lakes(latency_ms: int) -> Iterator[Any]:
    """A factory of fresh S3 lakes (one prefix each) on moto's server behind a delaying proxy."""
    sys.path.insert(0, str(CLI_CHILD.parents[1] / "tests"))
    from fault_proxy import ALWAYS, Fault, fault_proxy
    from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS, embedded_s3_server
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends
    from moto_listing import fast_listing

    bucket = "scale-bench"
    env = {
        "AWS_ACCESS_KEY_ID": EMBEDDED_CREDENTIALS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": EMBEDDED_CREDENTIALS["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": DEFAULT_REGION,
    }
    os.environ.update(env)
    with ExitStack() as stack:
        stack.enter_context(fast_listing())
        server = stack.enter_context(embedded_s3_server())
        server.client().create_bucket(Bucket=bucket)
        proxy = stack.enter_context(fault_proxy(server.endpoint_url))
        if latency_ms:
            proxy.add(Fault("delay", times=ALWAYS, delay_s=latency_ms / 1000))
        backend = s3_backends[DEFAULT_ACCOUNT_ID]["global"]

        def new_lake() -> S3Lake:
            prefix = f"lake-{uuid.uuid4().hex[:8]}"
            lake_env = {**env, "AWS_ENDPOINT_URL": proxy.endpoint_url}
            lake = S3Lake(server.store(bucket, prefix), proxy, f"s3://{bucket}/{prefix}", lake_env)
            lake.backend = backend
            return lake

        yield new_lake


def lake_files(partitions: int, logs: list[tuple[str, bytes]], first: int = 0) -> list[tuple[str, bytes]]:
    return [
        (f"{TOPIC}-{partition}/{name}", data)
        for partition in range(first, first + partitions)
        for name, data in logs
    ]


def measure(lake: Lake, args: list[str], *, count: bool, manifest_format: int = 2) -> Step:
    """Run ``kafka-segments args`` in a fresh process (through ``counted_cli.py`` when ``count``, counted;
    or when ``manifest_format`` is 1: its commits write the previous release's format)."""
    lake.http_requests()
    with tempfile.NamedTemporaryFile(suffix=".json") as counts_file, tempfile.TemporaryFile() as stdout:
        env = {**os.environ, **lake.env, "SCALE_BENCH_COUNTS": counts_file.name if count else ""}
        env[FORMAT_ENV] = str(manifest_format)
        child = count or manifest_format != 2
        argv = [sys.executable, str(CLI_CHILD), *args] if child else [str(KAFKA_SEGMENTS), *args]
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE, env=env)
        stderr = child.stderr.read() if child.stderr is not None else b""
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise SystemExit(f"kafka-segments {' '.join(args)} exited {code}: {stderr.decode()[-2000:]}")
        text = Path(counts_file.name).read_text(encoding="utf-8") if count else ""
        total = _total_line(stdout) if args[0] == "run" else ""
    counts = summarize(json.loads(text)) if text else {}
    http = lake.http_requests()
    if http:
        counts["http_requests"] = http
    version, size = lake.head()
    own_kb = json.loads(text).get("vm_hwm_kb") if text else None
    rss_kb = usage.ru_maxrss if own_kb is None else own_kb
    return Step(seconds, usage.ru_utime + usage.ru_stime, rss_kb / 1024, version, size, counts, total)


def _total_line(stdout: Any) -> str:
    """The ``total:`` line a run printed into the file ``stdout``."""
    stdout.seek(0)
    lines = [line for line in stdout.read().decode().splitlines() if line.startswith("total:")]
    return lines[-1] if lines else ""


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


def run_shape(
    lake: Lake, work: Path, shape: tuple[int, int], *, records: int, count: bool, manifest_format: int = 1
) -> dict[str, Any]:
    """One shape in one manifest format (format 2: what every commit writes, its bootstrap streamed partition
    by partition, ``lake.bootstrap``; format 1: every step's commits in the previous release's format, through
    ``counted_cli.py``)."""
    partitions, segments = shape
    config = work / "config.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    changed = max(1, partitions // 100)
    build_start = time.perf_counter()
    logs = segment_logs(segments, records=records)
    lake.write(lake_files(partitions - changed, logs))
    due = segment_logs(segments, records=records, first_ts=DUE_MS)
    lake.write(lake_files(changed, due, first=partitions - changed))
    build_seconds = time.perf_counter() - build_start
    uri = ["--lake", lake.uri]
    run = ["run", *uri, "--config", str(config), "--engine", "inline"]
    steps: dict[str, Step] = {}

    def step(args: list[str]) -> Step:
        return measure(lake, args, count=count, manifest_format=manifest_format)

    steps["adopt"] = step(["adopt", *uri, "--now", str(NOW_MS)])
    steps["gc, first pass"] = step(["gc", *uri, "--execute", "--now", str(NOW_MS)])
    steps["run, nothing due"] = step([*run, "--now", str(NOW_MS + MINUTE_MS)])
    # one new segment each in the first 1%, after the partition's last; the last 1%'s first segment due
    lake.write(lake_files(changed, segment_logs(1, records=records, first=segments * records)))
    steps["run, 1% new, 1% due"] = step([*run, "--now", str(NOW_MS + 2 * MINUTE_MS)])
    steps["describe"] = step(["describe", *uri, "--json"])
    return {
        "partitions": partitions,
        "segments_per_partition": segments,
        "segments": partitions * segments,
        "changed_partitions": changed,
        "manifest_format": manifest_format,
        "build_seconds": build_seconds,
        "steps": {name: vars(step) for name, step in steps.items()},
    }


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f}" if n >= 1e5 else f"{n / 1e6:,.3f}"


def table(result: dict[str, Any]) -> str:
    lines = [
        f"**Metadata at scale** ({result.get('backend', 'local lake')}, one topic, `.log` files of "
        f"{result['records']} records; "
        "one fresh process per step; MB = 10^6 bytes)",
        "",
        "| lake | step | wall s | CPU s | peak RSS MB | head manifest MB (version) | manifest MB written | "
        "MB written to `_kafka_segments/` | MB read | requests | MB hashed (local etags) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for shape in result["shapes"]:
        label = (
            f"{shape['partitions']:,} × {shape['segments_per_partition']:,} = "
            f"{shape['segments']:,} segments, format {shape.get('manifest_format', 1)}"
        )
        for name in STEPS:
            if name not in shape["steps"]:
                continue
            step = shape["steps"][name]
            counts = step["counts"]
            requests = ", ".join(f"{kind} {n:,}" for kind, n in sorted(counts.get("requests", {}).items()))
            if "http_requests" in counts:
                http = ", ".join(f"{method} {n:,}" for method, n in counts["http_requests"].items())
                requests += f" (HTTP: {http})"
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


def main(
    shapes: list[tuple[int, int]],
    *,
    records: int,
    work_dir: str | None,
    count: bool,
    s3_latency_ms: int | None,
    formats: tuple[int, ...] = (1,),
) -> dict[str, Any]:
    """Every shape measured in each manifest format of ``formats`` (on S3 behind a proxy of
    ``s3_latency_ms`` when it is not ``None``)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="scale-metadata-", dir=work_dir) as work, ExitStack() as stack:
        new_s3_lake = None if s3_latency_ms is None else stack.enter_context(s3_lakes(s3_latency_ms))
        for (partitions, segments), manifest_format in ((shape, f) for shape in shapes for f in formats):
            lake: Lake
            if new_s3_lake is None:
                lake = LocalLake(Path(work) / f"lake-{partitions}x{segments}-f{manifest_format}", {})
            else:
                lake = new_s3_lake()
            shape = (partitions, segments)
            rows.append(
                run_shape(
                    lake, Path(work), shape, records=records, count=count, manifest_format=manifest_format
                )
            )
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)  # progress: the shape just measured
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "records": records,
        "backend": "local lake" if s3_latency_ms is None else f"S3 lake (moto, {s3_latency_ms} ms a reply)",
        "shapes": rows,
        "machine": {"nproc": os.cpu_count(), "load_average": os.getloadavg()},
    }
