"""Compression codecs as Kafka frames them (``clients/.../common/compress``).

* gzip: one standard GZIP member.
* snappy: xerial snappy-java stream framing (``SnappyOutputStream``): a 16-byte header (magic
  ``\\x82SNAPPY\\0``, int32 version 1, int32 min-compatible version 1), then ``[int32 length][raw block]``
  repeated, blocks of at most 32 KiB uncompressed. A stream without the header is one raw snappy block.
* lz4: the LZ4 frame format with independent blocks, 64 KiB maximum block size, no block or content checksum
  and no content size (Kafka's Java reader requires independent blocks).
* zstd: zstd frames without a content size, as Java's streaming compressor writes them.
"""

from __future__ import annotations

import gzip
import struct
import zlib

import cramjam
import lz4.frame
import zstandard

from kafka_segments.errors import UnsupportedCodecError
from kafka_segments.records.attributes import CompressionType

Buffer = bytes | bytearray | memoryview

XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = struct.Struct(">8sii")  # magic, version, min compatible version
XERIAL_BLOCK_LENGTH = struct.Struct(">i")
XERIAL_BLOCK_SIZE = 32 * 1024

ZSTD_LEVEL = 3


def compress(codec: CompressionType, data: Buffer, *, magic: int = 2) -> bytes:
    """Compress a records stream the way Kafka's producer and log cleaner do for ``codec``."""
    if codec == CompressionType.NONE:
        return bytes(data)
    if codec == CompressionType.GZIP:
        return gzip.compress(bytes(data), mtime=0)
    if codec == CompressionType.SNAPPY:
        return _xerial_compress(data)
    if codec == CompressionType.LZ4:
        return bytes(
            lz4.frame.compress(
                bytes(data),
                block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                block_linked=False,
                content_checksum=False,
                store_size=False,
            )
        )
    if codec == CompressionType.ZSTD:
        if magic < 2:
            raise UnsupportedCodecError("zstd is only valid in record batches of magic 2")
        compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compressobj()
        return compressor.compress(bytes(data)) + compressor.flush()
    raise UnsupportedCodecError(f"unknown compression codec id {int(codec)}")


def decompress(codec: CompressionType, data: Buffer, *, magic: int = 2) -> bytes:
    """Decompress a records stream of ``codec``.

    Raises:
        UnsupportedCodecError: the codec id is unknown, or zstd in a legacy message.
        ValueError: the compressed stream is damaged (callers wrap it with the location).
    """
    if codec == CompressionType.NONE:
        return bytes(data)
    if codec == CompressionType.GZIP:
        try:
            return gzip.decompress(bytes(data))
        except (OSError, EOFError, zlib.error) as exc:
            raise ValueError(f"invalid gzip stream: {exc}") from exc
    if codec == CompressionType.SNAPPY:
        return _xerial_decompress(data)
    if codec == CompressionType.LZ4:
        try:
            return bytes(lz4.frame.decompress(bytes(data)))
        except RuntimeError as exc:
            raise ValueError(f"invalid lz4 frame: {exc}") from exc
    if codec == CompressionType.ZSTD:
        if magic < 2:
            raise UnsupportedCodecError("zstd is only valid in record batches of magic 2")
        try:
            return bytes(zstandard.ZstdDecompressor().decompressobj().decompress(bytes(data)))
        except zstandard.ZstdError as exc:
            raise ValueError(f"invalid zstd frame: {exc}") from exc
    raise UnsupportedCodecError(f"unknown compression codec id {int(codec)}")


def _xerial_compress(data: Buffer) -> bytes:
    view = memoryview(data)
    out = [XERIAL_HEADER.pack(XERIAL_MAGIC, 1, 1)]
    for start in range(0, len(view), XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + XERIAL_BLOCK_SIZE]))
        out.append(XERIAL_BLOCK_LENGTH.pack(len(block)))
        out.append(block)
    return b"".join(out)


def _xerial_decompress(data: Buffer) -> bytes:
    view = memoryview(data)
    try:
        if bytes(view[: len(XERIAL_MAGIC)]) != XERIAL_MAGIC:
            return bytes(cramjam.snappy.decompress_raw(bytes(view)))
        pos = XERIAL_HEADER.size
        out = []
        while pos < len(view):
            if pos + XERIAL_BLOCK_LENGTH.size > len(view):
                raise ValueError("xerial snappy stream ends inside a block length")
            (length,) = XERIAL_BLOCK_LENGTH.unpack_from(view, pos)
            pos += XERIAL_BLOCK_LENGTH.size
            if length < 0 or pos + length > len(view):
                raise ValueError(f"xerial snappy block of {length} bytes runs past the stream")
            out.append(bytes(cramjam.snappy.decompress_raw(bytes(view[pos : pos + length]))))
            pos += length
        return b"".join(out)
    except cramjam.DecompressionError as exc:
        raise ValueError(f"invalid snappy data: {exc}") from exc
