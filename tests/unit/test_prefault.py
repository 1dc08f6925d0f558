"""``records.fast.prefault.ArenaPrefaulter``: a buffer's pages faulted in on a helper thread, ahead of its
writer, without changing a byte, and given back past what the result uses."""

from __future__ import annotations

import ctypes
import mmap
import sys
import threading
import time

import numpy as np
import pytest
from kafka_segments.records import CompressionType, Record, build_batch
from kafka_segments.records.fast.prefault import ArenaPrefaulter

pytestmark = [
    pytest.mark.unit,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MADV_POPULATE_WRITE is Linux's"),
]

PAGE = mmap.PAGESIZE
MB = 1 << 20


def resident_pages(array: np.ndarray, start: int, end: int) -> int:
    """How many pages of ``array[start:end]`` (page-aligned offsets) are resident (``mincore``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    pages = (end - start) // PAGE
    vector = (ctypes.c_ubyte * pages)()
    assert libc.mincore(array.ctypes.data + start, end - start, vector) == 0, ctypes.get_errno()
    return sum(byte & 1 for byte in vector)


def fresh_arena(size: int) -> np.ndarray:
    """A page-aligned, never-touched arena (its own private anonymous map, as ``np.empty``'s large ones)."""
    return np.frombuffer(mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS), dtype=np.uint8)


def segment(codec: CompressionType) -> bytes:
    """400 batches of 50 keyed records of ~200 bytes each (about 4 MB uncompressed)."""
    return b"".join(
        build_batch(
            [Record(o * 50 + i, 1_000 + i, b"%08d" % (o * 50 + i), b"v%d" % i * 40) for i in range(50)],
            base_offset=o * 50,
            compression=codec,
        )
        for o in range(400)
    )


def wait_for(predicate: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the helper did not get there"
        time.sleep(0.01)


def test_pages_are_faulted_in_up_to_the_lead_past_the_mark_and_no_further() -> None:
    arena = fresh_arena(64 * MB)
    prefaulter = ArenaPrefaulter(arena, lead=8 * MB)
    assert resident_pages(arena, 0, 64 * MB) == 0
    prefaulter.advance(4 * MB)
    wait_for(lambda: resident_pages(arena, 0, 12 * MB) == 12 * MB // PAGE)
    time.sleep(0.05)
    assert resident_pages(arena, 12 * MB, 64 * MB) == 0
    prefaulter.advance(20 * MB)
    wait_for(lambda: resident_pages(arena, 0, 28 * MB) == 28 * MB // PAGE)
    prefaulter.stop()
    assert resident_pages(arena, 28 * MB, 64 * MB) == 0


def test_faulting_in_never_changes_a_byte_and_stop_gives_back_the_pages_past_what_is_used() -> None:
    arena = fresh_arena(16 * MB)
    arena[: 3 * MB + 5] = 7
    prefaulter = ArenaPrefaulter(arena, lead=8 * MB)
    prefaulter.advance(3 * MB + 5)
    wait_for(lambda: resident_pages(arena, 0, 11 * MB) == 11 * MB // PAGE)
    prefaulter.stop(used=3 * MB + 5)
    assert (arena[: 3 * MB + 5] == 7).all()
    assert resident_pages(arena, 0, 3 * MB + PAGE) == (3 * MB + PAGE) // PAGE  # the page holding the end
    assert resident_pages(arena, 3 * MB + PAGE, 16 * MB) == 0
    assert not [t for t in threading.enumerate() if t.name == "arena-prefault"]


def test_nothing_is_faulted_in_before_the_first_mark_nor_after_stop() -> None:
    arena = fresh_arena(16 * MB)
    prefaulter = ArenaPrefaulter(arena, lead=8 * MB)
    prefaulter.stop()
    prefaulter.advance(MB)
    time.sleep(0.05)
    assert resident_pages(arena, 0, 16 * MB) == 0
