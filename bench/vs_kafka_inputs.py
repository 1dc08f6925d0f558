"""The inputs of ``vs_kafka_cleaner.py``: Kafka log directories of one partition (``t-0``), each written once
into the data folder and reused by later runs.

* ``oracle genlog`` (Kafka's own ``MemoryRecordsBuilder``; needs the launcher ``KAFKA_ORACLE`` names):
  ``RECORDS`` records, key ``key-%08d`` of ``(i * 7919) % DISTINCT``, one batch per ~16 KiB of values;
* kafka-python's ``DefaultRecordBatchBuilder`` (a client library's producer framing, no oracle needed): the
  same keys, timestamps and batch sizing, values of pseudo-random words (fixed seed);
* ``transactional``: the same records, written by one transactional producer in Kafka's own framing (as a
  Java producer writes Kafka Streams' exactly-once changelogs: ``kafka_segments.records.build_batch``, whose
  LZ4 frames are ``KafkaLZ4BlockOutputStream``'s): every ``TXN_BATCHES`` batches a transaction ends with its
  marker (``build_end_transaction_marker``), every ``ABORT_EVERY``-th aborted.

In both, the last record (key ``active``) is alone in the last segment, the active one, so every other
segment is cleanable; segments roll at ``SEGMENT_BYTES``; every file gets the mtime ``T0_MS``."""

from __future__ import annotations

import os
import random
import shutil
import struct
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.record.default_records import DefaultRecordBatchBuilder

TOPIC = "t"
PARTITION = f"{TOPIC}-0"
T0_MS = 1_790_000_000_000
NOW_MS = T0_MS + 24 * 3_600_000
"""A day after the first record: every record is past ``min.compaction.lag.ms`` (0) and the delete horizon."""
SEGMENT_BYTES = 1 << 30
"""Kafka's default ``segment.bytes`` (1 GiB), given to both sides."""
BATCH_VALUE_BYTES = 16 * 1024
TXN_PRODUCER = 4242
TXN_BATCHES = 10
ABORT_EVERY = 10
CODEC_IDS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@dataclass(frozen=True)
class InputSpec:
    """One input log: ``builder`` is ``genlog`` (Kafka's), ``kafka-python`` or ``transactional``."""

    records: int
    value_bytes: int
    codec: str
    builder: str

    @property
    def distinct_keys(self) -> int:
        return max(1, self.records // 5)

    @property
    def label(self) -> str:
        size = "1 KiB" if self.value_bytes == 1024 else f"{self.value_bytes} B"
        suffix = "" if self.builder == "genlog" else f" ({self.builder})"
        return f"{size} {self.codec}{suffix}"

    @property
    def folder(self) -> str:
        return f"{self.builder}-{self.records}-{self.value_bytes}-{self.codec}"


def _set_mtimes(log_dir: Path) -> None:
    for path in log_dir.rglob("*"):
        if path.is_file():
            os.utime(path, (T0_MS // 1000, T0_MS // 1000))


def input_dir(spec: InputSpec, data_dir: Path, *, launcher: str | None, cwd: Path) -> Path:
    """The log directory of ``spec`` (``<dir>/t-0/*.log``), built if it is not there yet."""
    log_dir = data_dir / spec.folder
    if (log_dir / ".complete").exists():
        return log_dir
    shutil.rmtree(log_dir, ignore_errors=True)
    partition = log_dir / PARTITION
    if spec.builder == "genlog":
        if launcher is None:
            raise SystemExit(f"{spec.label}: oracle genlog needs KAFKA_ORACLE")
        args = [launcher, "genlog", str(partition), str(spec.records), str(spec.value_bytes), spec.codec]
        args += [str(spec.distinct_keys), str(SEGMENT_BYTES), str(T0_MS)]
        done = subprocess.run(args, capture_output=True, text=True, cwd=cwd, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    else:
        write_kafka_python_log(spec, partition)
    _set_mtimes(log_dir)
    (log_dir / ".complete").write_text("")
    return log_dir


def _values(value_bytes: int, count: int, seed: int = 22) -> list[bytes]:
    """``count`` distinct values of pseudo-random words and numbers, exactly ``value_bytes`` long."""
    rng = random.Random(seed)
    words = ["order", "customer", "status", "shipped", "amount", "region", "west", "east", "sku", "note"]
    values = []
    for _ in range(count):
        text = " ".join(f"{rng.choice(words)}={rng.randrange(10**6)}" for _ in range(value_bytes // 8 + 1))
        values.append(text.encode()[:value_bytes])
    return values


def _batch(codec: str, base: int, records: list[tuple[int, bytes, bytes]], *, sequence: int = -1) -> bytes:
    """A batch of ``records`` (offset, key, value): kafka-python's, or with ``sequence`` >= 0 the
    transactional producer's in Kafka's framing."""
    if sequence >= 0:
        return _transactional_batch(codec, records, sequence)
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=CODEC_IDS[codec],
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=2**31 - 1,
    )
    for offset, timestamp, key, value in ((o, T0_MS + o // 1000, k, v) for o, k, v in records):
        builder.append(offset - base, timestamp, key, value, [])
    built = builder.build()
    struct.pack_into(">q", built, 0, base)  # the builder writes base offset 0; the CRC does not cover it
    return bytes(built)


def write_kafka_python_log(spec: InputSpec, partition: Path) -> None:
    """``spec.records`` records as genlog lays them out, framed by kafka-python's builder."""
    partition.mkdir(parents=True, exist_ok=True)
    values = _values(spec.value_bytes, 997)
    per_batch = max(1, BATCH_VALUE_BYTES // spec.value_bytes)
    txn = spec.builder == "transactional"
    segment_base, segment, offset, number = 0, bytearray(), 0, -1
    last = spec.records - 1  # the last record's index: alone in the active segment
    for number, first in enumerate(range(0, last, per_batch)):
        indexes = range(first, min(first + per_batch, last))
        keyed = [
            (offset + n, b"key-%08d" % ((i * 7919) % spec.distinct_keys), values[i % len(values)])
            for n, i in enumerate(indexes)
        ]
        batches = [(offset, _batch(spec.codec, offset, keyed, sequence=first if txn else -1))]
        offset += len(keyed)
        if txn and (number + 1) % TXN_BATCHES == 0:
            batches.append((offset, _marker(offset, aborted=(number + 1) // TXN_BATCHES % ABORT_EVERY == 0)))
            offset += 1
        for base, batch in batches:
            if segment and len(segment) + len(batch) > SEGMENT_BYTES:
                (partition / f"{segment_base:020d}.log").write_bytes(segment)
                segment_base, segment = base, bytearray()
            segment += batch
    if txn and (number + 1) % TXN_BATCHES:
        segment += _marker(offset, aborted=False)
        offset += 1
    (partition / f"{segment_base:020d}.log").write_bytes(segment)
    active = _batch(spec.codec, offset, [(offset, b"active", values[0])])
    (partition / f"{offset:020d}.log").write_bytes(active)


def _transactional_batch(codec: str, records: list[tuple[int, bytes, bytes]], sequence: int) -> bytes:
    from kafka_segments.records import CompressionType, Record, build_batch

    return build_batch(
        [Record(o, T0_MS + o // 1000, key, value) for o, key, value in records],
        compression=CompressionType(CODEC_IDS[codec]),
        producer_id=TXN_PRODUCER,
        producer_epoch=0,
        base_sequence=sequence,
        is_transactional=True,
    )


def _marker(offset: int, *, aborted: bool) -> bytes:
    """The end of the transactional producer's transaction at ``offset``: ABORT or COMMIT."""
    from kafka_segments.records import ControlRecordType, EndTransactionMarker, build_end_transaction_marker

    kind = ControlRecordType.ABORT if aborted else ControlRecordType.COMMIT
    return build_end_transaction_marker(
        EndTransactionMarker(kind, 0),
        offset=offset,
        timestamp=T0_MS + offset // 1000,
        producer_id=TXN_PRODUCER,
        producer_epoch=0,
    )


def fresh_copy(log_dir: Path, target: Path) -> Path:
    """A copy of ``log_dir`` (mtimes kept) at ``target``, replacing what was there."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(log_dir, target, copy_function=shutil.copy2, ignore=shutil.ignore_patterns(".complete"))
    return target
