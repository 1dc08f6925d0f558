"""Kafka's LZ4 frames decompressed straight into a caller's buffer, block by block.

Kafka's producers (lz4-java, through ``KafkaLZ4BlockOutputStream``) write a batch's records as one LZ4 frame
of independent blocks, with no block or content checksum and no content size (the layout below, from the LZ4
frame format). ``decompress_frame_into`` decodes such a frame with LZ4's block decoder (``cramjam``) straight
into the caller's buffer — no ``bytes`` object per batch and no copy of it into the arena (~25% of the time
of decompressing a segment of 1 KiB records here). Anything else — other flags, a bad header checksum, a
block that does not fit, damage — is not decoded here (``None``): the general path
(``compression.decompress``) then decodes it, or raises with the reason, as it always has.

    offset  size  field
    0       4     magic 04 22 4D 18
    4       1     FLG: version (bits 7-6, 01), block independence (5), block checksum (4), content size (3),
                  content checksum (2), reserved (1), dictionary id (0)
    5       1     BD: block maximum size (bits 6-4: 4 = 64 KiB .. 7 = 4 MiB), the other bits reserved
    6       1     HC: (XXH32(FLG, BD) >> 8) & 0xFF
    7       ...   blocks: size (u32 little endian; high bit set = stored uncompressed), then its bytes
    ...     4     end mark: 00 00 00 00
"""

from __future__ import annotations

import struct
from functools import lru_cache

import cramjam

from kafka_segments.records.compression import (
    LZ4_DESCRIPTOR_START,
    LZ4_FLG_BLOCK_CHECKSUM,
    LZ4_FLG_BLOCK_INDEPENDENCE,
    LZ4_FLG_CONTENT_CHECKSUM,
    LZ4_FLG_CONTENT_SIZE,
    LZ4_FLG_RESERVED,
    LZ4_FLG_VERSION_01,
    LZ4_FLG_VERSION_MASK,
    LZ4_MAGIC,
    lz4_header_checksum,
)

__all__ = ["decompress_frame_into"]

_FLG = LZ4_DESCRIPTOR_START
_BD = _FLG + 1
_HC = _BD + 1
_FIRST_BLOCK = _HC + 1
_BLOCK_SIZE = struct.Struct("<I")
_STORED = 0x80000000
_FLAGS_NOT_HANDLED = (
    LZ4_FLG_BLOCK_CHECKSUM | LZ4_FLG_CONTENT_SIZE | LZ4_FLG_CONTENT_CHECKSUM | LZ4_FLG_RESERVED
)
_BLOCK_MAX = {code << 4: 1 << (2 * code + 8) for code in range(4, 8)}
"""BD byte -> block maximum size: 64 KiB, 256 KiB, 1 MiB, 4 MiB."""


def decompress_frame_into(frame: memoryview, out: memoryview) -> int | None:
    """Decompress ``frame`` into ``out[:n]`` and return ``n``; ``None`` when the frame is not one this path
    decodes (module docstring) or does not fit ``out`` — ``out`` may then hold partial output."""
    block_max = _simple_frame_block_max(frame)
    if block_max is None:
        return None
    end, pos, used, room = len(frame), _FIRST_BLOCK, 0, len(out)
    while pos + _BLOCK_SIZE.size <= end:
        (size,) = _BLOCK_SIZE.unpack_from(frame, pos)
        pos += _BLOCK_SIZE.size
        if size == 0:
            return used if pos == end else None  # nothing may follow the end mark
        stored = size & _STORED
        size &= ~_STORED
        if size > block_max or pos + size > end or used + block_max > room:
            return None
        if stored:
            out[used : used + size] = frame[pos : pos + size]
            used += size
        else:
            block, into = frame[pos : pos + size], out[used : used + block_max]
            try:
                used += cramjam.lz4.decompress_block_into(block, into)
            except cramjam.DecompressionError:
                return None
        pos += size
    return None  # no end mark


def _simple_frame_block_max(frame: memoryview) -> int | None:
    """The block maximum size of a frame with Kafka's layout and a valid header, else ``None``."""
    if len(frame) < _FIRST_BLOCK + _BLOCK_SIZE.size:
        return None
    return _header_block_max(bytes(frame[:_FIRST_BLOCK]))


@lru_cache(maxsize=64)
def _header_block_max(header: bytes) -> int | None:
    """``_simple_frame_block_max`` of a frame's first 7 bytes (cached: a segment's frames share one or two
    headers)."""
    flg, bd, hc = header[_FLG], header[_BD], header[_HC]
    if (
        header[:_FLG] != LZ4_MAGIC
        or flg & _FLAGS_NOT_HANDLED
        or (flg & LZ4_FLG_VERSION_MASK) != LZ4_FLG_VERSION_01
        or not flg & LZ4_FLG_BLOCK_INDEPENDENCE
        or hc != lz4_header_checksum(bytes((flg, bd)))
    ):
        return None
    return _BLOCK_MAX.get(bd)
