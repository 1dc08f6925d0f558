"""Issue 38, point 1 through Spark, on S3 and in byte spans: a segment of bombs each under the limit reads
whole (Arrow batches of at most 64 MiB of values or one record reach the JVM), and a bomb past the limit
inside a span fails the Spark task with the library's named error (``DecompressionLimitError``, the object,
byte position and offset), not a JVM memory error."""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

import pytest
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kit import FakeClock
from reading.split_helpers import TP, commit_events, event_batches
from s3_fixtures import new_s3_store
from spark_source import register
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
