"""XXH32 with seed 0, the LZ4 frame format's header and block checksum, as a numba kernel (``lz4_kernels``
checks frames with it); ``records.lz4_frame.xxh32`` is the same function in Python, for a few bytes."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from kafka_segments.records.fast.jit import njit
from kafka_segments.records.fast.words import MASK32, rotl32, u32_le

__all__ = ["xxh32", "xxh32_kernel"]

_LOW16 = 0xFFFF
_XXH_PRIME1 = 0x9E3779B1
_XXH_PRIME2 = 0x85EBCA77
_XXH_PRIME3 = 0xC2B2AE3D
_XXH_PRIME4 = 0x27D4EB2F
_XXH_PRIME5 = 0x165667B1
_XXH_STRIPE = 16


def xxh32(array: npt.NDArray[np.uint8], start: int, length: int) -> int:
    """XXH32 (seed 0) of ``array[start : start + length]``, as the kernels compute it."""
    return int(xxh32_kernel(array, start, length))


@njit(cache=True, inline="always")
def _mul32(a: Any, b: Any) -> Any:
    """``a * b`` modulo 2**32 for ``a``, ``b`` below 2**32, in halves that never overflow an int64."""
    return (a * (b & _LOW16) + (((a * (b >> 16)) & _LOW16) << 16)) & MASK32


@njit(cache=True, inline="always")
def _round(lane: Any, word: Any) -> Any:
    return _mul32(rotl32((lane + _mul32(word, _XXH_PRIME2)) & MASK32, 13), _XXH_PRIME1)


@njit(cache=True, nogil=True)
def xxh32_kernel(array: Any, start: Any, length: Any) -> Any:
    """XXH32 with seed 0 (the LZ4 frame format's header and block checksums) of ``length`` bytes."""
    pos = start
    end = start + length
    if length >= _XXH_STRIPE:
        lane1 = (_XXH_PRIME1 + _XXH_PRIME2) & MASK32
        lane2 = np.int64(_XXH_PRIME2)
        lane3 = np.int64(0)
        lane4 = (-_XXH_PRIME1) & MASK32
        while pos + _XXH_STRIPE <= end:
            lane1 = _round(lane1, u32_le(array, pos))
            lane2 = _round(lane2, u32_le(array, pos + 4))
            lane3 = _round(lane3, u32_le(array, pos + 8))
            lane4 = _round(lane4, u32_le(array, pos + 12))
            pos += _XXH_STRIPE
        acc = (rotl32(lane1, 1) + rotl32(lane2, 7) + rotl32(lane3, 12) + rotl32(lane4, 18)) & MASK32
    else:
        acc = np.int64(_XXH_PRIME5)
    acc = (acc + length) & MASK32
    while pos + 4 <= end:
        acc = _mul32(rotl32((acc + _mul32(u32_le(array, pos), _XXH_PRIME3)) & MASK32, 17), _XXH_PRIME4)
        pos += 4
    while pos < end:
        acc = _mul32(rotl32((acc + _mul32(np.int64(array[pos]), _XXH_PRIME5)) & MASK32, 11), _XXH_PRIME1)
        pos += 1
    acc = _mul32(acc ^ (acc >> 15), _XXH_PRIME2)
    acc = _mul32(acc ^ (acc >> 13), _XXH_PRIME3)
    return acc ^ (acc >> 16)
