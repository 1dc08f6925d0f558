"""Issue 20, point 4: decompression with a limit. Every codec refuses a stream inflating past ``max_size``
(``DecompressedSizeError``) and returns the same bytes as without a limit otherwise; the fast decode refuses
such a batch with ``DecompressionLimitError`` naming the segment, byte position and offset, after the damage
of earlier batches, without decompressing a bomb whole."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pytest
from kafka_segments.errors import CorruptRecordError, DecompressionLimitError
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.batch import RECORDS_OFFSET
from kafka_segments.records.builder import build_batch
from kafka_segments.records.compression import batch_decompressors, compress, decompress
from kafka_segments.records.decompressed_size import DecompressedSizeError
from kafka_segments.records.fast import decode_record_columns
from kafka_segments.records.record import Record
from unit.bad_batches import gzip_bomb, records, zstd_bomb

CODECS = [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD]
DATA = bytes(range(256)) * 700 + b"tail" * 5000
NAME = "orders-0/00000000000000000000.log"


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@pytest.mark.parametrize("streams", [1, 3], ids=["one-stream", "concatenated"])
def test_a_limit_at_the_size_changes_nothing_and_one_below_refuses(
    codec: CompressionType, streams: int
) -> None:
    stream = compress(codec, DATA)
    if codec in (CompressionType.GZIP, CompressionType.ZSTD):  # members / frames may be concatenated
        stream = stream * streams
    else:
        streams = 1
    size = len(DATA) * streams
    assert decompress(codec, stream, max_size=size) == decompress(codec, stream) == DATA * streams
    with pytest.raises(DecompressedSizeError, match=f"past the decompression limit of {size - 1} bytes"):
        decompress(codec, stream, max_size=size - 1)


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
def test_batch_decompressors_apply_the_limit(codec: CompressionType) -> None:
    stream = np.frombuffer(compress(codec, DATA), dtype=np.uint8)
    starts, ends = np.array([0], dtype=np.int64), np.array([len(stream)], dtype=np.int64)
    codecs = np.array([int(codec)], dtype=np.int16)
    (fits,) = batch_decompressors(codecs, stream, starts, ends, max_size=len(DATA))
    (tight,) = batch_decompressors(codecs, stream, starts, ends, max_size=len(DATA) - 1)
    assert fits is not None
    assert tight is not None
    assert fits(stream.tobytes()) == DATA
    with pytest.raises(DecompressedSizeError):
        tight(stream.tobytes())


@pytest.mark.parametrize(
    ("bomb", "inflated"),
    [(zstd_bomb, 1 << 30), (gzip_bomb, 64 << 20)],
    ids=["zstd-1GiB", "gzip-64MiB"],
)
def test_a_bomb_is_refused_at_its_batch_without_inflating_it(
    bomb: Callable[..., bytes], inflated: int
) -> None:
    first = build_batch(records(0, 2))
    data = first + bomb(inflated, base_offset=2)
    started = time.perf_counter()
    with pytest.raises(DecompressionLimitError) as info:
        decode_record_columns(data, segment=NAME, max_batch_bytes=8 << 20)
    assert time.perf_counter() - started < 5  # inflating 1 GiB takes longer (and the memory)
    error = info.value
    assert (error.segment, error.position, error.offset, error.limit) == (NAME, len(first), 2, 8 << 20)
    assert "past the decompression limit of 8388608 bytes" in str(error)
    assert "kafka_segments.compaction.max.batch.decompressed.bytes" in str(error)


def test_damage_of_an_earlier_batch_is_reported_first() -> None:
    damaged = bytearray(build_batch(records(0, 2), compression=CompressionType.ZSTD))
    damaged[RECORDS_OFFSET + 8] ^= 0xFF  # its zstd stream, CRC not verified below
    data = bytes(damaged) + zstd_bomb(1 << 26, base_offset=2)
    with pytest.raises(CorruptRecordError) as info:
        decode_record_columns(data, segment=NAME, verify_crc=False, max_batch_bytes=1 << 20)
    assert type(info.value) is CorruptRecordError
    assert info.value.position == 0


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
def test_batches_under_the_limit_decode_as_without_it(codec: CompressionType) -> None:
    batch = [Record(i, 1_700_000_000_000 + i, b"k%d" % i, b"v" * 300) for i in range(40)]
    data = build_batch(batch, compression=codec) + build_batch(records(40, 3))
    limited = decode_record_columns(data, segment=NAME, max_batch_bytes=40 * 400)
    assert limited.to_records() == decode_record_columns(data, segment=NAME).to_records()
    with pytest.raises(DecompressionLimitError):
        decode_record_columns(data, segment=NAME, max_batch_bytes=40 * 300)
