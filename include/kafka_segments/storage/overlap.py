"""Reading an object while working on what has arrived: ``get_into`` on a helper thread (``read_overlapped``).

``get_into(progress=...)`` calls its callback in the reading thread, between two reads: while the callback
works, nothing drains the socket, the receive window fills and the sender stops (and, on a loopback or
datacenter link, the transfer then restarts at the pace of TCP's window updates). ``read_overlapped`` keeps
reading on a helper thread — botocore's and the file system's reads release the GIL — and calls ``consume``
in the caller's thread with the bytes read so far, as often as it can keep up (it may skip intermediate
counts; the last call always has the whole object). ``consume`` is meant for GIL-free work (numba kernels
with ``nogil``), so both threads make progress even on one core.

Errors: the read's own (as ``get_into``) once ``consume`` has seen everything read before it failed; an
exception from ``consume`` stops the read (the helper gives up at its next chunk) and is raised as it is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from kafka_segments.storage.base import ObjectStore, WritableBuffer
from kafka_segments.storage.buffers import read_into

__all__ = ["read_overlapped"]


class _CancelledError(Exception):
    """Raised in the reading thread to stop the read after ``consume`` failed."""


class _Arrivals:
    """What the reading thread has read, handed to the consuming thread."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.filled = 0
        self.size: int | None = None  # set when the read has returned
        self.error: BaseException | None = None
        self.cancelled = False

    def arrived(self, filled: int) -> None:
        with self.changed:
            if self.cancelled:
                raise _CancelledError
            self.filled = filled
            self.changed.notify()

    def finished(self, size: int | None, error: BaseException | None) -> None:
        with self.changed:
            self.size, self.error = size, error
            self.changed.notify()

    def next(self, seen: int) -> tuple[int, bool]:
        """(bytes read, whether the read has ended), once either changes from ``seen`` bytes not ended."""
        with self.changed:
            self.changed.wait_for(
                lambda: self.filled > seen or self.size is not None or self.error is not None
            )
            return self.filled, self.size is not None or self.error is not None


def read_overlapped(
    store: ObjectStore,
    key: str,
    out: WritableBuffer,
    *,
    consume: Callable[[int], None],
    verify_checksum: bool = True,
) -> int:
    """``read_into(store, key, out)`` on a helper thread while ``consume(filled)`` runs here as bytes arrive.

    Returns the object's size; ``consume`` has then been called with it (unless the object is empty).

    Raises:
        what ``read_into`` raises, or what ``consume`` raises.
    """
    arrivals = _Arrivals()

    def read() -> None:
        try:
            size = read_into(store, key, out, verify_checksum=verify_checksum, progress=arrivals.arrived)
        except BaseException as exc:  # handed to the consuming thread, which raises it
            arrivals.finished(None, exc)
        else:
            arrivals.finished(size, None)

    reader = threading.Thread(target=read, name=f"read {key}", daemon=True)
    reader.start()
    seen = 0
    try:
        while True:
            filled, ended = arrivals.next(seen)
            if filled > seen:
                consume(filled)
                seen = filled
            if ended and arrivals.filled == seen:
                break
    except BaseException:
        with arrivals.changed:
            arrivals.cancelled = True
        reader.join()
        raise
    reader.join()
    if arrivals.error is not None:
        raise arrivals.error
    if arrivals.size is None:  # finished() always sets one of the two
        raise RuntimeError(f"read of {key} ended without a size")
    return arrivals.size
