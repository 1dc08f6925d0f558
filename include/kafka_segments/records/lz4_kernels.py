"""The numba kernel behind ``lz4_into.py``: a run of Kafka's LZ4 frames decoded into one arena, block by
block, by LZ4's own block decoder called from the kernel.

LZ4's C library is linked in at run time, not at build time: ``bind()`` looks up ``LZ4_decompress_safe`` in
the ``lz4`` package's block extension (which bundles LZ4 and exports its symbols), else in the system's
``liblz4``, and registers its address with LLVM under ``SYMBOL``. The kernel refers to the function only by
that name, so its on-disk numba cache stays valid from one process to the next. Callers must call ``bind()``
(and get ``True``) before the first call of ``frames_into``; with no library found they keep to the general
path (``compression.decompress``).

``LZ4_decompress_safe(src, dst, compressedSize, dstCapacity)`` is LZ4's bounds-checked decoder: it reads at
most ``compressedSize`` bytes, writes at most ``dstCapacity`` bytes, and returns a negative number for
malformed input, so damaged frames cannot make the kernel read or write outside the spans given here.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache
from typing import Any

import numpy as np
from numba import njit, types

__all__ = ["SYMBOL", "bind", "frames_into"]

SYMBOL = "kafka_segments_lz4_decompress_safe"
"""The name the kernel links against (ours, so that no other copy of LZ4 in the process can answer it)."""

_MIN_VERSION = 10_700  # LZ4 1.7.0: LZ4_decompress_safe as it has been since, and LZ4_versionNumber

_decompress_safe: Any = types.ExternalFunction(
    SYMBOL, types.int32(types.uintp, types.uintp, types.int32, types.int32)
)

_FRAME_HEADER = 7  # magic (4), FLG, BD, HC: lz4_into checks it before a frame reaches the kernel
_BLOCK_SIZE_BYTES = 4
_STORED = 0x80000000
_SIZE_MASK = 0x7FFFFFFF


@cache
def bind() -> bool:
    """Register LZ4's block decoder for the kernel; ``False`` when no usable LZ4 library is found."""
    import llvmlite.binding as llvm  # only when the kernel is first needed

    for path in _library_candidates():
        try:
            library = ctypes.CDLL(path)
            decoder = library.LZ4_decompress_safe
            version = library.LZ4_versionNumber
        except (OSError, AttributeError):
            continue
        version.restype = ctypes.c_int
        version.argtypes = []
        if version() < _MIN_VERSION:
            continue
        address = ctypes.cast(decoder, ctypes.c_void_p).value
        if address:
            llvm.add_symbol(SYMBOL, address)
            return True
    return False


def _library_candidates() -> list[str]:
    paths: list[str] = []
    try:
        import lz4.block._block as bundled  # the C extension

        paths.append(bundled.__file__)
    except (ImportError, AttributeError):
        pass
    system = ctypes.util.find_library("lz4")
    if system:
        paths.append(system)
    return paths


@njit(cache=True, inline="always")
def _u32_le(array: Any, pos: Any) -> Any:
    return (
        np.int64(array[pos])
        | (np.int64(array[pos + 1]) << 8)
        | (np.int64(array[pos + 2]) << 16)
        | (np.int64(array[pos + 3]) << 24)
    )


@njit(cache=True, nogil=True)
def frames_into(
    array: Any, starts: Any, ends: Any, block_max: Any, out: Any, used: Any, first: Any, payload_start: Any
) -> tuple[int, int]:
    """Decode the frames ``array[starts[i]:ends[i]]`` for ``i`` from ``first`` on, one after the other, into
    ``out`` from ``used`` on, recording where each begins in ``payload_start[i]``.

    ``block_max[i]`` is the block maximum size of frame ``i``, whose 7-byte header was checked by the caller,
    or 0 when the frame is not one this kernel decodes. Returns ``(i, used)``: the first frame not decoded
    (``len(starts)`` when all were) and the end of the output before it. A frame is not decoded when it has no
    ``block_max``, when a block is larger than it or runs past the frame, when ``out`` has less room left than
    a whole block, when LZ4 refuses a block, or when the frame has no end mark or bytes after it; ``out`` may
    then hold partial output past ``used``.
    """
    source = array.ctypes.data
    target = out.ctypes.data
    capacity = len(out)
    for i in range(first, len(starts)):
        largest = block_max[i]
        if largest <= 0:
            return i, used
        pos = starts[i] + _FRAME_HEADER
        end = ends[i]
        written = used
        complete = False
        while pos + _BLOCK_SIZE_BYTES <= end:
            size = _u32_le(array, pos)
            pos += _BLOCK_SIZE_BYTES
            if size == 0:
                complete = pos == end  # nothing may follow the end mark
                break
            stored = size & _STORED
            size &= _SIZE_MASK
            if size > largest or pos + size > end or written + largest > capacity:
                break
            if stored:
                out[written : written + size] = array[pos : pos + size]
                written += size
            else:
                got = _decompress_safe(
                    source + np.uint64(pos), target + np.uint64(written), np.int32(size), np.int32(largest)
                )
                if got < 0:
                    break
                written += got
            pos += size
        if not complete:
            return i, used
        payload_start[i] = used
        used = written
    return len(starts), used
