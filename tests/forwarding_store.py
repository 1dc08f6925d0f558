"""``ForwardingStore``: an ``ObjectStore`` that hands every call to another one (test support).

The base for the tests' wrappers that change or observe a few calls (counting reads, injecting failures):
subclass it and override only those.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from kafka_segments.storage.base import (
    ObjectMeta,
    ObjectStore,
    Overwrite,
    Progress,
    PutMode,
    PutResult,
    WritableBuffer,
)
from kafka_segments.storage.buffers import read_into

_OVERWRITE = Overwrite()


class ForwardingStore:
    """Forwards every ``ObjectStore`` call to ``inner`` unchanged."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner

    def describe(self) -> str:
        return self.inner.describe()

    def location(self, key: str) -> str:
        return self.inner.location(key)

    def get(self, key: str) -> bytes:
        return self.inner.get(key)

    def get_into(
        self,
        key: str,
        out: WritableBuffer,
        *,
        verify_checksum: bool = True,
        progress: Progress | None = None,
        if_match: str | None = None,
    ) -> int:
        """``inner.get_into``; through ``inner.get`` when ``inner`` has no ``get_into`` (``read_into``).
        A subclass that overrides ``get`` to observe or fail reads must override this as well."""
        return read_into(
            self.inner, key, out, verify_checksum=verify_checksum, progress=progress, if_match=if_match
        )

    def get_range(self, key: str, *, start: int, end: int, if_match: str | None = None) -> bytes:
        return self.inner.get_range(key, start=start, end=end, if_match=if_match)

    def head(self, key: str) -> ObjectMeta:
        return self.inner.head(key)

    def list(self, prefix: str = "", *, start_after: str | None = None) -> Iterator[ObjectMeta]:
        return self.inner.list(prefix, start_after=start_after)

    def list_folders(self, prefix: str = "") -> Iterator[str]:
        return self.inner.list_folders(prefix)

    def put(self, key: str, data: bytes, *, mode: PutMode = _OVERWRITE) -> PutResult:
        return self.inner.put(key, data, mode=mode)

    def delete(self, key: str) -> None:
        self.inner.delete(key)

    def delete_many(self, keys: Iterable[str]) -> None:
        self.inner.delete_many(keys)
