"""The object-store interface every lake backend implements, and its value types.

Keys are ``/``-separated and relative to the store's root; one that could escape or alias it is refused
(``InvalidObjectKeyError``) before any I/O. Put modes (after obspec): ``Create()``, ``Overwrite()``,
``UpdateIfMatch(etag)``; a losing conditional write raises ``ObjectAlreadyExistsError`` or
``PreconditionFailedError`` (**also for a missing key**, on every backend). Etags are opaque: never parse."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

from kafka_segments.errors import InvalidObjectKeyError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from kafka_segments.storage.local_mapping import MappedObject

# Key segments starting with this are reserved for a backend's own files (temp files, lock file).
RESERVED_SEGMENT_PREFIX = ".kafka-segments"


@dataclass(frozen=True, slots=True)
class ObjectMeta:
    """What a store knows about one object."""

    key: str
    size: int
    etag: str
    last_modified_ms: int


@dataclass(frozen=True, slots=True)
class PutResult:
    """The outcome of a successful put."""

    key: str
    etag: str


@dataclass(frozen=True, slots=True)
class Create:
    """Write only if the key does not exist yet."""


@dataclass(frozen=True, slots=True)
class Overwrite:
    """Write unconditionally."""


@dataclass(frozen=True, slots=True)
class UpdateIfMatch:
    """Write only if the object exists and its current etag is ``etag``."""

    etag: str


PutMode = Create | Overwrite | UpdateIfMatch

WritableBuffer: TypeAlias = "bytearray | memoryview | npt.NDArray[np.uint8]"
"""A buffer ``get_into`` writes an object into (writable and C-contiguous)."""

Progress: TypeAlias = Callable[[int], None]
"""``get_into``'s progress callback: called with the bytes read into the buffer so far."""

PROGRESS_CHUNK_BYTES = 1 << 20
"""How much ``get_into`` reads between two progress calls: well under a loopback or datacenter TCP receive
window, so the sender keeps sending while the caller works on what has arrived."""


@runtime_checkable
class ObjectStore(Protocol):
    """A flat key -> bytes store with conditional writes (S3 or a local directory)."""

    def describe(self) -> str:
        """The store's location, for messages (``s3://bucket/prefix/`` or a local path)."""
        ...

    def location(self, key: str) -> str:
        """``key``'s full location, for messages (``s3://bucket/prefix/key`` or a local path);
        ``key_location`` gives it from ``describe()``."""
        ...

    def get(self, key: str) -> bytes:
        """The object's bytes. Raises ``ObjectNotFoundError``."""
        ...

    def get_range(self, key: str, *, start: int, end: int, if_match: str | None = None) -> bytes:
        """Bytes ``[start, end)`` of the object, clipped to its size like a slice. ``if_match``: of that
        etag's version only, else ``PreconditionFailedError`` (the conditional ranged read: a range of the
        version a manifest names, never a mix of two). Raises ``ObjectNotFoundError``; ``ValueError`` if
        ``start < 0`` or ``end < start``."""
        ...

    def head(self, key: str) -> ObjectMeta:
        """The object's metadata. Raises ``ObjectNotFoundError``."""
        ...

    def list(self, prefix: str = "", *, start_after: str | None = None) -> Iterator[ObjectMeta]:
        """Every object whose key starts with ``prefix`` (a plain string prefix), sorted by key.
        ``start_after``: only the keys after it (S3's ``StartAfter``; a local store does not stat or hash
        the files it skips)."""
        ...

    def list_folders(self, prefix: str = "") -> Iterator[str]:
        """The immediate sub-folders of ``prefix`` (``""`` or ending with ``/``), sorted, each as its key
        prefix ending with ``/`` (S3's ``CommonPrefixes`` with ``Delimiter="/"``; locally the directories
        of the folder, not following links)."""
        ...

    def put(self, key: str, data: bytes, *, mode: PutMode = ...) -> PutResult:
        """Write the object atomically: readers see the old object or the new one, never a part."""
        ...

    def delete(self, key: str) -> None:
        """Delete the object; a missing key is not an error."""
        ...

    def delete_many(self, keys: Iterable[str]) -> None:
        """Delete many objects (missing ones are fine). Raises ``DeleteObjectsError`` naming the keys that
        could not be deleted."""
        ...


@runtime_checkable
class ReadIntoStore(ObjectStore, Protocol):
    """An ``ObjectStore`` that can also read an object into a caller's buffer (every backend of this
    package). ``storage.buffers.read_into`` gives the same call on any store."""

    def get_into(
        self,
        key: str,
        out: WritableBuffer,
        *,
        verify_checksum: bool = True,
        progress: Progress | None = None,
        if_match: str | None = None,
    ) -> int:
        """Write the object's bytes to ``out[:size]`` and return ``size``; the rest of ``out`` is left alone
        (the contract: ``storage.buffers``). ``verify_checksum=False`` skips the store's whole-object checksum
        for callers that verify the content themselves. ``progress`` is called with the bytes filled so far,
        which are unverified until this returns; an exception it raises stops the read. ``if_match``: read
        only that etag's version, else ``PreconditionFailedError``. Raises ``BufferTooSmallError`` (``out``
        unchanged), ``ObjectNotFoundError``, ``TypeError`` (``out`` not a writable, C-contiguous buffer)."""
        ...


@runtime_checkable
class MappingStore(ObjectStore, Protocol):
    """An ``ObjectStore`` whose objects are local files it can map instead of copying (``LocalStore``;
    ``storage.local_mapping``). Its etags are its objects' sha256 (hex), as ``head``, ``list`` and ``put``
    give them."""

    def get_mapped(self, key: str, *, if_match: str | None = None) -> MappedObject:
        """The object's bytes mapped, with its sha256 when known without hashing. ``if_match``: only that
        etag's version, else ``PreconditionFailedError``. Raises ``ObjectNotFoundError``."""
        ...

    def mapped_unchanged(self, mapped: MappedObject) -> bool:
        """Whether the object ``mapped`` maps is unchanged since (its bytes are the version mapped)."""
        ...


def key_location(root: str, key: str) -> str:
    """``key``'s full location under a store's ``describe()`` text ``root`` (what ``location`` returns)."""
    return root + key if root.endswith("/") else f"{root}/{key}"


def validate_key(key: str, *, location: str) -> str:
    """``key`` if it is a safe relative key, else ``InvalidObjectKeyError`` (naming ``location``)."""
    problem = _key_problem(key, allow_empty=False)
    if problem:
        raise InvalidObjectKeyError(f"invalid object key {key!r}: {problem}", location=location)
    return key


def validate_folder(prefix: str, *, location: str) -> str:
    """``prefix`` if it names a folder to list (``""`` or a valid prefix ending with ``/``)."""
    if prefix and not prefix.endswith("/"):
        raise InvalidObjectKeyError(f"invalid folder {prefix!r}: it must end with '/'", location=location)
    return validate_prefix(prefix, location=location)


def validate_prefix(prefix: str, *, location: str) -> str:
    """``prefix`` if it is a safe listing prefix (may be empty or end with ``/``)."""
    trimmed = prefix[:-1] if prefix.endswith("/") else prefix
    problem = _key_problem(trimmed, allow_empty=True)
    if problem:
        raise InvalidObjectKeyError(f"invalid key prefix {prefix!r}: {problem}", location=location)
    return prefix


def _key_problem(key: str, *, allow_empty: bool) -> str | None:  # noqa: PLR0911 - one return per rule an object key breaks, each with its message
    if not key:
        return None if allow_empty else "empty key"
    if "\\" in key:
        return "backslashes are not allowed"
    if "\x00" in key:
        return "NUL characters are not allowed"
    if key.startswith("/"):
        return "absolute keys are not allowed"
    for segment in key.split("/"):
        if segment in {"", ".", ".."}:
            return "empty, '.' and '..' segments are not allowed"
        if segment.startswith(RESERVED_SEGMENT_PREFIX):
            return f"segments starting with {RESERVED_SEGMENT_PREFIX!r} are reserved"
    return None


def check_range(start: int, end: int) -> None:
    """``ValueError`` unless ``0 <= start <= end``."""
    if start < 0 or end < start:
        raise ValueError(f"invalid byte range [{start}, {end}): need 0 <= start <= end")
