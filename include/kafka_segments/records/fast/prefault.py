"""Fresh pages faulted in on a helper thread, a little ahead of the writer that fills them.

The first write to a fresh page costs a page fault and the page's zeroing: on this project's VMs, filling
1 GB of fresh memory spent more CPU in those faults than in the work writing it (bench/RESULTS.md,
"Against Kafka's own cleaner"). ``ArenaPrefaulter`` asks the kernel to fault the buffer's pages in
(``madvise(MADV_POPULATE_WRITE)``, Linux 5.14+) on another thread, at most ``lead`` bytes past what the
writer has written (a segment read from S3 into a fresh buffer: ``pipeline.compaction.sources``), so the
faults overlap the writing instead of stalling it. Populating never changes a byte (it faults pages in as a
write would, without writing), so it may race with the writer. Where the call is missing or refused, the
helper stops and the writer faults its pages as before."""

from __future__ import annotations

import mmap
import threading

import numpy as np
import numpy.typing as npt

from kafka_segments.libc import libc as _libc

__all__ = ["DEFAULT_LEAD_BYTES", "ArenaPrefaulter"]

U8 = npt.NDArray[np.uint8]

DEFAULT_LEAD_BYTES = 32 << 20
"""How far past the decoder's output the helper faults pages in (at most this much is faulted in for
nothing when the segment ends, and given back by ``stop``)."""

_CHUNK_BYTES = 4 << 20  # pages faulted in per call: the helper notices ``stop`` between calls
_MADV_POPULATE_WRITE = 23  # linux/mman.h (Python 3.11's mmap module does not name it)
_MADV_DONTNEED = 4


class ArenaPrefaulter:
    """Faults ``arena``'s pages in on a daemon thread, up to ``lead`` bytes past ``advance``'s mark."""

    def __init__(self, arena: U8, *, lead: int = DEFAULT_LEAD_BYTES) -> None:
        self._start = _page_up(arena.ctypes.data)  # the first whole page of the arena
        self._end = _page_down(arena.ctypes.data + arena.nbytes)
        self._base = arena.ctypes.data
        self._arena: U8 | None = arena  # kept alive while the helper may touch it
        self._lead = lead
        self._mark = 0  # arena bytes the decoder has written
        self._populated = self._start  # address up to which pages are faulted in
        self._wake = threading.Condition()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def advance(self, written: int) -> None:
        """The decoder has written ``arena[:written]``: fault pages in up to ``written + lead``."""
        if self._stopped or written <= self._mark:
            return
        with self._wake:
            self._mark = written
            self._wake.notify()
        if self._thread is None and _libc() is not None:
            self._thread = threading.Thread(target=self._run, name="arena-prefault", daemon=True)
            self._thread.start()

    def stop(self, *, used: int | None = None) -> None:
        """Stop the helper (and wait for it). ``used``: the arena bytes the result holds; pages the helper
        faulted in past them are given back (``MADV_DONTNEED``: they read as zeros if written later)."""
        with self._wake:
            self._stopped = True
            self._wake.notify()
        if self._thread is not None:
            self._thread.join()
        libc = _libc()
        keep = None if used is None else _page_up(self._base + used)
        if libc is not None and keep is not None and keep < self._populated:
            libc.madvise(keep, self._populated - keep, _MADV_DONTNEED)
        self._arena = None

    def _run(self) -> None:
        libc = _libc()
        while libc is not None:
            with self._wake:
                while not self._stopped and self._populated >= self._target():
                    self._wake.wait()
                if self._stopped:
                    return
                start = self._populated
                end = min(self._target(), start + _CHUNK_BYTES)
            if libc.madvise(start, end - start, _MADV_POPULATE_WRITE) != 0:
                return  # not supported here, or no memory: the decoder faults its own pages
            self._populated = end

    def _target(self) -> int:
        return min(self._end, _page_down(self._base + self._mark + self._lead))


def _page_up(address: int) -> int:
    return -(-address // mmap.PAGESIZE) * mmap.PAGESIZE


def _page_down(address: int) -> int:
    return address // mmap.PAGESIZE * mmap.PAGESIZE
