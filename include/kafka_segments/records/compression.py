"""Compression codecs as Kafka frames them (``clients/.../common/compress``).

* gzip: one GZIP member with the header ``java.util.zip.GZIPOutputStream`` writes (no flags, mtime 0, XFL 0,
  OS 255) and zlib's default level 6 (``Deflater.DEFAULT_COMPRESSION``, Kafka's default). The reader
  accepts concatenated members, verifies every member's CRC-32 and length, and rejects trailing bytes.
* snappy: xerial snappy-java stream framing (``SnappyOutputStream``): a 16-byte header (magic
  ``\\x82SNAPPY\\0``, int32 version 1, int32 min-compatible version 1), then ``[int32 length][raw block]``
  repeated, blocks of at most 32 KiB uncompressed. As ``SnappyInputStream`` does, the reader treats a stream
  without the magic as one raw snappy block and accepts a repeated header (concatenated streams).
* lz4: the LZ4 frame format with independent blocks, 64 KiB maximum block size, no block or content
  checksum and no content size (``Lz4BlockOutputStream``). The reader accepts a content size, block and
  content checksums, and rejects dependent blocks, a dictionary id, reserved bits and versions other than
  01 (``Lz4BlockInputStream``), and bytes after the end mark. Magic 0 quirk: Kafka writes the frame
  descriptor checksum (HC byte) over the 4 magic bytes *and* the descriptor, and ignores the HC byte when
  reading v0 messages; magic 1/2 write and verify the spec checksum (descriptor only).
* zstd: frames without a content size, as zstd-jni's streaming compressor writes them (level 3). The
  reader accepts concatenated frames and frames with or without a content size. Only valid in magic 2.

``compress``/``decompress`` raise ``UnsupportedCodecError`` for an unknown codec id or zstd below magic 2,
and ``ValueError`` (with the reason, callers add the location) for a damaged stream. Readers are stricter than
Java's streams about garbage after the last gzip member / lz4 end mark / zstd frame (Java stops reading and
ignores it): no producer writes any, so it is reported as damage.
"""

from __future__ import annotations

import functools
import struct
import threading
import zlib
from collections.abc import Callable
from functools import lru_cache

import cramjam
import lz4.frame
import numpy as np
import numpy.typing as npt
import zstandard

from kafka_segments.errors import UnsupportedCodecError
from kafka_segments.records.attributes import CompressionType

Buffer = bytes | bytearray | memoryview

GZIP_LEVEL = 6  # Deflater.DEFAULT_COMPRESSION (-1) is zlib's level 6
GZIP_MAGIC = b"\x1f\x8b"
GZIP_HEADER = GZIP_MAGIC + b"\x08\x00\x00\x00\x00\x00\x00\xff"  # deflate, no flags, mtime 0, XFL 0, OS 255
GZIP_TRAILER = struct.Struct("<II")  # CRC-32 and size (mod 2**32) of the uncompressed data

XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = struct.Struct(">8sii")  # magic, version, min compatible version
XERIAL_VERSION = 1
XERIAL_BLOCK_LENGTH = struct.Struct(">i")
XERIAL_BLOCK_SIZE = 32 * 1024
XERIAL_MAGIC_HEAD = XERIAL_BLOCK_LENGTH.unpack(XERIAL_MAGIC[:4])[0]  # a block length that starts a header

LZ4_MAGIC = b"\x04\x22\x4d\x18"  # 0x184D2204 little-endian
LZ4_FLG_VERSION_MASK = 0xC0
LZ4_FLG_VERSION_01 = 0x40
LZ4_FLG_BLOCK_INDEPENDENCE = 0x20
LZ4_FLG_BLOCK_CHECKSUM = 0x10
LZ4_FLG_CONTENT_SIZE = 0x08
LZ4_FLG_CONTENT_CHECKSUM = 0x04
LZ4_FLG_RESERVED = 0x03  # bit 0 is the dictionary id flag, which Kafka treats as reserved
LZ4_BD_RESERVED = 0x8F
LZ4_BD_64KB = 4 << 4
LZ4_DESCRIPTOR_START = len(LZ4_MAGIC)
LZ4_CONTENT_SIZE_LENGTH = 8

ZSTD_LEVEL = 3

_MASK32 = 0xFFFFFFFF
_XXH_PRIME1 = 0x9E3779B1
_XXH_PRIME2 = 0x85EBCA77
_XXH_PRIME3 = 0xC2B2AE3D
_XXH_PRIME4 = 0x27D4EB2F
_XXH_PRIME5 = 0x165667B1

_threads = threading.local()  # per-thread zstd contexts: zstandard objects must not be shared by threads


def compress(codec: CompressionType | int, data: Buffer, *, magic: int = 2) -> bytes:
    """Compress a records stream (or legacy inner message set) the way Kafka does for ``codec``.

    Raises:
        UnsupportedCodecError: the codec id is unknown, or zstd below magic 2.
    """
    if codec == CompressionType.NONE:
        return bytes(data)
    if codec == CompressionType.GZIP:
        return _gzip_compress(data)
    if codec == CompressionType.SNAPPY:
        return _xerial_compress(data)
    if codec == CompressionType.LZ4:
        return _lz4_compress(data, magic)
    if codec == CompressionType.ZSTD:
        _check_zstd_magic(magic)
        compressor = _zstd_compressor().compressobj()
        return compressor.compress(data) + compressor.flush()
    raise UnsupportedCodecError(f"unknown compression codec id {int(codec)}")


def compressor(codec: CompressionType | int) -> Callable[[Buffer], bytes]:
    """``compress(codec, data)`` of v2 records streams as one function, resolved once for per-batch callers
    (for LZ4, the frame compressor itself)."""
    if codec == CompressionType.LZ4:
        return _lz4_frame
    return functools.partial(compress, codec)


def decompress(codec: CompressionType | int, data: Buffer, *, magic: int = 2) -> bytes:
    """Decompress a records stream of ``codec``.

    Raises:
        UnsupportedCodecError: the codec id is unknown, or zstd below magic 2.
        ValueError: the compressed stream is damaged (callers wrap it with the location).
    """
    if codec == CompressionType.NONE:
        return bytes(data)
    if codec == CompressionType.GZIP:
        return _gzip_decompress(data)
    if codec == CompressionType.SNAPPY:
        return _xerial_decompress(data)
    if codec == CompressionType.LZ4:
        return _lz4_decompress(data, magic)
    if codec == CompressionType.ZSTD:
        _check_zstd_magic(magic)
        return _zstd_decompress(data)
    raise UnsupportedCodecError(f"unknown compression codec id {int(codec)}")


def batch_decompressors(
    codecs: npt.NDArray[np.integer],
    array: npt.NDArray[np.uint8],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
) -> list[Callable[[Buffer], bytes] | None]:
    """For each v2 records stream (codec ``codecs[i]``, bytes ``array[starts[i]:ends[i]]``), the function
    that decompresses it exactly as ``decompress(codec, data)`` does, with the codec resolved once per
    segment instead of once per batch; ``None`` for uncompressed.

    LZ4 frames whose magic number and descriptor are checked here over columns (``_lz4_descriptors_ok``:
    the same rules as ``_lz4_check_descriptor``) skip the per-frame Python check; the others take the
    checked path, which raises what it raises.
    """
    general: dict[int, Callable[[Buffer], bytes]] = {
        int(CompressionType.GZIP): _gzip_decompress,
        int(CompressionType.SNAPPY): _xerial_decompress,
        int(CompressionType.LZ4): _lz4_decompress_v2,
        int(CompressionType.ZSTD): _zstd_decompress,
    }
    codes = codecs.astype(np.int64)
    checked = _lz4_descriptors_ok(array, starts, ends) & (codes == CompressionType.LZ4)
    out: list[Callable[[Buffer], bytes] | None] = []
    for code, fast in zip(codes.tolist(), checked.tolist(), strict=True):
        if code == CompressionType.NONE:
            out.append(None)
        elif fast:
            out.append(lz4_checked_frame)
        else:
            out.append(general.get(code) or functools.partial(_decompress_v2, code))
    return out


def _check_zstd_magic(magic: int) -> None:
    if magic < 2:
        raise UnsupportedCodecError(f"zstd is only valid in record batches of magic 2, not magic {magic}")


# gzip ------------------------------------------------------------------------------------------------------


def _gzip_compress(data: Buffer) -> bytes:
    body = zlib.compress(data, GZIP_LEVEL, wbits=-zlib.MAX_WBITS)  # raw deflate
    return b"".join((GZIP_HEADER, body, GZIP_TRAILER.pack(zlib.crc32(data), len(data) & _MASK32)))


def _gzip_decompress(data: Buffer) -> bytes:
    if len(data) == 0:
        raise ValueError("invalid gzip stream: it is empty")
    parts = []
    rest: Buffer = data
    try:
        while True:
            inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip wrapper: checks CRC and ISIZE
            parts.append(inflater.decompress(rest))
            if not inflater.eof:
                raise ValueError("invalid gzip stream: truncated (the member has no end)")
            rest = inflater.unused_data
            if not rest:
                break
            if rest[:2] != GZIP_MAGIC:
                raise ValueError(f"invalid gzip stream: {len(rest)} unexpected bytes after the last member")
    except zlib.error as exc:
        raise ValueError(f"invalid gzip stream: {exc}") from exc
    return parts[0] if len(parts) == 1 else b"".join(parts)


# snappy (xerial framing) -----------------------------------------------------------------------------------


def _xerial_compress(data: Buffer) -> bytes:
    view = memoryview(data)
    parts: list[Buffer | cramjam.Buffer] = [XERIAL_HEADER.pack(XERIAL_MAGIC, XERIAL_VERSION, XERIAL_VERSION)]
    for start in range(0, len(view), XERIAL_BLOCK_SIZE):
        block = cramjam.snappy.compress_raw(view[start : start + XERIAL_BLOCK_SIZE])
        parts.append(XERIAL_BLOCK_LENGTH.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _xerial_decompress(data: Buffer) -> bytes:
    view = memoryview(data)
    if len(view) == 0:
        raise ValueError("invalid snappy stream: it is empty")
    try:
        if len(view) < XERIAL_HEADER.size or view[: len(XERIAL_MAGIC)] != XERIAL_MAGIC:
            return bytes(cramjam.snappy.decompress_raw(view))  # no xerial header: one raw snappy block
        parts = []
        pos = XERIAL_HEADER.size
        end = len(view)
        while pos < end:
            if pos + XERIAL_BLOCK_LENGTH.size > end:
                raise ValueError(f"invalid snappy stream: it ends inside a block length at byte {pos}")
            (length,) = XERIAL_BLOCK_LENGTH.unpack_from(view, pos)
            if length == XERIAL_MAGIC_HEAD:  # another stream's header (concatenated streams)
                if view[pos : pos + len(XERIAL_MAGIC)] != XERIAL_MAGIC or pos + XERIAL_HEADER.size > end:
                    raise ValueError(f"invalid snappy stream: damaged stream header at byte {pos}")
                pos += XERIAL_HEADER.size
                continue
            pos += XERIAL_BLOCK_LENGTH.size
            if length <= 0 or pos + length > end:
                raise ValueError(
                    f"invalid snappy stream: block length {length} at byte {pos - 4} "
                    f"(only {end - pos} bytes follow)"
                )
            parts.append(cramjam.snappy.decompress_raw(view[pos : pos + length]))
            pos += length
        return b"".join(parts)
    except cramjam.DecompressionError as exc:
        raise ValueError(f"invalid snappy data: {exc}") from exc


# lz4 (frame format) ----------------------------------------------------------------------------------------


_lz4_frame: Callable[[Buffer], bytes] = functools.partial(
    lz4.frame.compress,
    compression_level=0,  # lz4-java's fast compressor at Kafka's default level
    block_size=lz4.frame.BLOCKSIZE_MAX64KB,
    block_linked=False,
    block_checksum=False,
    content_checksum=False,
    store_size=False,
)
"""Kafka's LZ4 frame of a records stream (magic 1 and 2); the C function itself, for per-batch callers."""


def _lz4_compress(data: Buffer, magic: int) -> bytes:
    frame = _lz4_frame(data)
    if magic != 0:
        return frame
    # Kafka's v0 quirk: the HC byte is computed over the magic number and the descriptor.
    hc_at = LZ4_DESCRIPTOR_START + 2  # FLG, BD, then HC (no content size is written)
    return frame[:hc_at] + bytes((lz4_header_checksum(bytes(frame[:hc_at])),)) + frame[hc_at + 1 :]


def _lz4_decompress(data: Buffer, magic: int) -> bytes:
    view = memoryview(data)
    hc_at = _lz4_check_descriptor(view)
    frame: Buffer = view
    if magic == 0:
        # Kafka ignores the HC byte of v0 messages (old clients wrote it over magic + descriptor).
        expected = lz4_header_checksum(bytes(view[LZ4_DESCRIPTOR_START:hc_at]))
        if view[hc_at] != expected:
            patched = bytearray(view)
            patched[hc_at] = expected
            frame = patched
    try:
        out, consumed = lz4.frame.decompress(frame, return_bytes_read=True)
    except RuntimeError as exc:
        reason = str(exc)
        if "headerChecksum" in reason:
            reason = "frame descriptor checksum (HC byte) mismatch"
        elif "incomplete" in reason:
            reason = f"truncated frame ({reason})"
        raise ValueError(f"invalid lz4 frame: {reason}") from exc
    if consumed != len(view):
        raise ValueError(f"invalid lz4 frame: {len(view) - consumed} unexpected bytes after the end mark")
    return bytes(out)


def _decompress_v2(codec: int, data: Buffer) -> bytes:
    return decompress(codec, data)


def _lz4_decompress_v2(data: Buffer) -> bytes:
    return _lz4_decompress(data, 2)


def lz4_checked_frame(data: Buffer) -> bytes:
    """A frame whose magic number and descriptor were already checked (``_lz4_descriptors_ok``)."""
    try:
        out, consumed = lz4.frame.decompress(data, return_bytes_read=True)
    except RuntimeError:
        return _lz4_decompress(data, 2)  # raises with the reason worded as the checked path words it
    if consumed != len(data):
        raise ValueError(f"invalid lz4 frame: {len(data) - consumed} unexpected bytes after the end mark")
    return bytes(out)


def _lz4_descriptors_ok(
    array: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]:
    """Whether ``_lz4_check_descriptor`` passes for each frame ``array[starts[i]:ends[i]]``."""
    hc_at = LZ4_DESCRIPTOR_START + 2
    room = ends - starts
    at = np.minimum(starts[:, None] + np.arange(hc_at + LZ4_CONTENT_SIZE_LENGTH + 1), len(array) - 1)
    head = array[np.maximum(at, 0)] if len(array) else np.zeros(at.shape, dtype=np.uint8)
    magic = np.frombuffer(LZ4_MAGIC, dtype=np.uint8)
    flg = head[:, LZ4_DESCRIPTOR_START]
    bd = head[:, LZ4_DESCRIPTOR_START + 1]
    need = np.where(flg & LZ4_FLG_CONTENT_SIZE, hc_at + LZ4_CONTENT_SIZE_LENGTH, hc_at)
    ok: npt.NDArray[np.bool_] = (
        (room > need)
        & (head[:, :LZ4_DESCRIPTOR_START] == magic).all(axis=1)
        & ((flg & LZ4_FLG_VERSION_MASK) == LZ4_FLG_VERSION_01)
        & ((flg & LZ4_FLG_RESERVED) == 0)
        & ((flg & LZ4_FLG_BLOCK_INDEPENDENCE) != 0)
        & ((bd & LZ4_BD_RESERVED) == 0)
        & ((bd >> 4) >= 4)
        & ((bd >> 4) <= 7)
    )
    return ok


def _lz4_check_descriptor(view: memoryview) -> int:
    """Check the frame magic and descriptor as Kafka's reader does; returns the HC byte's position."""
    if len(view) < LZ4_DESCRIPTOR_START + 3:
        raise ValueError(f"invalid lz4 frame: {len(view)} bytes is shorter than a frame header")
    if view[:LZ4_DESCRIPTOR_START] != LZ4_MAGIC:
        raise ValueError(f"invalid lz4 frame: bad magic number {bytes(view[:4]).hex()}")
    flg = view[LZ4_DESCRIPTOR_START]
    bd = view[LZ4_DESCRIPTOR_START + 1]
    if flg & LZ4_FLG_VERSION_MASK != LZ4_FLG_VERSION_01:
        raise ValueError(f"invalid lz4 frame: unsupported frame version {flg >> 6}")
    if flg & LZ4_FLG_RESERVED:
        raise ValueError(f"invalid lz4 frame: reserved or dictionary-id bits set in FLG {flg:#04x}")
    if not flg & LZ4_FLG_BLOCK_INDEPENDENCE:
        raise ValueError("invalid lz4 frame: dependent blocks are not supported by Kafka")
    if bd & LZ4_BD_RESERVED or not 4 <= bd >> 4 <= 7:
        raise ValueError(f"invalid lz4 frame: bad block descriptor BD {bd:#04x}")
    hc_at = LZ4_DESCRIPTOR_START + 2
    if flg & LZ4_FLG_CONTENT_SIZE:
        hc_at += LZ4_CONTENT_SIZE_LENGTH
    if len(view) <= hc_at:
        raise ValueError("invalid lz4 frame: truncated frame descriptor")
    return hc_at


@lru_cache(maxsize=64)
def lz4_header_checksum(descriptor: bytes) -> int:
    """The HC byte over ``descriptor`` (cached: frames reuse a handful of descriptors)."""
    return (xxh32(descriptor) >> 8) & 0xFF


def xxh32(data: Buffer, seed: int = 0) -> int:
    """XXH32 of ``data`` in pure Python: only for frame descriptors (a few bytes), never for payloads."""
    view = memoryview(data).cast("B")
    length = len(view)
    pos = 0
    if length >= 16:
        lanes = [
            (seed + _XXH_PRIME1 + _XXH_PRIME2) & _MASK32,
            (seed + _XXH_PRIME2) & _MASK32,
            seed & _MASK32,
            (seed - _XXH_PRIME1) & _MASK32,
        ]
        while pos + 16 <= length:
            for lane, word in enumerate(struct.unpack_from("<4I", view, pos)):
                acc = (lanes[lane] + word * _XXH_PRIME2) & _MASK32
                lanes[lane] = (_rotl32(acc, 13) * _XXH_PRIME1) & _MASK32
            pos += 16
        acc = _rotl32(lanes[0], 1) + _rotl32(lanes[1], 7) + _rotl32(lanes[2], 12) + _rotl32(lanes[3], 18)
    else:
        acc = seed + _XXH_PRIME5
    acc = (acc + length) & _MASK32
    while pos + 4 <= length:
        (word,) = struct.unpack_from("<I", view, pos)
        acc = (_rotl32((acc + word * _XXH_PRIME3) & _MASK32, 17) * _XXH_PRIME4) & _MASK32
        pos += 4
    while pos < length:
        acc = (_rotl32((acc + view[pos] * _XXH_PRIME5) & _MASK32, 11) * _XXH_PRIME1) & _MASK32
        pos += 1
    acc = ((acc ^ (acc >> 15)) * _XXH_PRIME2) & _MASK32
    acc = ((acc ^ (acc >> 13)) * _XXH_PRIME3) & _MASK32
    return acc ^ (acc >> 16)


def _rotl32(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK32


# zstd ------------------------------------------------------------------------------------------------------


def _zstd_compressor() -> zstandard.ZstdCompressor:
    compressor: zstandard.ZstdCompressor | None = getattr(_threads, "zstd_compressor", None)
    if compressor is None:
        compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_content_size=False)
        _threads.zstd_compressor = compressor
    return compressor


def _zstd_decompressor() -> zstandard.ZstdDecompressor:
    decompressor: zstandard.ZstdDecompressor | None = getattr(_threads, "zstd_decompressor", None)
    if decompressor is None:
        decompressor = zstandard.ZstdDecompressor()
        _threads.zstd_decompressor = decompressor
    return decompressor


def _zstd_decompress(data: Buffer) -> bytes:
    if len(data) == 0:
        raise ValueError("invalid zstd stream: it is empty")
    decompressor = _zstd_decompressor()
    parts = []
    rest: Buffer = data
    try:
        while True:  # frame by frame, so that a truncated frame is told apart from a finished one
            stream = decompressor.decompressobj()
            parts.append(stream.decompress(rest))
            if not stream.eof:
                raise ValueError("invalid zstd stream: truncated frame")
            rest = stream.unused_data
            if not rest:
                break
    except zstandard.ZstdError as exc:
        raise ValueError(f"invalid zstd stream: {exc}") from exc
    return parts[0] if len(parts) == 1 else b"".join(parts)
