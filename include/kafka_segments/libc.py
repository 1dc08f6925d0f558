"""The C library through ctypes, loaded once on first use: the memory calls that run without the GIL, for
the mapped local reads (``storage.local_mapping``: ``mmap``, ``munmap``) and the arena prefaulter
(``records.fast.prefault``: ``madvise``)."""

from __future__ import annotations

import ctypes
import functools

__all__ = ["libc"]


@functools.cache
def libc() -> ctypes.CDLL | None:
    """The C library with ``mmap``, ``munmap`` and ``madvise`` typed, or ``None`` where there is none."""
    try:
        library = ctypes.CDLL(None, use_errno=True)
        mmap, munmap, madvise = library.mmap, library.munmap, library.madvise
    except (OSError, AttributeError):
        return None
    mmap.restype = ctypes.c_void_p
    mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    madvise.restype = ctypes.c_int
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return library
