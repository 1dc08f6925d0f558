"""zstd frames as Kafka writes them (issue 21, point 4).

Kafka's ``MemoryRecordsBuilder`` writes records through ``DataOutputStream(BufferedOutputStream(16 KiB,
ZstdOutputStreamNoFinalizer))`` (``ZstdCompression.wrapForOutput``). zstd-jni feeds every write with
``ZSTD_e_continue``, so a block is compressed each time 128 KiB of input have come in, however the writes were
cut. Closing the builder's stream flushes before it closes: ``ZSTD_e_flush`` compresses the rest as a block
that is not the last, then ``ZSTD_e_end`` has no input left and ends the frame with an empty raw last block
(3 bytes). zstd's one-call end would mark the rest's block as the last one instead, 3 bytes shorter: that was
every rebuilt zstd batch's difference from Kafka's cleaner.

The expected frames here are built by that rule from the frame zstd ends in one call (same blocks; the last
data block's Last_Block bit cleared and the empty raw block appended), and checked against a batch Kafka
itself wrote (``tests/data/compression/kafka-zstd-batch.log``).
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.batch import RECORDS_OFFSET
from kafka_segments.records.compression import compress, decompress
from kafka_segments.records.log import scan_headers

pytestmark = pytest.mark.unit

KAFKA_BATCHES = Path(__file__).resolve().parents[1] / "data" / "compression" / "kafka-zstd-batch.log"
BLOCK = 128 * 1024  # zstd's largest block: ZSTD_BLOCKSIZE_MAX
JAVA_BUFFER = 16 * 1024  # the BufferedOutputStream in front of zstd-jni
EMPTY_RAW_LAST_BLOCK = bytes.fromhex("010000")  # Last_Block 1, Block_Type 0 (raw), Block_Size 0
RAW, RLE = 0, 1
CROSSING_SIZES = [
    1,
    100,
    JAVA_BUFFER - 1,
    JAVA_BUFFER,
    JAVA_BUFFER + 1,
    BLOCK - 1,
    BLOCK,
    BLOCK + 1,
    2 * BLOCK,
    2 * BLOCK + 5,
    300_000,
]


def text_like(size: int, seed: int) -> bytes:
    """Compressible, record-like bytes (words, numbers, now and then a binary byte)."""
    rng = random.Random(seed)
    words = [b"kafka", b"segment", b"offset", b"key-", b"value", b"compaction", b"\n"]
    out = bytearray()
    while len(out) < size:
        out += rng.choice(words) if rng.random() < 0.8 else b"%d" % rng.randrange(1_000_000)
        out += b" " if rng.random() < 0.95 else bytes([rng.randrange(256)])
    return bytes(out[:size])


def blocks(frame: bytes) -> Iterator[tuple[int, int, int, int]]:
    """``(header position, last, type, size)`` of every block of one zstd frame without a checksum."""
    descriptor = frame[4]
    single_segment = (descriptor >> 5) & 1
    pos = 5 + (0 if single_segment else 1)  # frame header descriptor, window descriptor
    pos += (0, 1, 2, 4)[descriptor & 3]  # dictionary id
    pos += (single_segment, 2, 4, 8)[descriptor >> 6]  # frame content size
    while True:
        (header,) = struct.unpack("<I", frame[pos : pos + 3] + b"\0")
        last, kind, size = header & 1, (header >> 1) & 3, header >> 3
        yield pos, last, kind, size
        pos += 3 + (1 if kind == RLE else size)
        if last:
            assert pos == len(frame), "bytes after the last block"
            return


def kafka_frame_by_the_rule(data: bytes) -> bytes:
    """The frame zstd writes when the end comes with the last data (``ZSTD_e_end`` with input left), turned
    into Kafka's: that data block loses its Last_Block bit and an empty raw block ends the frame. A frame
    whose input ended on a block boundary already ends with the empty raw block and stays as it is."""
    stream = zstandard.ZstdCompressor(level=3, write_content_size=False).compressobj()
    one_call = stream.compress(data) + stream.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH)
    pos, _, kind, size = list(blocks(one_call))[-1]
    if kind == RAW and size == 0:
        return one_call
    cleared = bytes([one_call[pos] & 0xFE])
    return one_call[:pos] + cleared + one_call[pos + 1 :] + EMPTY_RAW_LAST_BLOCK


@pytest.mark.parametrize("size", CROSSING_SIZES)
def test_zstd_frame_is_built_as_kafka_builds_it(size: int) -> None:
    data = text_like(size, seed=size)
    assert compress(CompressionType.ZSTD, data) == kafka_frame_by_the_rule(data)


@pytest.mark.parametrize("size", CROSSING_SIZES)
def test_zstd_frame_has_a_block_per_128_kib_and_an_empty_raw_last_block(size: int) -> None:
    frame = compress(CompressionType.ZSTD, text_like(size, seed=size))
    shape = [(last, kind, length) for _, last, kind, length in blocks(frame)]
    assert shape[-1] == (1, RAW, 0)
    assert [last for last, _, _ in shape[:-1]] == [0] * (len(shape) - 1)
    assert len(shape) - 1 == -(-size // BLOCK)  # one data block per started 128 KiB of input


def test_zstd_frame_of_incompressible_blocks_keeps_them_raw_and_open() -> None:
    data = random.Random(4).randbytes(BLOCK + 1000)
    shape = [(last, kind, length) for _, last, kind, length in blocks(compress(CompressionType.ZSTD, data))]
    assert shape == [(0, RAW, BLOCK), (0, RAW, 1000), (1, RAW, 0)]


def kafka_zstd_batches() -> Iterator[tuple[int, bytes]]:
    """``(base offset, records stream)`` of every zstd batch of the Kafka-written segment."""
    data = KAFKA_BATCHES.read_bytes()
    for header in scan_headers(data, verify_crc=True):
        if header.compression == CompressionType.ZSTD:
            start = header.position + RECORDS_OFFSET
            yield header.base_offset, data[start : header.position + header.size_in_bytes]


def test_a_batch_kafka_wrote_is_rebuilt_byte_for_byte() -> None:
    batches = list(kafka_zstd_batches())
    assert batches, "the Kafka-written segment holds no zstd batch"
    for base, stream in batches:
        assert compress(CompressionType.ZSTD, decompress(CompressionType.ZSTD, stream)) == stream, base
