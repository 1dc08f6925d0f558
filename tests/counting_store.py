"""``CountingStore``: an ``ObjectStore`` wrapper that counts what its callers ask of the store (test support,
and ``bench/scale_bench.py``'s request counts).

Every call is counted by kind (``list``, ``get``, ``get_range``, ``get_into``, ``get_mapped``, ``head``,
``put``, ``delete``, ``delete_many``) and by the *area* of its key: the first of ``areas`` whose prefix the
key starts with (the lake's manifests, the partition pieces of format 2, the run folders, the rest of
``_kafka_segments/``, and everything else: the segment objects); ``delete_many`` counts one call per key.
Bytes read (what ``get``, ``get_range``,
``get_into`` and ``get_mapped`` deliver) and bytes written (what ``put`` sends) are summed the same way, and
each call is kept (``calls``) so that a test can ask which keys were read; a ``get``, ``get_range`` or
``head`` of a missing object is counted too (on S3 it is a request, a 404). A listing counts one call, in the
area of its prefix, and the objects it yields (``list_folders``: a ``list`` call, its folders counted as
listed). ``reset()`` starts the counts again.

``counting_store(inner)`` wraps any store; when ``inner`` maps its objects (a local lake: ``MappingStore``)
the wrapper maps them too, so that a run through it takes the same paths as without it. Calls may come
from several threads (a run's fan-outs): the counts are kept under a lock.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from forwarding_store import ForwardingStore
from kafka_segments.errors import ObjectNotFoundError
from kafka_segments.storage.base import (
    MappingStore,
    ObjectMeta,
    ObjectStore,
    Overwrite,
    Progress,
    PutMode,
    PutResult,
    WritableBuffer,
)
from kafka_segments.storage.local_mapping import MappedObject

MANIFESTS = "manifests"
PARTITIONS = "partitions"
RUNS = "runs"
META = "meta"
SEGMENTS = "segments"

DEFAULT_AREAS: Mapping[str, str] = {
    MANIFESTS: "_kafka_segments/manifests/",
    PARTITIONS: "_kafka_segments/partitions/",
    RUNS: "_kafka_segments/runs/",
    META: "_kafka_segments/",
    SEGMENTS: "",
}
"""Area name -> key prefix, matched in this order (the first match wins; ``""`` matches every key).
``partitions`` is where manifest format 2 keeps its partition manifests and chunks
(docs/metadata-format-2.md): with ``manifests`` it is a version's metadata."""

METADATA_AREAS = (MANIFESTS, PARTITIONS)
"""The areas holding a version's metadata, in either manifest format."""

READ_KINDS = frozenset({"get", "get_range", "get_into", "get_mapped"})
WRITE_KINDS = frozenset({"put"})

_OVERWRITE = Overwrite()


@dataclass(frozen=True, slots=True)
class Call:
    """One call to the store: its kind, its key (a listing's prefix), the area of that key, the bytes it
    read or wrote, and the objects a listing yielded (counted as they are yielded)."""

    kind: str
    key: str
    area: str
    bytes: int = 0


@dataclass(frozen=True, slots=True)
class Counts:
    """The counts at one moment (``CountingStore.counts()``)."""

    requests: Mapping[tuple[str, str], int]
    """(area, kind) -> calls."""
    bytes_read: Mapping[str, int]
    """area -> bytes delivered by reads."""
    bytes_written: Mapping[str, int]
    """area -> bytes sent by puts."""
    listed: Mapping[str, int]
    """area (of the listing's prefix) -> objects the listings yielded."""

    def calls(self, *, kind: str | None = None, area: str | None = None) -> int:
        """The calls of ``kind`` (any when ``None``) in ``area`` (any when ``None``)."""
        return sum(
            n
            for (a, k), n in self.requests.items()
            if (kind is None or k == kind) and (area is None or a == area)
        )

    def read(self, *areas: str) -> int:
        """Bytes read in ``areas`` (every area when none is given)."""
        return sum(n for a, n in self.bytes_read.items() if not areas or a in areas)

    def written(self, *areas: str) -> int:
        """Bytes written in ``areas`` (every area when none is given)."""
        return sum(n for a, n in self.bytes_written.items() if not areas or a in areas)

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready form: ``{"requests": {area: {kind: n}}, "bytes_read": …, "bytes_written": …,
        "listed": …}``."""
        requests: dict[str, dict[str, int]] = {}
        for (area, kind), n in sorted(self.requests.items()):
            requests.setdefault(area, {})[kind] = n
        return {
            "requests": requests,
            "bytes_read": dict(sorted(self.bytes_read.items())),
            "bytes_written": dict(sorted(self.bytes_written.items())),
            "listed": dict(sorted(self.listed.items())),
        }


class CountingStore(ForwardingStore):
    """Forwards every call to ``inner`` and counts it (see the module docstring)."""

    def __init__(self, inner: ObjectStore, *, areas: Mapping[str, str] = DEFAULT_AREAS) -> None:
        super().__init__(inner)
        self.areas = tuple(areas.items())
        self._lock = threading.Lock()
        self._calls: list[Call] = []
        self._listed: Counter[str] = Counter()

    # -- the counts ----------------------------------------------------------------------------------------

    def area(self, key: str) -> str:
        """The area ``key`` belongs to (the first prefix it starts with); ``"other"`` if none matches."""
        for name, prefix in self.areas:
            if key.startswith(prefix):
                return name
        return "other"

    def reset(self) -> None:
        """Forget every call counted so far."""
        with self._lock:
            self._calls.clear()
            self._listed.clear()

    @property
    def calls(self) -> tuple[Call, ...]:
        """Every call since the last ``reset``, in the order they were made."""
        with self._lock:
            return tuple(self._calls)

    def counts(self) -> Counts:
        """The counts since the last ``reset``."""
        requests: Counter[tuple[str, str]] = Counter()
        read: Counter[str] = Counter()
        written: Counter[str] = Counter()
        with self._lock:
            calls = tuple(self._calls)
            listed = dict(self._listed)
        for call in calls:
            requests[call.area, call.kind] += 1
            if call.kind in READ_KINDS:
                read[call.area] += call.bytes
            elif call.kind in WRITE_KINDS:
                written[call.area] += call.bytes
        return Counts(
            requests=dict(requests), bytes_read=dict(read), bytes_written=dict(written), listed=listed
        )

    def read_keys(self) -> list[str]:
        """The keys read (``get``, ``get_range``, ``get_into``, ``get_mapped``) since the last ``reset``."""
        return [call.key for call in self.calls if call.kind in READ_KINDS]

    def _count(self, kind: str, key: str, size: int = 0) -> None:
        call = Call(kind, key, self.area(key), size)
        with self._lock:
            self._calls.append(call)

    # -- the store -----------------------------------------------------------------------------------------

    def get(self, key: str) -> bytes:
        try:
            data = self.inner.get(key)
        except ObjectNotFoundError:
            self._count("get", key)  # a request all the same (on S3, a 404)
            raise
        self._count("get", key, len(data))
        return data

    def get_into(
        self,
        key: str,
        out: WritableBuffer,
        *,
        verify_checksum: bool = True,
        progress: Progress | None = None,
        if_match: str | None = None,
    ) -> int:
        size = super().get_into(
            key, out, verify_checksum=verify_checksum, progress=progress, if_match=if_match
        )
        self._count("get_into", key, size)
        return size

    def get_range(self, key: str, *, start: int, end: int) -> bytes:
        try:
            data = self.inner.get_range(key, start=start, end=end)
        except ObjectNotFoundError:
            self._count("get_range", key)  # a request all the same (on S3, a 404)
            raise
        self._count("get_range", key, len(data))
        return data

    def head(self, key: str) -> ObjectMeta:
        try:
            meta = self.inner.head(key)
        finally:
            self._count("head", key)
        return meta

    def list(self, prefix: str = "", *, start_after: str | None = None) -> Iterator[ObjectMeta]:
        self._count("list", prefix)
        area = self.area(prefix)
        for meta in self.inner.list(prefix, start_after=start_after):
            with self._lock:
                self._listed[area] += 1
            yield meta

    def list_folders(self, prefix: str = "") -> Iterator[str]:
        """Counted as a ``list`` request; its folders count as listed objects."""
        self._count("list", prefix)
        area = self.area(prefix)
        for folder in self.inner.list_folders(prefix):
            with self._lock:
                self._listed[area] += 1
            yield folder

    def put(self, key: str, data: bytes, *, mode: PutMode = _OVERWRITE) -> PutResult:
        result = self.inner.put(key, data, mode=mode)
        self._count("put", key, len(data))
        return result

    def delete(self, key: str) -> None:
        self.inner.delete(key)
        self._count("delete", key)

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        self.inner.delete_many(keys)
        for key in keys:
            self._count("delete_many", key)


class CountingMappingStore(CountingStore):
    """A ``CountingStore`` of a store that maps its objects (``MappingStore``): it maps them too."""

    inner: MappingStore

    def __init__(self, inner: MappingStore, *, areas: Mapping[str, str] = DEFAULT_AREAS) -> None:
        super().__init__(inner, areas=areas)

    def get_mapped(self, key: str, *, if_match: str | None = None) -> MappedObject:
        mapped = self.inner.get_mapped(key, if_match=if_match)
        self._count("get_mapped", key, mapped.size)
        return mapped

    def mapped_unchanged(self, mapped: MappedObject) -> bool:
        return self.inner.mapped_unchanged(mapped)


def counting_store(inner: ObjectStore, *, areas: Mapping[str, str] = DEFAULT_AREAS) -> CountingStore:
    """A counting wrapper of ``inner``: a ``MappingStore`` itself when ``inner`` is one."""
    if isinstance(inner, MappingStore):
        return CountingMappingStore(inner, areas=areas)
    return CountingStore(inner, areas=areas)
