"""Compaction benchmark: one cleaning round of a 1,000,000-record segment, S3 (moto's server) to S3, per core.

For every generated segment (``bench/gen_data.py``: ~100k Zipf-skewed keys, 15% tombstones, value size x
codec), in one process (one core for the compute; moto's server runs in its own process on the other core,
``--s3 process``, or in a thread of this one, ``--s3 thread``), each route does the whole job and is timed
end to end:

1. GET the segment object from S3;
2. compact it: Kafka's cleaner, one round over the partition whose log is that segment plus an empty active
   segment (``first_dirty`` 0, the upper bound = the active segment's base);
3. PUT the result to S3.

The kafka-segments routes read and clean as a lake round does (``pipeline.compaction.round``): the input
buffer and the decompression arena are allocated for each segment (``pipeline.compaction.sources``); no
buffer is reused across rounds (an earlier ``--fresh-memory`` switch chose between this and a reused buffer
and arena that no command uses; it went with issue 22). Fresh pages cost ~1 GB/s to touch on this VM.

Routes, run round-robin (each repeat runs every route once, so ratios compare runs made side by side; the
order rotates between repeats, so no route always follows the reference's heap churn):

* ``kafka-segments``: the segment read into the input buffer as a lake round reads the segments it decodes
  (``pipeline.compaction.sources.streamed_source``: one ``get_into`` pinned to the manifest entry's etag,
  ``If-Match``) while ``compaction.streamed.StreamedSegment`` decodes its batches (compressed ones into the
  arena), checks their CRC-32C and groups their keys as the chunks arrive; then the decoded headers are
  checked against the entry's offsets and counts, then
  ``compaction.clean_round`` (the offset map, MD5 key digests, column rebuild) and
  ``compaction.output.cleaned_segment_files`` (the ``.log`` plus the rebuilt ``.index`` and ``.timeindex``),
  the three PUT concurrently (one thread each).
* ``kafka-segments, read then compact``: the same without the overlap — the whole segment read first, as a
  lake round reads a segment it does not decode while reading (``pipeline.compaction.sources.plain_source``:
  ``lake.reader.read_segment``, the sha256 checked against the manifest entry's), then the round decodes
  it.
* ``kafka-python`` (the reference): ``store.get``, then a straightforward compactor — read every batch with
  ``kafka.record`` (``MemoryRecords``), a dict key -> latest offset, then every batch again, rebuilding the
  kept records with kafka-python's ``DefaultRecordBatchBuilder`` (same codec, base offset patched back); only
  the ``.log`` is PUT (``store.put``). It does less than Kafka's cleaner (no transactions, horizons, empty
  batches, indexes).

The S3 side: moto's server keeps every object in memory (``MOTO_S3_DEFAULT_KEY_BUFFER_SIZE``; by default
it spools objects over 5 MiB to a temporary file, disk work a real S3 does not charge its client).

MB/s is the segment's bytes *as stored* (compressed for lz4/zstd) divided by the route's total time, the
definition of Kafka's cleaner log line ("MB of log processed"). For kafka-segments the "GET" time includes
the decoding and key grouping that overlapped the transfer, and "compact" is the rest of the round. Numba
compilation and moto's start are excluded (every route is warmed up on a tiny segment first); the median of
``--repeats`` is reported, with the GET / compact / PUT split. Both outputs are checked: the same number of
retained keyed records as the generator's ground truth (its distinct keys), and every output batch read back
by kafka-python.

    .venv/bin/python bench/compaction_bench.py              # 6 segments of 1,000,000 records, 3 repeats
    .venv/bin/python bench/compaction_bench.py --quick      # 3,000 records, 100 B values, 1 repeat (seconds)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codec_bench import machine  # bench/ is sys.path[0] when run as a script
from gen_data import DATA_DIR, SegmentSpec, segment
from kafka_segments.compaction.output import cleaned_segment_files
from kafka_segments.compaction.rewrite import clean_round
from kafka_segments.compaction.source import SourceSegment
from kafka_segments.config.model import TopicConfig
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS, embedded_s3_server
from kafka_segments.lake.reader import read_segment as lake_read_segment
from kafka_segments.lake.scan import summarize_segment
from kafka_segments.pipeline.compaction.sources import streamed_source
from kafka_segments.state import SegmentEntry, SegmentOrigin
from kafka_segments.storage import S3Store

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.record.default_records import DefaultRecordBatchBuilder
    from kafka.record.memory_records import MemoryRecords

BUCKET = "compaction-bench"
NOW_MS = 1_800_000_000_000
LONG_MAX = 2**63 - 1
TARGETS_MB_S = {  # the point 11, per core, S3 to S3
    (1024, "none"): 400.0,
    (1024, "lz4"): 300.0,
    (1024, "zstd"): 100.0,
    (100, "none"): 300.0,
}


def topic_config() -> TopicConfig:
    """A compacted topic with Kafka's defaults, segments large enough to clean the segment in one group."""
    return TopicConfig(
        topic="bench",
        cleanup_policy=frozenset({"compact"}),
        retention_ms=-1,
        retention_bytes=-1,
        segment_bytes=2**31 - 1,
        segment_index_bytes=10 * 1024 * 1024,
        index_interval_bytes=4096,
        file_delete_delay_ms=60_000,
        delete_retention_ms=86_400_000,
        min_compaction_lag_ms=0,
        max_compaction_lag_ms=LONG_MAX,
        min_cleanable_dirty_ratio=0.5,
        message_timestamp_type="CreateTime",
        max_message_bytes=1_048_588,
        consumed_retention_enabled=False,
        consumed_retention_ms=-1,
        required_groups=(),
        producer_id_expiration_ms=86_400_000,
        offsets_retention_ms=604_800_000,
        cleaner_enabled=True,
    )


# --- the routes: bytes in, (output objects, retained records) out ---


SEGMENT_NAME = "00000000000000000000.log"


def kafka_segments_compact(
    data: bytes | memoryview | SourceSegment, records: int, config: TopicConfig
) -> tuple[dict[str, bytes], int]:
    """``data``: the segment's bytes, or the segment decoded while it was read."""
    first = data if isinstance(data, SourceSegment) else SourceSegment(SEGMENT_NAME, 0, data)
    segments = [first, SourceSegment("active", records, b"")]
    result = clean_round(segments, first_dirty=0, end_offset=records, config=config, now_ms=NOW_MS)
    (cleaned,) = result.segments
    files = cleaned_segment_files(cleaned, config)
    objects = {
        "cleaned.log": files.log,
        "cleaned.index": files.offset_index,
        "cleaned.timeindex": files.time_index,
    }
    return objects, result.records_retained


def kafka_python_compact(
    data: bytes | memoryview, records: int, config: TopicConfig
) -> tuple[dict[str, bytes], int]:
    """The straightforward compactor: two passes with kafka-python's reader, its builder for the output."""
    latest: dict[bytes, int] = {}
    reader = MemoryRecords(data)
    while (batch := reader.next_batch()) is not None:
        for record in batch:
            if record.key is not None:
                latest[record.key] = record.offset
    out: list[bytes] = []
    kept_total = 0
    reader = MemoryRecords(data)
    while (batch := reader.next_batch()) is not None:
        kept = [r for r in batch if r.key is not None and latest[r.key] == r.offset]
        if not kept:
            continue
        builder = DefaultRecordBatchBuilder(
            magic=2,
            compression_type=batch.compression_type,
            is_transactional=batch.is_transactional,
            producer_id=batch.producer_id,
            producer_epoch=batch.producer_epoch,
            base_sequence=batch.base_sequence,
            batch_size=2**31 - 1,
        )
        base = batch.base_offset
        for record in kept:
            builder.append(record.offset - base, record.timestamp, record.key, record.value, record.headers)
        built = builder.build()
        struct.pack_into(">q", built, 0, base)  # the builder writes base offset 0; the CRC does not cover it
        out.append(bytes(built))
        kept_total += len(kept)
    return {"cleaned.log": b"".join(out)}, kept_total


SEQUENTIAL = "kafka-segments, read then compact"
"""Our route without the overlap: the whole GET, then the round decodes (the route before streaming)."""

ROUTES: dict[str, Callable[[Any, int, TopicConfig], tuple[dict[str, bytes], int]]] = {
    "kafka-segments": kafka_segments_compact,
    SEQUENTIAL: kafka_segments_compact,
    "kafka-python": kafka_python_compact,
}


# --- one timed run ---


@dataclass(frozen=True)
class Sample:
    get_s: float
    compact_s: float
    put_s: float
    retained: int
    output_bytes: int

    @property
    def total_s(self) -> float:
        return self.get_s + self.compact_s + self.put_s


PUT_WORKERS = 4
MOTO_KEY_BUFFER_BYTES = 4 << 30
"""Objects up to this size stay in moto's memory (its default spools those over 5 MiB to a temporary file)."""
MOTO_MALLOC_ENV = {
    "MALLOC_ARENA_MAX": "1",
    "MALLOC_MMAP_MAX_": "0",
    "MALLOC_TRIM_THRESHOLD_": str(1 << 40),
}
"""glibc settings for moto's server process: every allocation from one heap that is never given back.

moto answers a GET with a copy of the whole object (``BytesIO.read()`` on a request thread) before its first
byte; by default glibc maps that copy afresh every time, so each GET of an 899 MB object page-faulted
~0.45 s of moto's time in before the response started (the client idle meanwhile), which a real S3 does not
charge its client. With these, the copy lands on pages the previous GET already touched: the first byte
after ~0.09 s instead of ~0.5 s. The compactor's process is not affected."""


def read_and_decode(store: S3Store, entry: SegmentEntry, config: TopicConfig) -> SourceSegment:
    """The segment read as a lake round reads the segments it decodes
    (``pipeline.compaction.sources.streamed_source``: the manifest's object version into a new buffer, its
    batches decoded into a new arena, their CRC-32C checked and their keys grouped between two chunks of the
    read)."""
    source = streamed_source(store, entry, max_batch_bytes=config.max_batch_decompressed_bytes)
    if source.decoded is None:
        raise SystemExit(f"{entry.key}: the streamed read fell back to a plain read")
    return source


def read_segment(store: S3Store, entry: SegmentEntry) -> bytes:
    """The segment, read and checked as the lake reads a segment it does not decode while reading (its
    sha256 against the manifest's: ``pipeline.compaction.sources.plain_source``)."""
    return lake_read_segment(store, entry)


def lake_entry(key: str, data: bytes, *, etag: str) -> SegmentEntry:
    """The manifest entry a lake would hold for the segment object ``key``, as adoption writes it
    (``lake.scan.summarize_segment``): what the kafka-segments routes check their reads against."""
    summary = summarize_segment(data, key=key, base_offset=0)
    return summary.entry(
        key=key,
        base_offset=0,
        etag=etag,
        last_modified_ms=NOW_MS,
        origin=SegmentOrigin.ADOPTED,
        run_id="bench",
    )


def put_objects(store: S3Store, route: str, key: str, objects: dict[str, bytes]) -> None:
    """The route's output objects: kafka-segments PUTs them concurrently, the reference one after another."""
    folder = route.replace(", ", "-").replace(" ", "-")
    keyed = {f"out/{folder}/{key}/{name}": body for name, body in objects.items()}
    if route != "kafka-python":
        with ThreadPoolExecutor(max_workers=PUT_WORKERS, thread_name_prefix="put") as pool:
            list(pool.map(lambda item: store.put(*item), keyed.items()))
        return
    for name, body in keyed.items():
        store.put(name, body)


def run_route(route: str, store: S3Store, entry: SegmentEntry, records: int, config: TopicConfig) -> Sample:
    key = entry.key
    t0 = time.perf_counter()
    if route == "kafka-segments":
        segment = read_and_decode(store, entry, config)
        t1 = time.perf_counter()
        objects, retained = kafka_segments_compact(segment, records, config)
    else:
        data = store.get(key) if route == "kafka-python" else read_segment(store, entry)
        t1 = time.perf_counter()
        objects, retained = ROUTES[route](data, records, config)
    t2 = time.perf_counter()
    put_objects(store, route, key, objects)
    t3 = time.perf_counter()
    return Sample(t1 - t0, t2 - t1, t3 - t2, retained, sum(len(b) for b in objects.values()))


def check_output(store: S3Store, route: str, key: str, expected_kept: int) -> None:
    """kafka-python reads every output batch (CRC checked) and finds the expected number of records."""
    folder = route.replace(", ", "-").replace(" ", "-")
    data = store.get(f"out/{folder}/{key}/cleaned.log")
    reader = MemoryRecords(data)
    count = 0
    while (batch := reader.next_batch()) is not None:
        if not batch.validate_crc():
            raise SystemExit(f"{route}: bad CRC in the output of {key}")
        count += sum(1 for _ in batch)
    if count != expected_kept:
        raise SystemExit(f"{route}: {count} records in the output of {key}, expected {expected_kept}")


# --- the bench ---


@contextmanager
def s3_store(mode: str = "process") -> Iterator[S3Store]:
    """moto's S3 server: in its own process on the other core (``process``: S3 is not on the compactor's
    core, as with a real S3), or a thread of this process (``thread``: as the project's tests run it)."""
    os.environ.setdefault("AWS_ACCESS_KEY_ID", EMBEDDED_CREDENTIALS["aws_access_key_id"])
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", EMBEDDED_CREDENTIALS["aws_secret_access_key"])
    if mode == "thread":
        with embedded_s3_server() as server:
            server.client().create_bucket(Bucket=BUCKET)
            yield S3Store(BUCKET, "bench", endpoint_url=server.endpoint_url, region=DEFAULT_REGION)
        return
    with moto_process() as endpoint:
        store = S3Store(BUCKET, "bench", endpoint_url=endpoint, region=DEFAULT_REGION)
        store.client().create_bucket(Bucket=BUCKET)
        yield store


@contextmanager
def moto_process(*, pin: bool = True) -> Iterator[str]:
    """``moto_server`` in a child process on the last CPU, this process on the others (``pin=False``: both
    where the scheduler puts them); yields its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = Path(sys.executable).with_name("moto_server")
    child = subprocess.Popen(
        [str(server), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={
            **os.environ,
            "MOTO_S3_DEFAULT_KEY_BUFFER_SIZE": str(MOTO_KEY_BUFFER_BYTES),
            **MOTO_MALLOC_ENV,
        },
    )
    cpus = sorted(os.sched_getaffinity(0))
    if pin and len(cpus) > 1:
        os.sched_setaffinity(child.pid, {cpus[-1]})
        os.sched_setaffinity(0, set(cpus[:-1]))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or child.poll() is not None:
                    raise SystemExit("moto_server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        child.terminate()
        child.wait(timeout=10)
        os.sched_setaffinity(0, set(cpus))


def bench_segment(
    store: S3Store,
    spec: SegmentSpec,
    data_dir: Path,
    repeats: int,
    config: TopicConfig,
    *,
    warm_ups: int = 1,
) -> dict[str, Any]:
    """``warm_ups`` untimed rounds of every route, then ``repeats`` timed ones. The first rounds over a new
    segment size are the first to touch buffers and columns of that size (the reused ones grow; page faults
    on this VM cost about as much as the transfer): up to 1.8x the steady time in the run before this was
    added (1 KiB none: 3.7 s, then 2.0 and 2.2 s).
    """
    seg = segment(spec, data_dir=data_dir)
    data = seg.path.read_bytes()
    key = seg.path.name
    entry = lake_entry(key, data, etag=store.put(key, data).etag)
    expected = seg.truth["distinct_keys"]
    samples: dict[str, list[Sample]] = {route: [] for route in ROUTES}
    names = list(ROUTES)
    for repeat in range(-warm_ups, repeats):
        for route in (
            names[repeat % len(names) :] + names[: repeat % len(names)]
        ):  # each route goes first once
            sample = run_route(route, store, entry, spec.records, config)
            if sample.retained != expected:
                raise SystemExit(f"{route} kept {sample.retained} records of {key}, expected {expected}")
            if repeat >= 0:  # the warm-up rounds are not timed
                samples[route].append(sample)
    for route in ROUTES:
        check_output(store, route, key, expected)
    label = f"{spec.value_size if spec.value_size < 1024 else '1 Ki'} B {spec.codec}".replace(
        "1 Ki B", "1 KiB"
    )
    result: dict[str, Any] = {
        "segment": label,
        "value_size": spec.value_size,
        "codec": spec.codec,
        "records": spec.records,
        "bytes": len(data),
        "retained": expected,
        "routes": {},
    }
    for route, runs in samples.items():
        median = {
            field: statistics.median(getattr(s, field) for s in runs)
            for field in ("get_s", "compact_s", "put_s", "total_s")
        }
        result["routes"][route] = {
            **median,
            "mb_per_s": len(data) / median["total_s"] / 1e6,
            "compute_mb_per_s": len(data) / median["compact_s"] / 1e6,
            "records_per_s": spec.records / median["total_s"],
            "output_bytes": runs[0].output_bytes,
            "totals_s": [s.total_s for s in runs],
        }
    ours, ref = result["routes"]["kafka-segments"], result["routes"]["kafka-python"]
    result["ratio"] = ref["total_s"] / ours["total_s"]
    full_size = spec.records == 1_000_000  # the targets are for 1,000,000-record segments
    result["target_mb_per_s"] = TARGETS_MB_S.get((spec.value_size, spec.codec)) if full_size else None
    return result


def warm_up(store: S3Store, data_dir: Path, config: TopicConfig) -> float:
    """Compile (or load) the numba kernels and open the HTTP connection: excluded from every number."""
    t0 = time.perf_counter()
    for codec in ("none", "lz4", "zstd"):
        seg = segment(SegmentSpec(records=500, value_size=100, codec=codec), data_dir=data_dir)
        data = seg.path.read_bytes()
        entry = lake_entry(f"warm-{codec}", data, etag=store.put(f"warm-{codec}", data).etag)
        for route in ROUTES:
            run_route(route, store, entry, 500, config)
    return time.perf_counter() - t0


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| segment | MB stored | kafka-segments MB/s (GET / compact / PUT s) | compute-only MB/s | M rec/s "
        "| read then compact MB/s (GET / compact / PUT s) | kafka-python MB/s | ratio | target |",
        "|---|---:|---|---:|---:|---|---:|---:|---:|",
    ]
    for r in results:
        ours, ref = r["routes"]["kafka-segments"], r["routes"]["kafka-python"]
        seq = r["routes"][SEQUENTIAL]
        target = r["target_mb_per_s"]
        verdict = (
            "–" if target is None else f"{target:,.0f} {'met' if ours['mb_per_s'] >= target else 'MISSED'}"
        )
        lines.append(
            f"| {r['segment']} | {r['bytes'] / 1e6:,.1f} | **{ours['mb_per_s']:,.0f}** "
            f"({ours['get_s']:.2f} / {ours['compact_s']:.2f} / {ours['put_s']:.2f}) "
            f"| {ours['compute_mb_per_s']:,.0f} | {ours['records_per_s'] / 1e6:.2f} "
            f"| {seq['mb_per_s']:,.0f} ({seq['get_s']:.2f} / {seq['compact_s']:.2f} / {seq['put_s']:.2f}) "
            f"| {ref['mb_per_s']:,.1f} | {r['ratio']:.1f}x | {verdict} |"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--value-sizes", default="100,1024")
    parser.add_argument("--codecs", default="none,lz4,zstd")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--json", type=Path, default=None, help="default: <data-dir>/compaction_bench.json")
    parser.add_argument("--quick", action="store_true", help="3,000 records, 100 B values, 1 repeat")
    parser.add_argument(
        "--s3",
        choices=("process", "thread"),
        default="process",
        help="moto's server in its own process on the other core (default) or in a thread of this one",
    )
    parser.add_argument(
        "--segment-warm-ups",
        type=int,
        default=1,
        help="untimed rounds of every route on each segment before the timed repeats",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.records, args.value_sizes, args.repeats, args.segment_warm_ups = 3_000, "100", 1, 0
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    config = topic_config()
    sizes = [int(v) for v in args.value_sizes.split(",")]
    codecs = args.codecs.split(",")
    results = []
    with s3_store(args.s3) as store:
        warm_s = warm_up(store, args.data_dir, config)
        for size in sizes:
            for codec in codecs:
                spec = SegmentSpec(records=args.records, value_size=size, codec=codec)
                results.append(
                    bench_segment(
                        store, spec, args.data_dir, args.repeats, config, warm_ups=args.segment_warm_ups
                    )
                )
                print(f"done: {results[-1]['segment']}", file=sys.stderr, flush=True)
    heading = (
        f"**Compaction, S3 (moto) to S3, per core** ({args.records:,} records per segment, median of "
        f"{args.repeats} after {args.segment_warm_ups} untimed round(s) per segment; "
        f"warm-up {warm_s:.1f} s excluded; "
        "buffers allocated per segment as a lake round does; "
        f"kafka-segments PUTs {PUT_WORKERS} at a time"
        f"{'; moto keeps objects in memory' if args.s3 == 'process' else ''})"
    )
    print(heading + "\n\n" + table(results))
    report = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "load_average": os.getloadavg(),
        "records": args.records,
        "repeats": args.repeats,
        "segment_warm_ups": args.segment_warm_ups,
        "warm_up_s": warm_s,
        "moto_key_buffer_bytes": MOTO_KEY_BUFFER_BYTES if args.s3 == "process" else None,
        "moto_malloc_env": MOTO_MALLOC_ENV if args.s3 == "process" else None,
        "results": results,
    }
    out = args.json or args.data_dir / "compaction_bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
