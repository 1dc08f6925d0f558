"""Codec benchmark: the columnar hot path (``kafka_segments.records.fast``) against kafka-python's reader.

For every generated segment (``bench/gen_data.py``: value size x codec), in one process on one core, with
the methods run round-robin so each ratio compares runs made side by side:

* header scan: every batch header of the segment (batches/s). kafka-segments: ``scan_header_table``
  (numba) and ``scan_headers`` (pure Python); kafka-python: ``MemoryRecords.next_batch()`` reading the
  base offset, last offset delta, max timestamp, attributes and record count.
* full decode: every record's offset, key, tombstone flag and timestamp (records/s, and MB/s of segment
  bytes as stored). kafka-segments: ``decode_record_columns(verify_crc=False)`` (keys stay spans of the
  returned buffer), the same decompressing into one reused ``arena``, and the same with CRC verification;
  kafka-python: iterate every batch's records reading ``offset``, ``key``, ``value is None``,
  ``timestamp``.
* CRC: CRC-32C verification of every batch (MB/s of segment bytes). kafka-segments:
  ``scan_header_table(verify_crc=True)``; kafka-python: ``batch.validate_crc()`` for every batch.

Each number is the median of ``--repeats`` runs. Numba compilation is excluded (every method is warmed up
on the segment first) and reported separately: a cold compile and a cache load measured in fresh
subprocesses, plus the first call of this process.

    .venv/bin/python bench/codec_bench.py                 # the full run (a few minutes)
    .venv/bin/python bench/codec_bench.py --quick         # a smoke run on tiny segments
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from gen_data import DATA_DIR, SegmentSpec, segment  # bench/ is sys.path[0] when run as a script
from kafka.record.memory_records import MemoryRecords
from kafka_segments.records.fast import decode_record_columns, scan_header_table
from kafka_segments.records.log import scan_headers

TARGET_SCAN_BATCHES_PER_S = 1.5e6
TARGET_DECODE_RATIO = 25.0  # uncompressed 100 B records, vs kafka-python
TARGET_CRC_BYTES_PER_S = 5e9

COMPILE_PROBE = """
import json, sys, time
t0 = time.perf_counter()
from kafka_segments.records.builder import build_batch
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.record import Record
import kafka_segments.records.fast as fast
t1 = time.perf_counter()
data = b"".join(build_batch([Record(i, 0, b"k", b"v")], compression=c) for i, c in enumerate(CompressionType))
fast.scan_header_table(data)
t2 = time.perf_counter()
fast.decode_record_columns(data)
fast.decode_record_columns(data).key_hash64()
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "scan_first_call_s": t2 - t1, "decode_first_call_s": t3 - t2}))
"""


# --- the methods ---


def kp_scan(data: bytes) -> int:
    records = MemoryRecords(data)
    batches = 0
    while (batch := records.next_batch()) is not None:
        _ = (batch.base_offset, batch.last_offset_delta, batch.max_timestamp, batch.attributes)
        _ = batch.records_count
        batches += 1
    return batches


def kp_decode(data: bytes) -> int:
    records = MemoryRecords(data)
    count = 0
    while (batch := records.next_batch()) is not None:
        for record in batch:
            _ = (record.offset, record.key, record.value is None, record.timestamp)
            count += 1
    return count


def kp_crc(data: bytes) -> int:
    records = MemoryRecords(data)
    batches = 0
    while (batch := records.next_batch()) is not None:
        if not batch.validate_crc():
            raise ValueError(f"kafka-python finds a bad CRC in batch {batches}")
        batches += 1
    return batches


def fast_scan(data: bytes) -> int:
    return len(scan_header_table(data))


def py_scan(data: bytes) -> int:
    return sum(1 for _ in scan_headers(data))


def fast_decode(data: bytes) -> int:
    return len(decode_record_columns(data, verify_crc=False))


_ARENAS: dict[int, np.ndarray] = {}


def fast_decode_arena(data: bytes) -> int:
    """The decode with one arena reused across calls (what a worker decoding many segments does)."""
    arena = _ARENAS.setdefault(len(data), np.empty(4 * len(data), dtype=np.uint8))
    return len(decode_record_columns(data, verify_crc=False, arena=arena))


def fast_decode_crc(data: bytes) -> int:
    return len(decode_record_columns(data, verify_crc=True))


def fast_crc(data: bytes) -> int:
    return len(scan_header_table(data, verify_crc=True))


METHODS: dict[str, Callable[[bytes], int]] = {
    "scan/numba": fast_scan,
    "scan/python": py_scan,
    "scan/kafka-python": kp_scan,
    "decode/numba": fast_decode,
    "decode-arena/numba": fast_decode_arena,
    "decode+crc/numba": fast_decode_crc,
    "decode/kafka-python": kp_decode,
    "crc/numba": fast_crc,
    "crc/kafka-python": kp_crc,
}


# --- measuring ---


def check(data: bytes, truth: dict[str, int]) -> None:
    """The decoders agree with the generator's ground truth before anything is timed."""
    columns = decode_record_columns(data)
    found = {
        "records": len(columns),
        "batches": len(columns.batches),
        "tombstones": int(columns.is_tombstone.sum()),
        "distinct_keys": len(np.unique(columns.key_hash64())),
    }
    if found != truth:
        raise SystemExit(f"kafka-segments decoded {found}, the generator wrote {truth}")
    if kp_decode(data) != truth["records"] or kp_scan(data) != truth["batches"]:
        raise SystemExit("kafka-python does not read the generated segment completely")


def measure(data: bytes, repeats: int, methods: dict[str, Callable[[bytes], int]]) -> dict[str, list[float]]:
    """Seconds per run of every method, run round-robin (after one warm-up run each)."""
    for method in methods.values():
        method(data)
    samples: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(repeats):
        for name, method in methods.items():
            started = time.perf_counter()
            method(data)
            samples[name].append(time.perf_counter() - started)
    return samples


def compile_probe() -> dict[str, dict[str, float]]:
    """First-call costs in fresh processes: a cold compile (empty cache), then a cache load."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("cold_compile", "cache_load"):
            result = subprocess.run(
                [sys.executable, "-c", COMPILE_PROBE], env=env, capture_output=True, text=True, check=True
            )
            out[label] = json.loads(result.stdout)
    return out


def machine() -> dict[str, Any]:
    cpu = "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    import kafka
    import numba

    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "numba": numba.__version__,
        "numpy": np.__version__,
        "kafka-python": kafka.__version__,
        "platform": platform.platform(),
    }


# --- reporting ---


def summarize(
    spec: SegmentSpec, size: int, truth: dict[str, int], samples: dict[str, list[float]]
) -> dict[str, Any]:
    median = {name: statistics.median(values) for name, values in samples.items()}
    batches, records = truth["batches"], truth["records"]
    return {
        "segment": spec.label,
        "spec": spec.name,
        "bytes": size,
        "batches": batches,
        "records": records,
        "median_s": median,
        "samples_s": samples,
        "scan_batches_per_s": {
            name: batches / median[f"scan/{name}"] for name in ("numba", "python", "kafka-python")
        },
        "decode_records_per_s": {
            "numba": records / median["decode/numba"],
            "numba-arena": records / median["decode-arena/numba"],
            "numba+crc": records / median["decode+crc/numba"],
            "kafka-python": records / median["decode/kafka-python"],
        },
        "crc_bytes_per_s": {name: size / median[f"crc/{name}"] for name in ("numba", "kafka-python")},
    }


def _met(ok: bool) -> str:
    return "met" if ok else "**not met**"


def markdown(results: list[dict[str, Any]], compile_times: dict[str, Any], repeats: int) -> str:
    lines = [f"Medians of {repeats} runs per method, one process, one core.", ""]
    lines += [
        "**Header scan** (every batch header; batches/s; target ≥ 1.5 M batches/s)",
        "",
        "| segment | MB | batches | numba | Python `scan_headers` | kafka-python | numba / kafka-python "
        "| target |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        s = r["scan_batches_per_s"]
        lines.append(
            f"| {r['segment']} | {r['bytes'] / 1e6:,.1f} | {r['batches']:,} | {s['numba'] / 1e6:.2f} M | "
            f"{s['python'] / 1e6:.2f} M | {s['kafka-python'] / 1e6:.3f} M | "
            f"{s['numba'] / s['kafka-python']:,.0f}x | {_met(s['numba'] >= TARGET_SCAN_BATCHES_PER_S)} |"
        )
    lines += [
        "",
        "**Full decode** to offset, key, tombstone, timestamp (records/s; MB/s of segment bytes as stored; "
        "target for 100 B uncompressed: ≥ 25x kafka-python)",
        "",
        "| segment | records | numba | numba MB/s | numba, reused arena | numba + CRC | kafka-python "
        "| kafka-python MB/s | numba / kafka-python (fresh · reused arena) | target |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        d = r["decode_records_per_s"]
        ratio = d["numba"] / d["kafka-python"]
        mb = r["bytes"] / r["records"] / 1e6
        target = "-"
        if r["segment"] == "100 B none":
            target = _met(ratio >= TARGET_DECODE_RATIO)
        lines.append(
            f"| {r['segment']} | {r['records']:,} | {d['numba'] / 1e6:.2f} M | {d['numba'] * mb:,.0f} | "
            f"{d['numba-arena'] / 1e6:.2f} M | {d['numba+crc'] / 1e6:.2f} M | "
            f"{d['kafka-python'] / 1e6:.3f} M | {d['kafka-python'] * mb:,.0f} | "
            f"{ratio:,.1f}x · {d['numba-arena'] / d['kafka-python']:,.1f}x | {target} |"
        )
    lines += [
        "",
        "**CRC-32C verification** of every batch (GB/s of segment bytes; target ≥ 5 GB/s)",
        "",
        "| segment | MB | numba path (`crc32c` pkg) | kafka-python `validate_crc` | ratio | target |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in results:
        c = r["crc_bytes_per_s"]
        lines.append(
            f"| {r['segment']} | {r['bytes'] / 1e6:,.1f} | {c['numba'] / 1e9:.2f} | "
            f"{c['kafka-python'] / 1e9:.2f} | {c['numba'] / c['kafka-python']:.1f}x | "
            f"{_met(c['numba'] >= TARGET_CRC_BYTES_PER_S)} |"
        )
    lines += ["", "**Numba compilation** (excluded from the throughput above)", ""]
    lines += [
        "| | import `fast` | first `scan_header_table` | first `decode_record_columns` |",
        "|---|---:|---:|---:|",
    ]
    for label, times in compile_times.items():
        imported = "-" if math.isnan(times["import_s"]) else f"{times['import_s']:.2f} s"
        lines.append(
            f"| {label.replace('_', ' ')} | {imported} | {times['scan_first_call_s']:.2f} s | "
            f"{times['decode_first_call_s']:.2f} s |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=1_000_000, help="records per segment")
    parser.add_argument("--value-sizes", default="100,1024", help="comma-separated value sizes in bytes")
    parser.add_argument("--codecs", default="none,lz4,zstd", help="comma-separated: none, lz4, zstd")
    parser.add_argument("--repeats", type=int, default=3, help="runs per method (the median is reported)")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="where generated segments are cached")
    parser.add_argument(
        "--json", type=Path, default=None, help="write all samples here (default: in --data-dir)"
    )
    parser.add_argument("--no-compile-probe", action="store_true", help="skip the cold-compile subprocesses")
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 3,000 records, 1 repeat, no compile probe"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.records, args.repeats, args.value_sizes, args.no_compile_probe = 3_000, 1, "100", True

    started = time.perf_counter()
    warm = segment(SegmentSpec(records=10, codec="lz4"), data_dir=args.data_dir).read()
    t0 = time.perf_counter()
    scan_header_table(warm)
    t1 = time.perf_counter()
    decode_record_columns(warm).key_hash64()
    t2 = time.perf_counter()
    compile_times: dict[str, Any] = {
        "this_process": {
            "import_s": float("nan"),
            "scan_first_call_s": t1 - t0,
            "decode_first_call_s": t2 - t1,
        }
    }
    if not args.no_compile_probe:
        compile_times = {**compile_probe(), **compile_times}

    results = []
    for value_size in (int(v) for v in args.value_sizes.split(",")):
        for codec in args.codecs.split(","):
            spec = SegmentSpec(records=args.records, value_size=value_size, codec=codec)
            seg = segment(spec, data_dir=args.data_dir)
            data = seg.read()
            check(data, seg.truth)
            samples = measure(data, args.repeats, METHODS)
            results.append(summarize(spec, len(data), seg.truth, samples))
            print(f"measured {spec.label} ({len(data) / 1e6:,.1f} MB)", file=sys.stderr)
            del data

    report = markdown(results, compile_times, args.repeats)
    print(report)
    out = args.json or args.data_dir / ("codec_bench_quick.json" if args.quick else "codec_bench.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "command": " ".join([sys.executable, *sys.argv]),
                "machine": machine(),
                "config": {k: str(v) for k, v in vars(args).items()},
                "compile": compile_times,
                "results": results,
                "elapsed_s": time.perf_counter() - started,
            },
            indent=2,
        )
    )
    print(f"\nJSON: {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
