"""A lake of several multi-hour segments for the timestamp-narrowing tests: one partition of batches whose
timestamps move forward about one hour per ``batches_per_hour`` batches but are not ordered (CreateTime
records up to ``late_ms`` older than the clock, a few from the future), some LogAppendTime batches, each
segment staged with its ``.index`` (dense, so a small ``maxBytesPerPartition`` splits it) and, unless left
out, its ``.timeindex``."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial

from kafka_segments.lake import (
    begin_run,
    stage_segment,
)
from kafka_segments.lake.time_pin import time_floor
from kafka_segments.reading import plan_read
from kafka_segments.reading.pushdown import Narrowing
from kafka_segments.records.attributes import CompressionType, TimestampType
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.files import FileKind
from kafka_segments.segment.writer import write_segment
from kafka_segments.state import Manifest
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock
from pyspark.sql.datasource import GreaterThanOrEqual, LessThan

from reading.split_helpers import RangeRecordingStore, commit_partition, rows, task_rows

TP = TopicPartition("clicks", 0)
HOUR_MS = 3_600_000
INDEX_INTERVAL = 512
CODECS = (CompressionType.NONE, CompressionType.NONE, CompressionType.GZIP, CompressionType.ZSTD)


def click_batches(
    seed: int, *, hours: int, batches_per_hour: int = 40, late_ms: int = 20 * 60_000
) -> list[bytes]:
    """Batches from offset 0 whose clock moves ``hours`` hours forward (see the module docstring)."""
    rng = random.Random(seed)
    batches: list[bytes] = []
    offset = 0
    for step in range(hours * batches_per_hour):
        clock = T0 + step * HOUR_MS // batches_per_hour
        size = rng.randint(1, 6)
        if rng.random() < 0.15:  # the broker's time for every record; the records' own times are ignored
            records = [_record(rng, offset + i, T0 - HOUR_MS) for i in range(size)]
            batch = build_batch(records, timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=clock)
        else:
            jitter = (
                (lambda: rng.randint(0, 2 * HOUR_MS))
                if rng.random() < 0.02
                else (lambda: -rng.randint(0, late_ms))
            )
            records = [_record(rng, offset + i, clock + jitter()) for i in range(size)]
            batch = build_batch(records, compression=rng.choice(CODECS))
        batches.append(batch)
        offset += size
    return batches


def _record(rng: random.Random, offset: int, timestamp: int) -> Record:
    value = None if rng.random() < 0.05 else rng.randbytes(rng.randint(20, 120))
    return Record(offset, timestamp, f"k{rng.randrange(50)}".encode(), value)


def commit_clicks(
    store: ObjectStore,
    batches: Sequence[bytes],
    *,
    cuts: Sequence[int],
    time_index: Callable[[int], bool] = lambda segment: True,
) -> Manifest:
    """Commit ``batches`` as segments cut before each batch number of ``cuts``, each with its ``.index`` and,
    where ``time_index(segment number)``, its ``.timeindex``."""
    clock = FakeClock()
    run, base = begin_run(store, now_ms=clock(), operation="test", clock=clock)
    bounds = [0, *cuts, len(batches)]
    entries = []
    for number, (first, end) in enumerate(itertools.pairwise(bounds)):
        files = write_segment(batches[first:end], index_interval_bytes=INDEX_INTERVAL)
        kinds = {FileKind.LOG: files.log, FileKind.INDEX: files.offset_index}
        if time_index(number):
            kinds[FileKind.TIME_INDEX] = files.time_index
        entries.append(
            stage_segment(
                store, run, topic_partition=TP, base_offset=files.base_offset, files=kinds, clock=clock
            )
        )
    return commit_partition(store, run, base, TP, entries, clock=clock)


def as_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def all_rows(store: ObjectStore) -> list[dict[str, object]]:
    return rows(store, {"subscribe": TP.topic})


def in_window(found: list[dict[str, object]], low_ms: int, high_ms: int) -> list[dict[str, object]]:
    """The rows ``low_ms <= timestamp < high_ms`` keeps, as Spark applies the filter."""
    low, high = as_datetime(low_ms), as_datetime(high_ms)
    return [row for row in found if low <= row["timestamp"] < high]  # type: ignore[operator]


def pushed_read(
    store: ObjectStore, low_ms: int, high_ms: int, *, max_bytes: int, time_index: bool = True
) -> tuple[list[dict[str, object]], int]:
    """The rows a Spark read with ``timestamp >= low AND timestamp < high`` pushed down gets (the plan
    narrowed as ``LakeReader.partitions`` narrows it, with or without the time index, then the filter
    applied), and the ``.log`` bytes its tasks read."""
    plan = plan_read(store, {"subscribe": TP.topic, "maxBytesPerPartition": str(max_bytes)})
    narrowing = Narrowing().with_filter(GreaterThanOrEqual(("timestamp",), as_datetime(low_ms)))
    narrowing = narrowing.with_filter(LessThan(("timestamp",), as_datetime(high_ms)))
    floor_of = partial(time_floor, store) if time_index else None
    tasks = narrowing.narrow(plan.tasks, records_too=True, floor_of=floor_of)
    recording = RangeRecordingStore(store)
    return in_window(task_rows(recording, tasks), low_ms, high_ms), recording.log_bytes
