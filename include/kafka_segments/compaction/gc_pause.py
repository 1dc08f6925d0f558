"""Pausing Python's cyclic garbage collector while a round allocates its per-batch objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a round (or its output), then restore its previous state.

    A round allocates a few objects per batch (~10^5 for a 1 GiB segment of 1 KiB records) and no reference
    cycles; those allocations trigger full collections that walk every object of the process, which slows a
    round down badly once another library has filled the heap (bench/RESULTS.md). Reference counting still
    frees everything; only cycle detection waits for the round's end."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
