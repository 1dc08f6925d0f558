"""Kafka's LZ4 framing (``Lz4BlockOutputStream`` / ``Lz4BlockInputStream``), for ``compression``.

Magic 0 quirk: Kafka writes the frame descriptor checksum (HC byte) over the magic bytes *and* the
descriptor, and ignores the HC byte when reading v0 messages; magic 1/2 write and verify the spec checksum.
Damage raises ``ValueError`` with the reason (callers add the location)."""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from functools import lru_cache

import lz4.frame
import numpy as np
import numpy.typing as npt

__all__ = [
    "LZ4_DESCRIPTOR_START",
    "LZ4_MAGIC",
    "kafka_lz4_frame",
    "lz4_checked_frame",
    "lz4_compress",
    "lz4_decompress",
    "lz4_descriptors_ok",
    "lz4_header_checksum",
    "xxh32",
]

Buffer = bytes | bytearray | memoryview

LZ4_MAGIC = b"\x04\x22\x4d\x18"  # 0x184D2204 little-endian
LZ4_FLG_VERSION_MASK = 0xC0
LZ4_FLG_VERSION_01 = 0x40
LZ4_FLG_BLOCK_INDEPENDENCE = 0x20
LZ4_FLG_BLOCK_CHECKSUM = 0x10
LZ4_FLG_CONTENT_SIZE = 0x08
LZ4_FLG_CONTENT_CHECKSUM = 0x04
LZ4_FLG_RESERVED = 0x03  # bit 0 is the dictionary id flag, which Kafka treats as reserved
LZ4_BD_RESERVED = 0x8F
LZ4_DESCRIPTOR_START = len(LZ4_MAGIC)
LZ4_CONTENT_SIZE_LENGTH = 8
LZ4_BLOCK_SIZE_LENGTH = 4  # a block's size word (little-endian; the high bit: stored uncompressed)
LZ4_BLOCK_STORED = 0x80000000
LZ4_BLOCK_SIZE_MASK = 0x7FFFFFFF
LZ4_CHECKSUM_LENGTH = 4  # a block checksum or the content checksum
_FLAGS_KAFKA_SKIPS = LZ4_FLG_CONTENT_SIZE | LZ4_FLG_CONTENT_CHECKSUM
"""Fields Kafka's reader reads past without checking them (``lz4.frame`` would check them)."""

_MASK32 = 0xFFFFFFFF
_XXH_PRIME1 = 0x9E3779B1
_XXH_PRIME2 = 0x85EBCA77
_XXH_PRIME3 = 0xC2B2AE3D
_XXH_PRIME4 = 0x27D4EB2F
_XXH_PRIME5 = 0x165667B1


kafka_lz4_frame: Callable[[Buffer], bytes] = functools.partial(
    lz4.frame.compress,
    compression_level=0,  # lz4-java's fast compressor at Kafka's default level
    block_size=lz4.frame.BLOCKSIZE_MAX64KB,
    block_linked=False,
    block_checksum=False,
    content_checksum=False,
    store_size=False,
)
"""Kafka's LZ4 frame of a records stream (magic 1 and 2); the C function itself, for per-batch callers."""


def lz4_compress(data: Buffer, magic: int) -> bytes:
    frame = kafka_lz4_frame(data)
    if magic != 0:
        return frame
    # Kafka's v0 quirk: the HC byte is computed over the magic number and the descriptor.
    hc_at = LZ4_DESCRIPTOR_START + 2  # FLG, BD, then HC (no content size is written)
    return frame[:hc_at] + bytes((lz4_header_checksum(bytes(frame[:hc_at])),)) + frame[hc_at + 1 :]


def lz4_decompress(data: Buffer, magic: int) -> bytes:
    """The records of a frame, read as Kafka's ``Lz4BlockInputStream`` reads it: a content size is skipped,
    block checksums are verified, a content checksum is read but not verified, and bytes after the frame
    are never read (docs/fidelity.md, "What Kafka's readers accept")."""
    view = memoryview(data)
    hc_at = _check_descriptor(view)
    expected = lz4_header_checksum(bytes(view[LZ4_DESCRIPTOR_START:hc_at]))
    if magic != 0 and view[hc_at] != expected:
        raise ValueError("invalid lz4 frame: frame descriptor checksum (HC byte) mismatch")
    # Kafka ignores the HC byte of v0 messages (old clients wrote it over magic + descriptor).
    frame: Buffer = view if magic != 0 or view[hc_at] == expected else _with_checksum(view, hc_at, expected)
    if view[LZ4_DESCRIPTOR_START] & _FLAGS_KAFKA_SKIPS:
        frame = _without_skipped_fields(view, hc_at)
    return _decoded(frame)


def lz4_checked_frame(data: Buffer) -> bytes:
    """A frame whose magic number and descriptor were already checked (``lz4_descriptors_ok``)."""
    if memoryview(data)[LZ4_DESCRIPTOR_START] & _FLAGS_KAFKA_SKIPS:
        return lz4_decompress(data, 2)
    try:
        out, _ = lz4.frame.decompress(data, return_bytes_read=True)
    except RuntimeError:
        return lz4_decompress(data, 2)  # raises with the reason worded as the checked path words it
    return bytes(out)


def _decoded(frame: Buffer) -> bytes:
    try:
        out, _ = lz4.frame.decompress(frame, return_bytes_read=True)  # nothing after the end mark is read
    except RuntimeError as exc:
        reason = str(exc)
        if "headerChecksum" in reason:
            reason = "frame descriptor checksum (HC byte) mismatch"
        elif "blockChecksum" in reason:
            reason = "block checksum mismatch"
        elif "incomplete" in reason:
            reason = f"truncated frame ({reason})"
        raise ValueError(f"invalid lz4 frame: {reason}") from exc
    return bytes(out)


def _with_checksum(view: memoryview, hc_at: int, checksum: int) -> bytearray:
    patched = bytearray(view)
    patched[hc_at] = checksum
    return patched


def _without_skipped_fields(view: memoryview, hc_at: int) -> bytes:
    """The frame without its content size and content checksum (both only skipped by Kafka's reader), and
    without anything after its end mark: the blocks themselves, checksums included, are kept as they are."""
    flg = view[LZ4_DESCRIPTOR_START] & ~_FLAGS_KAFKA_SKIPS
    descriptor = bytes((flg, view[LZ4_DESCRIPTOR_START + 1]))
    block_checksum = LZ4_CHECKSUM_LENGTH if flg & LZ4_FLG_BLOCK_CHECKSUM else 0
    pos = hc_at + 1
    while True:
        if pos + LZ4_BLOCK_SIZE_LENGTH > len(view):
            raise ValueError("invalid lz4 frame: truncated frame (no end mark)")
        (word,) = struct.unpack_from("<I", view, pos)
        pos += LZ4_BLOCK_SIZE_LENGTH
        if word == 0:
            break
        pos += (word & LZ4_BLOCK_SIZE_MASK) + block_checksum
    if view[LZ4_DESCRIPTOR_START] & LZ4_FLG_CONTENT_CHECKSUM and pos + LZ4_CHECKSUM_LENGTH > len(view):
        raise ValueError("invalid lz4 frame: truncated frame (no content checksum after the end mark)")
    header = LZ4_MAGIC + descriptor + bytes((lz4_header_checksum(descriptor),))
    return header + bytes(view[hc_at + 1 : pos])


def lz4_descriptors_ok(
    array: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]:
    """Whether ``_check_descriptor`` passes for each frame ``array[starts[i]:ends[i]]``."""
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


def _check_descriptor(view: memoryview) -> int:
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
