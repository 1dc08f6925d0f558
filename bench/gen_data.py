"""Deterministic benchmark segments, written with the project's own ``build_batch``.

A segment is ``records`` v2 records at consecutive offsets from 0:

* keys ``key-%012d`` drawn from ``keys`` distinct keys with a bounded Zipf (s = 1.0) skew, hot keys
  scattered over the id space;
* ``tombstone_ratio`` of the records have a null value; the others a JSON-like text value of exactly
  ``value_size`` bytes (repeated field names, a 500-word vocabulary, numbers);
* CreateTime timestamps of about +1 ms per record with a little jitter (so some deltas are negative);
* producer-sized batches: records are added to a batch until its records stream would pass
  ``batch_bytes`` uncompressed bytes (like a producer's ``batch.size``), then compressed with ``codec``.

Files are cached under ``bench/data/`` (git-ignored), named by every parameter, with a ``.json`` sidecar
holding the ground truth (records, batches, tombstones, distinct keys). Run it directly to pre-generate:

    .venv/bin/python bench/gen_data.py --records 1000000 --value-size 100 --codec lz4
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record

DATA_DIR = Path(__file__).resolve().parent / "data"
CODECS = {"none": CompressionType.NONE, "lz4": CompressionType.LZ4, "zstd": CompressionType.ZSTD}
BASE_TIMESTAMP = 1_700_000_000_000
RECORD_OVERHEAD_ESTIMATE = 12  # length, attributes, deltas, key/value lengths, header count


@dataclass(frozen=True, slots=True)
class SegmentSpec:
    records: int = 1_000_000
    value_size: int = 100
    codec: str = "none"
    keys: int = 100_000
    tombstone_ratio: float = 0.15
    batch_bytes: int = 16_384
    seed: int = 20261121

    @property
    def name(self) -> str:
        return (
            f"seg-r{self.records}-v{self.value_size}-k{self.keys}-t{self.tombstone_ratio:g}"
            f"-b{self.batch_bytes}-s{self.seed}-{self.codec}"
        )

    @property
    def label(self) -> str:
        size = f"{self.value_size} B" if self.value_size < 1024 else f"{self.value_size // 1024} KiB"
        return f"{size} {self.codec}"


@dataclass(frozen=True, slots=True)
class Segment:
    spec: SegmentSpec
    path: Path
    truth: dict[str, int]

    def read(self) -> bytes:
        return self.path.read_bytes()


def segment(spec: SegmentSpec, *, data_dir: Path = DATA_DIR) -> Segment:
    """The cached segment for ``spec``, generated on first use."""
    path = data_dir / f"{spec.name}.log"
    sidecar = path.with_suffix(".json")
    if not (path.exists() and sidecar.exists()):
        data_dir.mkdir(parents=True, exist_ok=True)
        data, truth = build_segment(spec)
        _write_atomically(path, data)
        _write_atomically(sidecar, json.dumps({"spec": asdict(spec), "truth": truth}, indent=2).encode())
    truth = json.loads(sidecar.read_text())["truth"]
    return Segment(spec, path, truth)


def build_segment(spec: SegmentSpec) -> tuple[bytes, dict[str, int]]:
    """The segment bytes and their ground truth (deterministic for a given spec)."""
    if spec.codec not in CODECS:
        raise ValueError(f"unknown codec {spec.codec!r}; choose from {sorted(CODECS)}")
    rng = np.random.default_rng(spec.seed)
    weights = 1.0 / np.arange(1, spec.keys + 1)
    ranks = rng.choice(spec.keys, size=spec.records, p=weights / weights.sum())
    key_ids = rng.permutation(spec.keys)[ranks]
    tombstones = rng.random(spec.records) < spec.tombstone_ratio
    jitter = rng.integers(-3, 4, size=spec.records)
    values = _values(rng, spec)

    batches: list[bytes] = []
    pending: list[Record] = []
    pending_bytes = 0
    for i in range(spec.records):
        key = b"key-%012d" % key_ids[i]
        value = None if tombstones[i] else values[i]
        size = len(key) + (len(value) if value is not None else 0) + RECORD_OVERHEAD_ESTIMATE
        if pending and pending_bytes + size > spec.batch_bytes:
            batches.append(build_batch(pending, compression=CODECS[spec.codec]))
            pending, pending_bytes = [], 0
        pending.append(Record(i, BASE_TIMESTAMP + i + int(jitter[i]), key, value))
        pending_bytes += size
    if pending:
        batches.append(build_batch(pending, compression=CODECS[spec.codec]))
    truth = {
        "records": spec.records,
        "batches": len(batches),
        "tombstones": int(tombstones.sum()),
        "distinct_keys": len(np.unique(key_ids)),
    }
    return b"".join(batches), truth


def _values(rng: np.random.Generator, spec: SegmentSpec) -> list[bytes]:
    """Exactly ``value_size`` bytes of JSON-like text per record."""
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    vocabulary = [
        letters[rng.integers(0, 26, size=int(rng.integers(3, 10)))].tobytes().decode() for _ in range(500)
    ]
    corpus = " ".join(vocabulary[j] for j in rng.integers(0, 500, size=200_000))
    users = rng.integers(0, 500, size=spec.records)
    events = rng.integers(0, 500, size=spec.records)
    scores = rng.integers(0, 100_000, size=spec.records)
    starts = rng.integers(0, len(corpus) - spec.value_size, size=spec.records)
    out = []
    for i in range(spec.records):
        head = (
            f'{{"id":{i},"user":"{vocabulary[users[i]]}","event":"{vocabulary[events[i]]}",'
            f'"score":{scores[i] / 100:.2f},"text":"'
        )
        room = max(spec.value_size - len(head) - 2, 0)
        text = corpus[starts[i] : starts[i] + room]
        out.append((head + text + '"}').encode()[: spec.value_size].ljust(spec.value_size, b" "))
    return out


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=SegmentSpec.records)
    parser.add_argument("--value-size", type=int, default=SegmentSpec.value_size)
    parser.add_argument("--codec", choices=sorted(CODECS), default="none")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    args = parser.parse_args()
    started = time.perf_counter()
    seg = segment(
        SegmentSpec(records=args.records, value_size=args.value_size, codec=args.codec),
        data_dir=args.data_dir,
    )
    elapsed = time.perf_counter() - started
    print(f"{seg.path} ({seg.path.stat().st_size:,} bytes, {seg.truth}) in {elapsed:.1f} s")


if __name__ == "__main__":
    main()
