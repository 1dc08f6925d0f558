"""Kafka's LZ4 frames decompressed straight into a caller's arena, a run of frames per kernel call.

Kafka's producers (``KafkaLZ4BlockOutputStream``) write one LZ4 frame of independent blocks per batch, with
no checksums or content size. Such frames are decoded by LZ4's block decoder from a numba kernel
(``lz4_kernels.frames_into``): no Python work per frame or block, which cost as much as the decompression
on 1 KiB records. Headers are checked in Python, once per distinct header. Anything else (other flags, a
bad header checksum, damage, no LZ4 library to link) goes to the general path (``compression.decompress``)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

from kafka_segments.records.fast import lz4_kernels as _k
from kafka_segments.records.lz4_frame import (
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

__all__ = ["decode_frames_into", "frame_block_max", "native_decoder"]

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]

_FLG = LZ4_DESCRIPTOR_START
_BD = _FLG + 1
_HC = _BD + 1
_FIRST_BLOCK = _HC + 1
_BLOCK_SIZE_BYTES = 4
_FLAGS_NOT_HANDLED = (
    LZ4_FLG_BLOCK_CHECKSUM | LZ4_FLG_CONTENT_SIZE | LZ4_FLG_CONTENT_CHECKSUM | LZ4_FLG_RESERVED
)
_BLOCK_MAX = {code << 4: 1 << (2 * code + 8) for code in range(4, 8)}
"""BD byte -> block maximum size: 64 KiB, 256 KiB, 1 MiB, 4 MiB."""
_HEADER_WEIGHTS = np.uint64(1) << (np.uint64(8) * np.arange(_FIRST_BLOCK, dtype=np.uint64))


def native_decoder() -> bool:
    """Whether LZ4's block decoder is linked for the kernel (see ``lz4_kernels.bind``)."""
    return _k.bind()


def frame_block_max(array: U8, starts: I64, ends: I64, candidates: npt.NDArray[np.bool_]) -> I64:
    """For each frame ``array[starts[i]:ends[i]]`` among ``candidates``: its block maximum size when it has
    Kafka's layout and a valid header (checksum included), else 0 — as for every frame not a candidate."""
    block_max = np.zeros(len(starts), dtype=np.int64)
    rows = np.flatnonzero(candidates & (ends - starts >= _FIRST_BLOCK + _BLOCK_SIZE_BYTES))
    if not rows.size:
        return block_max
    heads = array[starts[rows, None] + np.arange(_FIRST_BLOCK)].astype(np.uint64)
    keys, which = np.unique((heads * _HEADER_WEIGHTS).sum(axis=1), return_inverse=True)
    sizes = [_header_block_max(int(key).to_bytes(_FIRST_BLOCK, "little")) or 0 for key in keys.tolist()]
    block_max[rows] = np.array(sizes, dtype=np.int64)[which.reshape(-1)]
    return block_max


def decode_frames_into(
    array: U8, starts: I64, ends: I64, block_max: I64, *, out: U8, used: int, first: int, payload_start: I64
) -> tuple[int, int]:
    """Decode frames from ``first`` on into ``out`` from ``used`` on, until one is not decoded
    (``lz4_kernels.frames_into``).

    Raises:
        LZ4NotLinkedError: ``native_decoder()`` is false (callers ask it first).
    """
    return _k.frames_into(array, starts, ends, block_max, out, used, first, payload_start)


@lru_cache(maxsize=64)
def _header_block_max(header: bytes) -> int | None:
    """The block maximum size of a frame whose first 7 bytes are ``header``, when they are Kafka's layout with
    a valid checksum, else ``None`` (cached: a segment's frames share one or two headers)."""
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
