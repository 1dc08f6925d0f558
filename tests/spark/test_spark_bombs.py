"""Issue 38, point 1 through Spark, on S3 and in byte spans: a segment of bombs each under the limit reads
whole (Arrow batches of at most 64 MiB of values or one record reach the JVM), and a bomb past the limit
inside a span fails the Spark task with the library's named error (``DecompressionLimitError``, the object,
byte position and offset), not a JVM memory error; and the peak RSS of the Python worker over a task reading
a segment of such bombs does not grow with their number and stays within a Spark task's budget (docs/lake.md,
"Bad input and faults") plus a fixed overhead, above the same task over small records. The peak is measured
from inside the task (``VmHWM`` after resetting it at the task's start), through a test subclass of the
source: the library itself has no hook for it."""

from __future__ import annotations

import os
import struct
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from kafka_segments.lake import begin_run, stage_segment
from kafka_segments.reading import plan_read
from kafka_segments.reading.tasks import SegmentTask
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.files import FileKind
from kafka_segments.segment.writer import write_segment
from kafka_segments.storage import LocalStore
from kit import FakeClock
from reading.split_helpers import TP, commit_events, commit_partition, event_batches
from s3_fixtures import new_s3_store
from spark_source import register
from spark_source.data_source import KafkaSegmentsDataSource, LakeReader
from unit.bad_batches import zstd_bomb

if TYPE_CHECKING:
    from kafka_segments.demo import EmbeddedS3
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.spark

TS = 1_763_700_000_000
BOMB = 40 << 20


def bombs(count: int, *, first: int) -> list[bytes]:
    one = build_batch([Record(0, TS, b"k", bytes(BOMB))], compression=CompressionType.ZSTD)
    return [struct.pack(">q", first + i) + one[8:] for i in range(count)]


def test_bombs_in_spans_through_spark(spark: SparkSession, s3_server: EmbeddedS3) -> None:
    register(spark)
    store = new_s3_store(s3_server)
    events = event_batches(3, count=40)
    last = 1 + max(struct.unpack_from(">q", b)[0] + struct.unpack_from(">i", b, 23)[0] for b in events)
    under = bombs(4, first=last)
    past = zstd_bomb(300 << 20, base_offset=last + 4)
    # the first segment (split in spans of 2000 bytes) ends with the bombs under the limit; the second is
    # the one past it
    commit_events(store, [*events, *under, past], cut=len(events) + 4, log_start=0, clock=FakeClock())
    uri = store.describe().rstrip("/")

    def frame(ending: int) -> Any:
        return (
            spark.read.format("kafka-segments")
            .option("lake", uri)
            .option("subscribe", TP.topic)
            .option("maxBytesPerPartition", "2000")
            .option("endingOffsets", f'{{"{TP.topic}": {{"0": {ending}}}}}')
            .load()
        )

    counted = frame(last + 4).where(f"offset >= {last}").selectExpr("count(*)", "sum(length(value))")
    assert counted.collect()[0][:] == (4, 4 * BOMB)
    with pytest.raises(Exception, match="DecompressionLimitError") as caught:
        frame(last + 5).where(f"offset >= {last}").selectExpr("sum(length(value))").collect()
    assert f"at byte 0 (offset {last + 4}): zstd records inflate past the decompression limit" in str(
        caught.value
    )
    assert "OutOfDirectMemoryError" not in str(caught.value)


PIECE = 64 << 20
"""``records.fast.pieces.PIECE_BYTES``: a reader's piece (one bomb of 40 MiB is within it)."""
OVERHEAD = 64 << 20
"""What a task may cost beyond its budget: a decompression step's output, Arrow's and malloc's slack."""
GROWTH = 3 * BOMB
"""How much the peak may differ between 4 and 8 bombs: the allocators' noise (up to about 55 MiB seen).
Unbounded, 4 more bombs add 4 to 10 bombs' size."""
CLEAR_REFS = "/proc/self/clear_refs"
RESET_PEAK = "5"
"""Written to ``CLEAR_REFS``: sets the process's peak RSS (``VmHWM``) to its current RSS (Linux 4.0)."""


def peak_source(out: Path, warm_lake: str, warm: tuple[SegmentTask, ...]) -> type[KafkaSegmentsDataSource]:
    """The library's source as ``kafka-segments-peak``, whose tasks write the peak RSS of their Python
    worker over the task to a file in ``out``. Each task first reads ``warm`` (tiny tasks of ``warm_lake``,
    through the same decoder), so the imports and the numba kernels a fresh worker loads are not counted,
    then resets the peak. Defined in a function, so pickled by value to the workers (which import only the
    library and ``spark_source``)."""

    class PeakReader(LakeReader):
        def read(self, partition: Any) -> Iterator[Any]:
            import ctypes
            import gc

            import pyarrow as pa
            from kafka_segments.reading.segment_read import read_task
            from spark_source.data_source import worker_store

            for task in warm:
                for _ in read_task(worker_store(warm_lake), task, include_headers=False):
                    pass
            gc.collect()  # what earlier tasks freed goes back to the system: the peak is this task's
            pa.default_memory_pool().release_unused()
            trim = getattr(ctypes.CDLL(None), "malloc_trim", None)  # glibc's
            if trim is not None:
                trim(0)
            Path(CLEAR_REFS).write_text(RESET_PEAK)
            yield from super().read(partition)
            status = Path("/proc/self/status").read_text()
            kib = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
            (out / f"{os.getpid()}-{uuid.uuid4().hex}").write_text(str(int(kib) << 10))

    class PeakSource(KafkaSegmentsDataSource):
        @classmethod
        def name(cls) -> str:
            return "kafka-segments-peak"

        def reader(self, schema: Any) -> LakeReader:
            return PeakReader(self._read_options())

    return PeakSource


def bomb_lake(path: Path, batches: list[bytes]) -> str:
    """A local lake of one segment of ``batches`` from offset 0; its URI."""
    store = LocalStore(path)
    clock = FakeClock()
    run, base = begin_run(store, now_ms=clock(), operation="test", clock=clock)
    files = {FileKind.LOG: write_segment(batches, base_offset=0).log}
    entry = stage_segment(store, run, topic_partition=TP, base_offset=0, files=files, clock=clock)
    commit_partition(store, run, base, TP, [entry], clock=clock)
    return str(path)


def test_a_spark_task_over_bombs_holds_a_bounded_amount(spark: SparkSession, tmp_path: Path) -> None:
    """A segment of 4, then 8 bombs of 40 MiB in one task: the Python worker's peak does not grow with
    their number and stays within a Spark task's budget (docs/lake.md, "Bad input and faults"): four times
    the larger of a piece and the largest batch (the piece, the Arrow batch made of it, the batch before it
    that Spark's loops still hold, its copy written to the JVM), plus ``OVERHEAD``, above the same task over
    8 small records. Before the reader was bounded it held every batch's records and their Arrow batch."""
    if not os.access(CLEAR_REFS, os.W_OK):
        pytest.skip(f"{CLEAR_REFS} is not writable here: the peak cannot be reset")
    register(spark)
    small = [build_batch([Record(i, TS, b"k", b"v")], compression=CompressionType.ZSTD) for i in range(8)]
    warm_uri = bomb_lake(tmp_path / "warm", small[:1])
    warm = tuple(plan_read(LocalStore(tmp_path / "warm"), {"subscribe": TP.topic}).tasks)
    peaks = {}
    for name, batches in (("control", small), ("4", bombs(4, first=0)), ("8", bombs(8, first=0))):
        out = tmp_path / name
        out.mkdir()
        spark.dataSource.register(peak_source(out, warm_uri, warm))
        uri = bomb_lake(tmp_path / f"{name} lake", batches)
        frame = spark.read.format("kafka-segments-peak").options(lake=uri, subscribe=TP.topic).load()
        counted = frame.selectExpr("count(*)", "sum(length(value))").collect()[0][:]
        assert counted == ((8, 8) if name == "control" else (len(batches), len(batches) * BOMB))
        (peaks[name],) = (int(path.read_text()) for path in out.iterdir())  # one task
    mib = {name: peak >> 20 for name, peak in peaks.items()}
    assert abs(peaks["8"] - peaks["4"]) < GROWTH, f"peak RSS grows with the bombs (MiB): {mib}"
    assert peaks["8"] < peaks["control"] + 4 * PIECE + OVERHEAD, f"peak RSS past budget (MiB): {mib}"
