"""The shared test kit, for the tests of every folder: the tests' wall-clock start ``T0`` and a settable
clock, Kafka segments from the project's own writer and their upload under Kafka's names, a thread
``TaskRunner``, what a dry run must leave, the sizes ``LocalStore`` hashes, and stopping a server process a
test started.

Import as ``from kit import ...`` (``tests/`` is on the path, as for ``s3_fixtures``)."""

from __future__ import annotations

import hashlib
import subprocess
import types
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.files import FileKind, segment_file_name
from kafka_segments.segment.writer import SegmentFiles, write_segment
from kafka_segments.storage import ObjectStore, local
from kafka_segments.topic_partition import TopicPartition

T = TypeVar("T")
R = TypeVar("R")

T0 = 1_763_700_000_000
"""2025-11-21T04:40:00Z, the tests' default wall-clock start."""


class FakeClock:
    """Wall-clock milliseconds that only move when told to."""

    def __init__(self, start_ms: int = T0) -> None:
        self.now_ms = start_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, ms: int) -> int:
        self.now_ms += ms
        return self.now_ms


def make_segment(
    base_offset: int,
    *,
    batches: int = 3,
    records_per_batch: int = 2,
    timestamp_ms: int = T0,
    key_prefix: str = "k",
) -> SegmentFiles:
    """A segment of ``batches`` uncompressed batches starting at ``base_offset`` (keys ``k<offset>``)."""
    raw = []
    offset = base_offset
    for index in range(batches):
        records = [
            Record(offset + i, timestamp_ms + index, f"{key_prefix}{offset + i}".encode(), b"v" * 10)
            for i in range(records_per_batch)
        ]
        raw.append(build_batch(records, base_offset=offset))
        offset += records_per_batch
    return write_segment(raw, base_offset=base_offset)


def upload_segment(
    store: ObjectStore, topic_partition: TopicPartition, files: SegmentFiles, *, with_indexes: bool = True
) -> str:
    """Upload a segment under Kafka's plain names (as a sync of a broker's log directory would); returns the
    ``.log`` key."""
    directory = topic_partition.dir_name
    for name, data in files.files().items():
        if with_indexes or name.endswith(".log"):
            store.put(f"{directory}/{name}", data)
    return f"{directory}/{segment_file_name(files.base_offset, FileKind.LOG)}"


def upload_log(
    store: ObjectStore, topic_partition: TopicPartition, segments: Sequence[SegmentFiles]
) -> list[str]:
    return [upload_segment(store, topic_partition, files) for files in segments]


@dataclass(frozen=True, slots=True)
class ThreadRunner:
    """A ``TaskRunner`` on local threads: the cluster engine's fan-outs without a cluster (tests only)."""

    max_workers: int = 8
    name: str = "inline"

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        if self.max_workers == 1 or len(items) <= 1:
            return [fn(item) for item in items]
        with ThreadPoolExecutor(min(self.max_workers, len(items)), thread_name_prefix="run") as pool:
            return list(pool.map(fn, items))


def keys_outside_run(store: ObjectStore, run_id: str) -> list[str]:
    """The lake's keys, less what a run writes under its own names (its folder, its staged objects): what a
    dry run must leave as it was."""
    own_folder = f"_kafka_segments/runs/{run_id}/"
    return sorted(
        meta.key
        for meta in store.list()
        if not meta.key.startswith(own_folder) and f"-{run_id}." not in meta.key.rsplit("/", 1)[-1]
    )


def record_local_hashes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of what ``LocalStore`` hashes from now on (``hashlib.sha256(data)`` calls)."""
    sizes: list[int] = []

    def sha256(data: Any = b"") -> Any:
        sizes.append(len(data))
        return hashlib.sha256(data)

    monkeypatch.setattr(local, "hashlib", types.SimpleNamespace(sha256=sha256))
    return sizes


def stop_process(process: subprocess.Popen[bytes], *, timeout: float) -> None:
    """Stop a server process the test started (SIGTERM) and wait until it is gone; killed after ``timeout``
    seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
