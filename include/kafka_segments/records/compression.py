"""Compression codecs as Kafka frames them (``clients/.../common/compress``), read as Kafka's readers read
them (docs/fidelity.md, "What Kafka's readers accept"):

* gzip: one member with ``GZIPOutputStream``'s header (no flags, mtime 0, XFL 0, OS 255), zlib level 6
  (``Deflater.DEFAULT_COMPRESSION``); read as the JDK's ``GZIPInputStream`` reads it (``gzip_stream``).
* snappy: xerial snappy-java framing (``SnappyOutputStream``: 16-byte header, then ``[int32 length][raw
  block]`` per 32 KiB); read as ``SnappyInputStream`` does: no magic means one raw block, a header where a
  block length is due starts a concatenated stream (a bad one is passed over), fewer than 4 bytes left end it.
* lz4: Kafka's LZ4 frame (``lz4_frame``, with its magic 0 quirk).
* zstd: frames without a content size as zstd-jni writes them for ``MemoryRecordsBuilder`` (level 3;
  ``_zstd_compress``); read as zstd-jni's ``ZstdInputStreamNoFinalizer`` reads them: concatenated frames,
  with or without a content size, and after the last one an incomplete frame that gave no data is ignored
  when it was read with the end of that frame (``_zstd_tail_ignored``). Only valid in magic 2.

``max_size``: a stream that would inflate past it raises ``DecompressedSizeError`` once at most a bounded
amount past the limit was produced, whatever the ratio (gzip: ``max_length``; zstd: slices small enough that
even its largest ratio cannot overshoot by more than a block; snappy and lz4, whose ratios are bounded, block
by block). Damage is a ``ValueError`` (callers add the location)."""

from __future__ import annotations

import functools
import struct
import threading
from collections.abc import Callable

import cramjam
import numpy as np
import numpy.typing as npt
import zstandard

from kafka_segments.errors import UnsupportedCodecError
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.decompressed_size import check_size
from kafka_segments.records.gzip_stream import gzip_deflate, gzip_inflate
from kafka_segments.records.lz4_frame import (
    kafka_lz4_frame,
    lz4_checked_frame,
    lz4_compress,
    lz4_decompress,
    lz4_descriptors_ok,
)

Buffer = bytes | bytearray | memoryview

XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = struct.Struct(">8sii")  # magic, version, min compatible version
XERIAL_VERSION = 1
XERIAL_BLOCK_LENGTH = struct.Struct(">i")
XERIAL_BLOCK_SIZE = 32 * 1024
XERIAL_MAGIC_HEAD = XERIAL_BLOCK_LENGTH.unpack(XERIAL_MAGIC[:4])[0]  # a block length that starts a header

ZSTD_LEVEL = 3
ZSTD_SOURCE_BUFFER = zstandard.DECOMPRESSION_RECOMMENDED_INPUT_SIZE
"""``ZSTD_DStreamInSize()`` (128 KiB and a block header): zstd-jni reads its input this much at a time."""

ZSTD_MAX_RATIO = 32_768
"""Output bytes per input byte zstd can reach at most (a 128 KiB RLE block costs 4 bytes)."""
ZSTD_SLICES_PER_BUDGET = 8
"""A slice may inflate to at most 1/8 of the remaining budget: the output held at once stays near the
budget (the output so far plus one slice's)."""
ZSTD_MIN_SLICE = 64

MAX_INFLATED_BATCH_BYTES = 256 << 20
"""The most bytes one compressed batch (or legacy wrapper) may inflate to when a caller sets no other limit:
every decode of records is bounded by it (dump, inspect, reading, offsets, the cleaner), so a decompression
bomb is one named error, never memory without bound. The cleaner's is a config setting
(``kafka_segments.compaction.max.batch.decompressed.bytes``, docs/configuration.md) with this default."""

_threads = threading.local()  # per-thread zstd contexts: zstandard objects must not be shared by threads


def compress(codec: CompressionType | int, data: Buffer, *, magic: int = 2) -> bytes:
    """Compress a records stream (or legacy inner message set) the way Kafka does for ``codec``.

    Raises:
        UnsupportedCodecError: the codec id is unknown, or zstd below magic 2.
    """
    if codec == CompressionType.NONE:
        return bytes(data)
    if codec == CompressionType.GZIP:
        return gzip_deflate(data)
    if codec == CompressionType.SNAPPY:
        return _xerial_compress(data)
    if codec == CompressionType.LZ4:
        return lz4_compress(data, magic)
    if codec == CompressionType.ZSTD:
        _check_zstd_magic(magic)
        return _zstd_compress(data)
    raise UnsupportedCodecError(f"unknown compression codec id {int(codec)}")


def compressor(codec: CompressionType | int) -> Callable[[Buffer], bytes]:
    """``compress(codec, data)`` of v2 records streams as one function, resolved once for per-batch callers
    (for LZ4, the frame compressor itself)."""
    if codec == CompressionType.LZ4:
        return kafka_lz4_frame
    return functools.partial(compress, codec)


def decompress(
    codec: CompressionType | int, data: Buffer, *, magic: int = 2, max_size: int | None = None
) -> bytes:
    """Decompress a records stream of ``codec``.

    Raises:
        UnsupportedCodecError: the codec id is unknown, or zstd below magic 2.
        DecompressedSizeError: the stream inflates past ``max_size`` bytes (a ``ValueError``).
        ValueError: the compressed stream is damaged (callers wrap it with the location).
    """
    if codec == CompressionType.NONE:
        return bytes(data)
    if codec == CompressionType.GZIP:
        return _gzip_decompress(data, max_size)
    if codec == CompressionType.SNAPPY:
        return _xerial_decompress(data, max_size)
    if codec == CompressionType.LZ4:
        return _bounded_lz4(data, magic, max_size)
    if codec == CompressionType.ZSTD:
        _check_zstd_magic(magic)
        return _zstd_decompress(data, max_size)
    raise UnsupportedCodecError(f"unknown compression codec id {int(codec)}")


def decompress_buffer(
    codec: CompressionType | int, data: Buffer, *, max_size: int | None
) -> bytes | bytearray:
    """``decompress(codec, data, max_size=max_size)`` of a v2 records stream, the output of gzip and zstd
    not copied out of the buffer it was inflated into (the columnar decoder copies it into its arena: the
    copy would hold the batch's records twice)."""
    if codec == CompressionType.GZIP:
        return gzip_inflate(data, max_size)
    if codec == CompressionType.ZSTD:
        return _zstd_buffer(data, max_size)
    return decompress(codec, data, max_size=max_size)


def batch_decompressors(
    codecs: npt.NDArray[np.integer],
    array: npt.NDArray[np.uint8],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    *,
    max_size: int | None = None,
) -> list[Callable[[Buffer], bytes | bytearray] | None]:
    """For each v2 records stream (codec ``codecs[i]``, bytes ``array[starts[i]:ends[i]]``), the function
    that decompresses it exactly as ``decompress(codec, data)`` does, with the codec resolved once per
    segment instead of once per batch; ``None`` for uncompressed.

    LZ4 frames whose magic number and descriptor are checked here over columns (``lz4_descriptors_ok``:
    the same rules as ``lz4_frame``'s descriptor check) skip the per-frame Python check; the others take the
    checked path, which raises what it raises. ``max_size``: as ``decompress``'s (every function then checks
    its output; the unchecked LZ4 frame path is taken only without a limit).
    """
    general: dict[int, Callable[[Buffer], bytes | bytearray]] = {
        int(CompressionType.GZIP): functools.partial(gzip_inflate, limit=max_size),
        int(CompressionType.SNAPPY): functools.partial(_xerial_decompress, limit=max_size),
        int(CompressionType.LZ4): functools.partial(_bounded_lz4, magic=2, limit=max_size),
        int(CompressionType.ZSTD): functools.partial(_zstd_buffer, limit=max_size),
    }
    codes = codecs.astype(np.int64)
    checked = lz4_descriptors_ok(array, starts, ends) & (codes == CompressionType.LZ4)
    out: list[Callable[[Buffer], bytes | bytearray] | None] = []
    for code, fast in zip(codes.tolist(), checked.tolist(), strict=True):
        if code == CompressionType.NONE:
            out.append(None)
        elif fast and max_size is None:
            out.append(lz4_checked_frame)
        else:
            out.append(general.get(code) or functools.partial(decompress, code, max_size=max_size))
    return out


def _check_zstd_magic(magic: int) -> None:
    if magic < 2:
        raise UnsupportedCodecError(f"zstd is only valid in record batches of magic 2, not magic {magic}")


# gzip ------------------------------------------------------------------------------------------------------


def _gzip_decompress(data: Buffer, limit: int | None = None) -> bytes:
    return bytes(gzip_inflate(data, limit))


# snappy (xerial framing) -----------------------------------------------------------------------------------


def _xerial_compress(data: Buffer) -> bytes:
    view = memoryview(data)
    parts: list[Buffer | cramjam.Buffer] = [XERIAL_HEADER.pack(XERIAL_MAGIC, XERIAL_VERSION, XERIAL_VERSION)]
    for start in range(0, len(view), XERIAL_BLOCK_SIZE):
        block = cramjam.snappy.compress_raw(view[start : start + XERIAL_BLOCK_SIZE])
        parts.append(XERIAL_BLOCK_LENGTH.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _xerial_decompress(data: Buffer, limit: int | None = None) -> bytes:
    view = memoryview(data)
    if len(view) == 0:
        raise ValueError("invalid snappy stream: it is empty")
    try:
        if len(view) < XERIAL_HEADER.size or view[: len(XERIAL_MAGIC)] != XERIAL_MAGIC:
            whole = bytes(cramjam.snappy.decompress_raw(view))  # no xerial header: one raw snappy block
            check_size("snappy", len(whole), limit)
            return whole
        parts = []
        produced = 0
        pos = XERIAL_HEADER.size
        end = len(view)
        while pos + XERIAL_BLOCK_LENGTH.size <= end:  # fewer bytes than a block length end the stream
            (length,) = XERIAL_BLOCK_LENGTH.unpack_from(view, pos)
            if length == XERIAL_MAGIC_HEAD:  # a concatenated stream's header, or what is read as one
                if pos + XERIAL_HEADER.size > end:
                    raise ValueError(f"invalid snappy stream: a cut stream header at byte {pos}")
                pos += XERIAL_HEADER.size  # a bad one ends one read of SnappyInputStream, the next goes on
                continue
            pos += XERIAL_BLOCK_LENGTH.size
            if length <= 0 or pos + length > end:
                raise ValueError(
                    f"invalid snappy stream: block length {length} at byte {pos - 4} "
                    f"(only {end - pos} bytes follow)"
                )
            parts.append(cramjam.snappy.decompress_raw(view[pos : pos + length]))
            produced += len(parts[-1])
            check_size("snappy", produced, limit)
            pos += length
        return b"".join(parts)
    except cramjam.DecompressionError as exc:
        raise ValueError(f"invalid snappy data: {exc}") from exc


def _bounded_lz4(data: Buffer, magic: int, limit: int | None) -> bytes:
    """``lz4_decompress``, its output checked against ``limit`` (LZ4's ratio is at most ~255: the frame is
    decoded whole, then checked)."""
    whole = lz4_decompress(data, magic)
    check_size("lz4", len(whole), limit)
    return whole


# zstd ------------------------------------------------------------------------------------------------------


def _zstd_compressor() -> zstandard.ZstdCompressor:
    compressor: zstandard.ZstdCompressor | None = getattr(_threads, "zstd_compressor", None)
    if compressor is None:
        compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_content_size=False)
        _threads.zstd_compressor = compressor
    return compressor


def _zstd_compress(data: Buffer) -> bytes:
    """One frame as Kafka's ``MemoryRecordsBuilder`` has zstd-jni write it: the records go in with
    ``ZSTD_e_continue`` (a block is compressed each time 128 KiB have come in, however the writes are cut);
    closing the builder's ``DataOutputStream`` first flushes it (``ZSTD_e_flush``: the rest as a block that is
    not the last), then closes the zstd stream (``ZSTD_e_end``: an empty raw last block, 3 bytes)."""
    stream = _zstd_compressor().compressobj()
    return b"".join(
        (
            stream.compress(data),
            stream.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK),
            stream.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH),
        )
    )


def _zstd_decompressor() -> zstandard.ZstdDecompressor:
    decompressor: zstandard.ZstdDecompressor | None = getattr(_threads, "zstd_decompressor", None)
    if decompressor is None:
        decompressor = zstandard.ZstdDecompressor()
        _threads.zstd_decompressor = decompressor
    return decompressor


def _zstd_decompress(data: Buffer, limit: int | None = None) -> bytes:
    return bytes(_zstd_buffer(data, limit))


def _zstd_buffer(data: Buffer, limit: int | None = None) -> bytes | bytearray:
    """``_zstd_decompress``'s output, not copied out of its buffer (a ``bytearray`` when ``limit`` is set)."""
    if len(data) == 0:
        raise ValueError("invalid zstd stream: it is empty")
    decompressor = _zstd_decompressor()
    parts: list[bytes] = []
    sink = None if limit is None else bytearray()  # one buffer: freed whole, whatever the pieces
    rest: Buffer = data
    try:
        while True:  # frame by frame, so that a truncated frame is told apart from a finished one
            stream = decompressor.decompressobj()
            produced = 0 if sink is None else len(sink)
            if sink is None or limit is None:
                parts.append(stream.decompress(rest))
                after: Buffer = stream.unused_data
            else:
                after = _zstd_bounded_frame(stream, memoryview(rest), sink, limit)
            if not stream.eof:
                gave = len(parts[-1]) if sink is None else len(sink) - produced
                if gave == 0 and _zstd_tail_ignored(len(data) - len(rest), len(data)):
                    break
                raise ValueError("invalid zstd stream: truncated frame")
            rest = after
            if not rest:
                break
    except zstandard.ZstdError as exc:
        raise ValueError(f"invalid zstd stream: {exc}") from exc
    if sink is not None:
        return sink
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _zstd_tail_ignored(frames_end: int, stream_end: int) -> bool:
    """Whether zstd-jni's ``ZstdInputStreamNoFinalizer`` ignores the incomplete frame (which gave no data) in
    ``[frames_end, stream_end)`` after the last complete frame: when it was read in the same read as that
    frame's end (reads of ``ZSTD_SOURCE_BUFFER`` bytes), the end of the input finds the last frame finished;
    when a later read brought it, the stream is truncated."""
    reads_end = -(-frames_end // ZSTD_SOURCE_BUFFER) * ZSTD_SOURCE_BUFFER
    return 0 < frames_end < reads_end and stream_end <= reads_end


def _zstd_bounded_frame(
    stream: zstandard.ZstdDecompressionObj, data: memoryview, sink: bytearray, limit: int
) -> bytes:
    """Feed ``data`` to ``stream`` in slices that cannot inflate far past ``limit`` (``ZSTD_MAX_RATIO``),
    appending the output to ``sink``, up to the end of the frame; return the bytes after it.

    Raises:
        DecompressedSizeError: ``sink`` passes ``limit``.
    """
    pos = 0
    while pos < len(data) and not stream.eof:
        step = max(ZSTD_MIN_SLICE, (limit - len(sink)) // (ZSTD_MAX_RATIO * ZSTD_SLICES_PER_BUDGET))
        part = stream.decompress(data[pos : pos + step])
        pos += step
        check_size("zstd", len(sink) + len(part), limit)
        sink += part
    return bytes(stream.unused_data) + bytes(data[pos:]) if stream.eof else b""
