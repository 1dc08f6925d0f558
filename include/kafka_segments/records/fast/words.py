"""32-bit words for the kernels that hash bytes (``key_kernels``' MD5, ``xxh32``) and read LZ4's framing
(``lz4_kernels``): inlined into each kernel, in int64 arithmetic."""

from __future__ import annotations

from typing import Any

import numpy as np

from kafka_segments.records.fast.jit import njit

__all__ = ["MASK32", "rotl32", "u32_le"]

MASK32 = 0xFFFFFFFF


@njit(cache=True, inline="always")
def u32_le(array: Any, pos: Any) -> Any:
    """The little-endian unsigned 32-bit word at ``array[pos]``, as an int64."""
    return (
        np.int64(array[pos])
        | (np.int64(array[pos + 1]) << 8)
        | (np.int64(array[pos + 2]) << 16)
        | (np.int64(array[pos + 3]) << 24)
    )


@njit(cache=True, inline="always")
def rotl32(value: Any, bits: Any) -> Any:
    """``value`` (below 2**32) rotated left by ``bits`` within 32 bits."""
    return ((value << bits) | (value >> (32 - bits))) & MASK32
