"""Reading an object into a caller's buffer (``get_into``): the checks every backend shares.

A worker keeps one large input buffer: the first touch of fresh pages is slow on this project's VMs, so a
new ``bytes`` per GET costs as much as the transfer (bench/RESULTS.md). The contract (``tests/contract``):
``out[:size]`` gets the object, the rest is left alone; an object larger than ``out`` raises
``BufferTooSmallError`` before anything is written; a body shorter or longer than announced raises
``ObjectStoreError``; ``if_match=etag`` reads only that version (``PreconditionFailedError`` otherwise)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from kafka_segments.errors import ObjectStoreError, PreconditionFailedError
from kafka_segments.storage.base import ObjectStore, Progress, ReadIntoStore, WritableBuffer, validate_key

if TYPE_CHECKING:
    from typing_extensions import Buffer


class BufferTooSmallError(ObjectStoreError, ValueError):
    """The object does not fit the buffer given to ``get_into``; nothing was written to the buffer.

    Attributes:
        object_size: the object's size in bytes.
        buffer_size: the buffer's size in bytes.
    """

    def __init__(self, *, location: str, object_size: int, buffer_size: int) -> None:
        self.object_size = object_size
        self.buffer_size = buffer_size
        super().__init__(
            f"object of {object_size} bytes does not fit the {buffer_size}-byte buffer (nothing read)",
            location=location,
        )


def writable_view(out: WritableBuffer, *, location: str) -> memoryview:
    """``out`` as a flat, writable byte view (a multi-byte or multi-dimensional buffer is cast to bytes).

    Raises:
        TypeError: ``out`` is not a buffer, is read-only (``bytes``) or is not C-contiguous.
    """
    view = memoryview(cast("Buffer", out))  # numpy's stubs declare the buffer protocol from Python 3.12 on
    if view.readonly:
        raise TypeError(f"{location}: get_into needs a writable buffer, got a read-only {type(out).__name__}")
    if not view.c_contiguous:
        raise TypeError(f"{location}: get_into needs a C-contiguous buffer")
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def check_fits(object_size: int, buffer_size: int, *, location: str) -> None:
    """``BufferTooSmallError`` unless an object of ``object_size`` bytes fits ``buffer_size`` bytes."""
    if object_size > buffer_size:
        raise BufferTooSmallError(location=location, object_size=object_size, buffer_size=buffer_size)


def check_etag(store: ObjectStore, key: str, expected: str | None, *, location: str) -> None:
    """``PreconditionFailedError`` unless ``expected`` is ``None`` or the object's etag (``head``)."""
    if expected is not None:
        etag_mismatch(expected, store.head(key).etag, location=location)


def etag_mismatch(expected: str, found: str, *, location: str) -> None:
    """``PreconditionFailedError`` naming both etags unless they are equal."""
    if found != expected:
        raise PreconditionFailedError(
            f"the object changed: its etag is {found}, not {expected}", location=location
        )


def read_into(
    store: ObjectStore,
    key: str,
    out: WritableBuffer,
    *,
    verify_checksum: bool = True,
    progress: Progress | None = None,
    if_match: str | None = None,
) -> int:
    """``store.get_into(key, out)`` on any ``ObjectStore``: the backend's own ``get_into``, else ``store.get``
    copied into ``out`` (for wrappers such as a test's fault-injecting store: ``progress`` is then called
    once, ``if_match`` checked with ``head`` before and after the ``get``).

    Raises:
        BufferTooSmallError: the object does not fit ``out`` (``out`` unchanged).
        PreconditionFailedError: ``if_match`` is given and is not the object's etag.
        ObjectNotFoundError, ObjectStoreError: as ``get``.
        TypeError: ``out`` is not a writable, C-contiguous buffer.
    """
    if isinstance(store, ReadIntoStore):
        return store.get_into(key, out, verify_checksum=verify_checksum, progress=progress, if_match=if_match)
    location = store.location(validate_key(key, location=store.describe()))
    view = writable_view(out, location=location)
    check_etag(store, key, if_match, location=location)
    data = store.get(key)
    check_etag(store, key, if_match, location=location)
    check_fits(len(data), len(view), location=location)
    view[: len(data)] = data
    if progress is not None:
        progress(len(data))
    return len(data)
