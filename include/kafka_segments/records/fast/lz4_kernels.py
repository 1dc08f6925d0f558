"""numba kernels calling LZ4's own C functions: runs of Kafka's LZ4 frames decoded into one arena
(``lz4_into``), and the records of rebuilt batches compressed into frames (``rebuild``).

The functions are linked at run time from the ``lz4`` package's extensions (the very code
``lz4.frame.compress`` runs, so frames are byte for byte the same) or the system's ``liblz4``, and
registered with LLVM under names of ours, so the on-disk numba cache stays valid across processes. A kernel
whose symbol is not linked would bring the process down, so the kernels are private: ``frames_into`` and
``compress_frames`` link first and raise ``LZ4NotLinkedError``. ``LZ4_decompress_safe`` is bounds-checked,
so damaged frames cannot make the kernel read or write outside its spans."""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import types

from kafka_segments.records.fast.jit import njit
from kafka_segments.records.fast.words import u32_le
from kafka_segments.records.fast.xxh32 import xxh32_kernel
from kafka_segments.records.lz4_frame import (
    LZ4_BD_RESERVED,
    LZ4_BLOCK_SIZE_LENGTH,
    LZ4_BLOCK_SIZE_MASK,
    LZ4_BLOCK_STORED,
    LZ4_CHECKSUM_LENGTH,
    LZ4_CONTENT_SIZE_LENGTH,
    LZ4_DESCRIPTOR_START,
    LZ4_FLG_BLOCK_CHECKSUM,
    LZ4_FLG_BLOCK_INDEPENDENCE,
    LZ4_FLG_CONTENT_CHECKSUM,
    LZ4_FLG_CONTENT_SIZE,
    LZ4_FLG_RESERVED,
    LZ4_FLG_VERSION_01,
    LZ4_FLG_VERSION_MASK,
    LZ4_MAGIC,
)

__all__ = [
    "COMPRESSED",
    "LZ4_ERROR",
    "NO_ROOM",
    "LZ4NotLinkedError",
    "bind",
    "bind_compressor",
    "compress_frames",
    "frames_block_max",
    "frames_into",
]

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]

_DECOMPRESS_SYMBOL = "kafka_segments_lz4_decompress_safe"  # names of ours: no other LZ4 in the process
_COMPRESS_SYMBOL = "kafka_segments_lz4f_compress_frame"
_BOUND_SYMBOL = "kafka_segments_lz4f_compress_frame_bound"

_MIN_VERSION = 10_700  # LZ4 1.7.0: LZ4_decompress_safe as it has been since, and LZ4_versionNumber
_MIN_FRAME_VERSION = 10_800  # LZ4 1.8.0: LZ4F_preferences_t laid out as below (its last 16 bytes zero)

_decompress_safe: Any = types.ExternalFunction(
    _DECOMPRESS_SYMBOL, types.int32(types.uintp, types.uintp, types.int32, types.int32)
)
_compress_frame: Any = types.ExternalFunction(
    _COMPRESS_SYMBOL, types.uintp(types.uintp, types.uintp, types.uintp, types.uintp, types.uintp)
)
_compress_frame_bound: Any = types.ExternalFunction(_BOUND_SYMBOL, types.uintp(types.uintp, types.uintp))

_LZ4F_MAX64KB = 4  # LZ4F_blockSizeID_t
_LZ4F_BLOCK_INDEPENDENT = 1  # LZ4F_blockMode_t


class _FrameInfo(ctypes.Structure):
    """``LZ4F_frameInfo_t`` (lz4frame.h)."""

    _fields_ = (
        ("blockSizeID", ctypes.c_int),
        ("blockMode", ctypes.c_int),
        ("contentChecksumFlag", ctypes.c_int),
        ("frameType", ctypes.c_int),
        ("contentSize", ctypes.c_ulonglong),
        ("dictID", ctypes.c_uint),
        ("blockChecksumFlag", ctypes.c_int),
    )


class _Preferences(ctypes.Structure):
    """``LZ4F_preferences_t`` (lz4frame.h)."""

    _fields_ = (
        ("frameInfo", _FrameInfo),
        ("compressionLevel", ctypes.c_int),
        ("autoFlush", ctypes.c_uint),
        ("favorDecSpeed", ctypes.c_uint),
        ("reserved", ctypes.c_uint * 3),
    )


_KAFKA_PREFERENCES: list[_Preferences] = []
"""The preferences ``lz4_frame.kafka_lz4_frame`` gives ``lz4.frame.compress`` (which zeroes the struct, then
sets level 0, 64 KiB independent blocks, no checksums, no content size, no auto-flush), kept alive here."""

_FRAME_HEADER = 7  # magic (4), FLG, BD, HC; the content size's 8 bytes before HC when FLG says so
_MAGIC = int.from_bytes(LZ4_MAGIC, "little")
_FLG_AT = LZ4_DESCRIPTOR_START
_SHORTEST_FRAME = _FRAME_HEADER + LZ4_BLOCK_SIZE_LENGTH  # a header and an end mark


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
            llvm.add_symbol(_DECOMPRESS_SYMBOL, address)
            return True
    return False


@cache
def bind_compressor() -> int:
    """Register ``LZ4F_compressFrame`` of the ``lz4`` package's frame extension for ``compress_frames`` and
    return the address of Kafka's preferences for it; 0 when that extension does not export it."""
    import llvmlite.binding as llvm  # only when the kernel is first needed

    try:
        import lz4.frame._frame as bundled  # the C extension behind lz4.frame.compress

        library = ctypes.CDLL(bundled.__file__)
        compress, bound, version = (
            library.LZ4F_compressFrame,
            library.LZ4F_compressFrameBound,
            library.LZ4_versionNumber,
        )
    except (ImportError, AttributeError, OSError):
        return 0
    version.restype = ctypes.c_int
    version.argtypes = []
    if version() < _MIN_FRAME_VERSION:
        return 0
    preferences = _Preferences()
    preferences.frameInfo.blockSizeID = _LZ4F_MAX64KB
    preferences.frameInfo.blockMode = _LZ4F_BLOCK_INDEPENDENT
    _KAFKA_PREFERENCES.append(preferences)
    llvm.add_symbol(_COMPRESS_SYMBOL, ctypes.cast(compress, ctypes.c_void_p).value)
    llvm.add_symbol(_BOUND_SYMBOL, ctypes.cast(bound, ctypes.c_void_p).value)
    return ctypes.addressof(preferences)


class LZ4NotLinkedError(RuntimeError):
    """A kernel was asked for although LZ4's library could not be linked (callers check ``bind()`` /
    ``bind_compressor()`` first and take the general path instead)."""


def frames_into(
    array: U8, starts: I64, ends: I64, block_max: I64, out: U8, used: int, first: int, payload_start: I64
) -> tuple[int, int]:
    """``_frames_into`` (below), LZ4's block decoder linked first: a kernel calling an unlinked symbol
    would bring the process down.

    Raises:
        LZ4NotLinkedError: no LZ4 library with the block decoder was found.
    """
    if not bind():
        raise LZ4NotLinkedError("LZ4's block decoder (LZ4_decompress_safe) could not be linked")
    index, end = _frames_into(array, starts, ends, block_max, out, used, first, payload_start)
    return int(index), int(end)


def frames_block_max(array: U8, starts: I64, ends: I64, candidates: npt.NDArray[np.bool_]) -> I64:
    """For each frame ``array[starts[i]:ends[i]]`` among ``candidates``: its block maximum size when its
    header is one Kafka's reader takes (``_frames_block_max``), else 0 — as for every frame not a candidate.
    Needs no LZ4 library."""
    block_max = np.zeros(len(starts), dtype=np.int64)
    _frames_block_max(array, starts, ends, candidates, block_max)
    return block_max


def compress_frames(
    source: U8, starts: I64, ends: I64, prefix: int, out: U8, used: int, first: int, spans: I64
) -> tuple[int, int, int]:
    """``_compress_frames`` (below) with Kafka's preferences, LZ4's frame compressor linked first.

    Raises:
        LZ4NotLinkedError: the ``lz4`` package's frame extension does not export the compressor.
    """
    preferences = bind_compressor()
    if not preferences:
        raise LZ4NotLinkedError("the lz4 package's LZ4F_compressFrame could not be linked")
    index, end, status = _compress_frames(source, starts, ends, prefix, out, used, first, preferences, spans)
    return int(index), int(end), int(status)


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


@njit(cache=True, nogil=True)
def _frames_block_max(array: Any, starts: Any, ends: Any, candidates: Any, block_max: Any) -> None:
    """``block_max[i]``: the block maximum size of frame ``i`` when it is a candidate whose header Kafka's
    reader (``Lz4BlockInputStream.readHeader``) takes, its header checksum included (over FLG, BD and the
    content size when there is one), with room for an end mark; else left as it is (0)."""
    for i in range(len(starts)):
        start = starts[i]
        if not candidates[i] or ends[i] - start < _SHORTEST_FRAME or u32_le(array, start) != _MAGIC:
            continue
        flg = np.int64(array[start + _FLG_AT])
        bd = np.int64(array[start + _FLG_AT + 1])
        if (
            (flg & LZ4_FLG_VERSION_MASK) != LZ4_FLG_VERSION_01
            or flg & LZ4_FLG_RESERVED
            or not flg & LZ4_FLG_BLOCK_INDEPENDENCE
            or bd & LZ4_BD_RESERVED
            or bd >> 4 < 4
        ):
            continue
        descriptor = 2 + (LZ4_CONTENT_SIZE_LENGTH if flg & LZ4_FLG_CONTENT_SIZE else 0)
        checksum_at = start + _FLG_AT + descriptor
        if checksum_at + 1 + LZ4_BLOCK_SIZE_LENGTH > ends[i]:
            continue
        if np.int64(array[checksum_at]) == (xxh32_kernel(array, start + _FLG_AT, descriptor) >> 8) & 0xFF:
            block_max[i] = np.int64(1) << (2 * (bd >> 4) + 8)


@njit(cache=True, nogil=True)
def _frames_into(
    array: Any, starts: Any, ends: Any, block_max: Any, out: Any, used: Any, first: Any, payload_start: Any
) -> tuple[int, int]:
    """Decode the frames ``array[starts[i]:ends[i]]`` from ``first`` on into ``out`` from ``used`` on,
    recording where each begins in ``payload_start[i]``; ``block_max[i]`` is 0 for a frame this kernel does
    not decode. Read as Kafka's ``Lz4BlockInputStream`` reads: a content size is skipped, block checksums are
    verified, a content checksum is read but not verified, bytes after it are never read. Returns ``(i,
    used)``: the first frame not decoded (it has no ``block_max``, a bad block or block checksum, no room
    left, no end mark) and the end of the output before it; ``out`` may hold partial output past it."""
    source = array.ctypes.data
    target = out.ctypes.data
    capacity = len(out)
    for i in range(first, len(starts)):
        largest = block_max[i]
        if largest <= 0:
            return i, used
        flg = np.int64(array[starts[i] + _FLG_AT])
        pos = starts[i] + _FRAME_HEADER + (LZ4_CONTENT_SIZE_LENGTH if flg & LZ4_FLG_CONTENT_SIZE else 0)
        block_checksum = LZ4_CHECKSUM_LENGTH if flg & LZ4_FLG_BLOCK_CHECKSUM else 0
        end = ends[i]
        written = used
        complete = False
        while pos + LZ4_BLOCK_SIZE_LENGTH <= end:
            size = u32_le(array, pos)
            pos += LZ4_BLOCK_SIZE_LENGTH
            if size == 0:  # the end mark: a content checksum's 4 bytes are read, never checked
                complete = not flg & LZ4_FLG_CONTENT_CHECKSUM or pos + LZ4_CHECKSUM_LENGTH <= end
                break  # and what follows is never read
            stored = size & LZ4_BLOCK_STORED
            size &= LZ4_BLOCK_SIZE_MASK
            if size > largest or pos + size + block_checksum > end or written + largest > capacity:
                break
            if block_checksum and u32_le(array, pos + size) != xxh32_kernel(array, pos, size):
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
            pos += size + block_checksum
        if not complete:
            return i, used
        payload_start[i] = used
        used = written
    return len(starts), used


COMPRESSED = 0  # compress_frames statuses
NO_ROOM = 1
LZ4_ERROR = 2


@njit(cache=True, nogil=True)
def _compress_frames(  # noqa: PLR0913 - numba kernel: nopython mode takes arrays one by one, not objects
    source: Any,
    starts: Any,
    ends: Any,
    prefix: Any,
    out: Any,
    used: Any,
    first: Any,
    preferences: Any,
    spans: Any,
) -> tuple[int, int, int]:
    """Compress ``source[starts[i]:ends[i]]`` from ``first`` on into one LZ4 frame each, into ``out`` from
    ``used`` on, each after the ``prefix`` bytes before its span (a batch header); frame ``i`` is
    ``out[spans[i, 0] : spans[i, 1]]``. Returns ``(i, used, status)``: the first span not compressed, the end
    of the output before it, and ``NO_ROOM``, ``LZ4_ERROR`` or ``COMPRESSED``."""
    source_at = source.ctypes.data
    out_at = out.ctypes.data
    capacity = len(out)
    for i in range(first, len(starts)):
        size = ends[i] - starts[i]
        frame = used + prefix
        room = _compress_frame_bound(np.uint64(size), np.uint64(preferences))
        if frame + np.int64(room) > capacity:
            return i, used, NO_ROOM
        written = _compress_frame(
            out_at + np.uint64(frame),
            room,
            source_at + np.uint64(starts[i]),
            np.uint64(size),
            np.uint64(preferences),
        )
        if written > room:  # LZ4F_isError: an error code is a value close to 2**64
            return i, used, LZ4_ERROR
        out[used:frame] = source[starts[i] - prefix : starts[i]]
        spans[i, 0] = frame
        spans[i, 1] = frame + np.int64(written)
        used = frame + np.int64(written)
    return len(starts), used, COMPRESSED
