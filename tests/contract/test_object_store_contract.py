"""One suite, every object-store backend: a local directory and S3 (moto's server over real HTTP, and
ministack's, an independent implementation: ``tests/ministack_fixtures.py``).

``get_into`` is exercised through ``read_into`` (which calls the backend's own ``get_into``), so the same
tests also cover the fallback for stores without one."""

from __future__ import annotations

import io
import os
import pickle
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
import pytest
from forwarding_store import ForwardingStore
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_segments.errors import (
    InvalidObjectKeyError,
    ObjectAlreadyExistsError,
    ObjectNotFoundError,
    ObjectStoreError,
    PreconditionFailedError,
)
from kafka_segments.storage import (
    BufferTooSmallError,
    Create,
    LocalStore,
    ObjectMeta,
    ObjectStore,
    Overwrite,
    PutMode,
    PutResult,
    ReadIntoStore,
    S3Store,
    UpdateIfMatch,
    WritableBuffer,
    read_into,
    s3_reads,
)
from kafka_segments.storage import local as local_module
from kafka_segments.storage import s3 as s3_module
from ministack_fixtures import BACKENDS, backend_store

pytestmark = pytest.mark.contract


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    """Every backend: a local directory, S3 on moto's server, S3 on ministack (a second implementation)."""
    return backend_store(request, tmp_path)


def test_put_get_head_list_round_trip(store: ObjectStore) -> None:
    objects = {"b.txt": b"bee", "a/2.log": b"22", "a/1.log": b"1", "a/10.log": b"ten", "ab": b""}
    for key, data in objects.items():
        result = store.put(key, data)
        assert result.key == key
        assert store.head(key).etag == result.etag
    for key, data in objects.items():
        assert store.get(key) == data
        meta = store.head(key)
        assert (meta.key, meta.size) == (key, len(data))
        assert meta.last_modified_ms > 0
    assert [m.key for m in store.list()] == sorted(objects)
    assert [m.key for m in store.list("a/")] == ["a/1.log", "a/10.log", "a/2.log"]
    assert [m.key for m in store.list("a")] == ["a/1.log", "a/10.log", "a/2.log", "ab"]
    assert [m.key for m in store.list("a/1")] == ["a/1.log", "a/10.log"]
    assert list(store.list("zzz/")) == []
    listed = {m.key: m for m in store.list()}
    assert listed["b.txt"] == store.head("b.txt")


def test_list_start_after_lists_only_the_keys_after_it(store: ObjectStore) -> None:
    keys = [
        "t-0/00000000000000000000.log",
        "t-0/00000000000000000005.index",
        "t-0/00000000000000000005.log",
        "t-0/00000000000000000005-run1.log",
        "t-0/00000000000000000009.log",
        "t-0/partition.metadata",
        "t-1/00000000000000000000.log",
    ]
    for key in keys:
        store.put(key, key.encode())
    after = store.list("t-0/", start_after="t-0/00000000000000000005")
    assert [m.key for m in after] == [
        "t-0/00000000000000000005-run1.log",
        "t-0/00000000000000000005.index",
        "t-0/00000000000000000005.log",
        "t-0/00000000000000000009.log",
        "t-0/partition.metadata",
    ]
    assert [m.key for m in store.list("t-0/", start_after="t-0/00000000000000000009.log")] == [
        "t-0/partition.metadata"
    ]
    assert list(store.list("t-0/", start_after="t-0/zzz")) == []
    assert [m.key for m in store.list("", start_after="t-0/zzz")] == ["t-1/00000000000000000000.log"]
    assert [m.key for m in store.list("t-1/", start_after="")] == ["t-1/00000000000000000000.log"]
    listed = {m.key: m for m in store.list("t-0/", start_after="t-0/00000000000000000005")}
    assert listed["t-0/00000000000000000009.log"] == store.head("t-0/00000000000000000009.log")


def test_list_folders_gives_the_immediate_sub_folders(store: ObjectStore) -> None:
    for key in ["a-b/x", "a/1", "a/deep/2", "ab/c/d", "top.txt", "_meta/runs/r1/run.json"]:
        store.put(key, b"x")
    assert list(store.list_folders()) == ["_meta/", "a-b/", "a/", "ab/"]
    assert list(store.list_folders("a/")) == ["a/deep/"]
    assert list(store.list_folders("_meta/")) == ["_meta/runs/"]
    assert list(store.list_folders("a/deep/")) == []
    assert list(store.list_folders("missing/")) == []
    with pytest.raises(InvalidObjectKeyError):
        list(store.list_folders("a"))


def test_overwrite_replaces_content_and_etag(store: ObjectStore) -> None:
    first = store.put("k", b"one")
    second = store.put("k", b"two")
    assert store.get("k") == b"two"
    assert first.etag != second.etag


def test_ranged_get(store: ObjectStore) -> None:
    data = bytes(range(256)) * 4
    store.put("seg.log", data)
    assert store.get_range("seg.log", start=0, end=10) == data[:10]
    assert store.get_range("seg.log", start=100, end=356) == data[100:356]
    assert store.get_range("seg.log", start=1000, end=5000) == data[1000:]
    assert store.get_range("seg.log", start=7, end=7) == b""
    assert store.get_range("seg.log", start=2000, end=3000) == b""
    with pytest.raises(ValueError, match="byte range"):
        store.get_range("seg.log", start=5, end=4)
    with pytest.raises(ObjectNotFoundError):
        store.get_range("missing.log", start=0, end=4)


def test_a_ranged_read_if_match_reads_only_that_version(store: ObjectStore) -> None:
    first = store.put("v.log", b"version one")
    assert store.get_range("v.log", start=8, end=11, if_match=first.etag) == b"one"
    assert store.get_range("v.log", start=4, end=4, if_match=first.etag) == b""

    second = store.put("v.log", b"version two!")
    for start, end in ((8, 11), (4, 4)):
        with pytest.raises(PreconditionFailedError, match=r"the object changed") as caught:
            store.get_range("v.log", start=start, end=end, if_match=first.etag)
        assert first.etag in str(caught.value)
        assert caught.value.location.endswith("v.log")
    assert store.get_range("v.log", start=8, end=11, if_match=second.etag) == b"two"
    with pytest.raises(ObjectNotFoundError, match=r"gone\.log"):
        store.get_range("gone.log", start=0, end=1, if_match=first.etag)


def test_create_is_exclusive(store: ObjectStore) -> None:
    store.put("manifest/1", b"first", mode=Create())
    with pytest.raises(ObjectAlreadyExistsError, match="manifest/1"):
        store.put("manifest/1", b"second", mode=Create())
    assert store.get("manifest/1") == b"first"


def test_update_if_match(store: ObjectStore) -> None:
    created = store.put("pointer", b"v1", mode=Create())
    updated = store.put("pointer", b"v2", mode=UpdateIfMatch(created.etag))
    assert updated.etag != created.etag
    assert store.get("pointer") == b"v2"
    assert store.head("pointer").etag == updated.etag
    with pytest.raises(PreconditionFailedError, match="pointer"):
        store.put("pointer", b"v3", mode=UpdateIfMatch(created.etag))
    assert store.get("pointer") == b"v2"


def test_update_if_match_on_missing_key_is_precondition_failed(store: ObjectStore) -> None:
    etag = store.put("other", b"x").etag
    with pytest.raises(PreconditionFailedError, match="missing"):
        store.put("missing", b"x", mode=UpdateIfMatch(etag))
    with pytest.raises(ObjectNotFoundError):
        store.head("missing")


def test_a_key_location_is_the_store_location_and_the_key(store: ObjectStore) -> None:
    root = store.describe()
    assert store.location("runs/r1/run.json") == root.rstrip("/") + "/runs/r1/run.json"
    assert ForwardingStore(store).location("a/b") == store.location("a/b")


def test_missing_objects_are_not_found_errors_naming_the_key(store: ObjectStore) -> None:
    with pytest.raises(ObjectNotFoundError, match=r"no/such\.key"):
        store.get("no/such.key")
    with pytest.raises(ObjectNotFoundError, match=r"no/such\.key"):
        store.head("no/such.key")


def test_delete_is_idempotent(store: ObjectStore) -> None:
    store.put("d", b"x")
    store.delete("d")
    store.delete("d")
    with pytest.raises(ObjectNotFoundError):
        store.get("d")
    assert list(store.list()) == []


def test_delete_many_in_batches(store: ObjectStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two and a half batches, with S3's batch (``DeleteObjects`` takes 1,000 keys at most) made 100: the
    batching is the point, not the number, and 1,500 puts took most of this module's time. Each
    ``DeleteObjects`` call is counted and sized."""
    assert s3_module.DELETE_BATCH_SIZE <= 1000
    monkeypatch.setattr(s3_module, "DELETE_BATCH_SIZE", 100)
    keys = [f"p/{i:05d}" for i in range(250)]
    for key in keys:
        store.put(key, b"")
    store.put("keep", b"k")
    batches: list[int] = []
    if isinstance(store, S3Store):
        store.client().meta.events.register(
            "before-parameter-build.s3.DeleteObjects",
            lambda params, **_: batches.append(len(params["Delete"]["Objects"])),
        )
    store.delete_many([*keys, "never-existed"])
    assert [m.key for m in store.list()] == ["keep"]
    store.delete_many([])
    assert batches == ([100, 100, 51] if isinstance(store, S3Store) else [])


@pytest.mark.parametrize(
    "key", ["../x", "/abs", "a/../../b", "", "a\\b", "a//b", "./a", "a/", ".kafka-segments.lock"]
)
def test_escaping_keys_are_refused(store: ObjectStore, key: str) -> None:
    with pytest.raises(InvalidObjectKeyError, match="invalid object key"):
        store.put(key, b"x")
    with pytest.raises(InvalidObjectKeyError):
        store.get(key)
    with pytest.raises(InvalidObjectKeyError):
        store.delete_many(["fine", key])
    with pytest.raises(InvalidObjectKeyError):
        list(store.list("../"))


def test_concurrent_creates_have_exactly_one_winner(store: ObjectStore) -> None:
    threads = 8
    barrier = threading.Barrier(threads)
    winners: list[int] = []
    losers: list[int] = []

    def race(i: int) -> None:
        barrier.wait()
        try:
            store.put("commit", f"writer {i}".encode(), mode=Create())
        except ObjectAlreadyExistsError:
            losers.append(i)
        else:
            winners.append(i)

    workers = [threading.Thread(target=race, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(winners) == 1
    assert len(losers) == threads - 1
    assert store.get("commit") == f"writer {winners[0]}".encode()


def test_store_survives_pickling(store: ObjectStore) -> None:
    store.put("before", b"1")
    store.head("before")  # builds clients / caches before pickling
    copy: ObjectStore = pickle.loads(pickle.dumps(store))
    assert copy.describe() == store.describe()
    assert copy.get("before") == b"1"
    copy.put("after", b"2")
    assert store.get("after") == b"2"


class _FailingStream(io.BytesIO):
    """Hands out the first half of its bytes, then fails like a dying upload source."""

    def read(self, size: int | None = -1) -> bytes:
        half = len(self.getbuffer()) // 2
        if self.tell() >= half:
            raise OSError("source failed mid-upload")
        wanted = half - self.tell() if size is None or size < 0 else min(size, half - self.tell())
        return super().read(wanted)


def test_a_failed_put_publishes_nothing(
    store: ObjectStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if isinstance(store, LocalStore):

        def write_half_then_fail(fd: int, data: bytes) -> None:
            os.write(fd, data[: len(data) // 2])
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(local_module, "_write_fully", write_half_then_fail)
        with pytest.raises(ObjectStoreError, match="No space left"):
            store.put("dir/obj", b"0123456789")
        leftovers = [p.name for p in (tmp_path / "lake").rglob("*") if p.is_file()]
        assert [name for name in leftovers if name.startswith(".kafka-segments-tmp")] == []
    else:
        assert isinstance(store, S3Store)
        with pytest.raises(OSError, match="mid-upload"):
            store.client().put_object(
                Bucket=store.bucket, Key=f"{store.prefix}dir/obj", Body=_FailingStream(b"0123456789" * 1000)
            )
    with pytest.raises(ObjectNotFoundError):
        store.get("dir/obj")
    assert list(store.list()) == []


# --- get_into: reading an object into the caller's buffer ---------------------------------------------------

SENTINEL = 0xA5


def _buffers(size: int) -> dict[str, WritableBuffer]:
    return {
        "bytearray": bytearray([SENTINEL]) * size,
        "memoryview": memoryview(bytearray([SENTINEL]) * size),
        "numpy": np.full(size, SENTINEL, dtype=np.uint8),
    }


def test_every_backend_reads_into_buffers(store: ObjectStore) -> None:
    assert isinstance(store, ReadIntoStore)
    assert isinstance(ForwardingStore(store), ReadIntoStore)


@pytest.mark.parametrize("kind", ["bytearray", "memoryview", "numpy"])
def test_get_into_writes_the_object_and_leaves_the_rest_of_the_buffer(store: ObjectStore, kind: str) -> None:
    data = bytes(range(256)) * 3 + b"tail"
    store.put("seg/0.log", data)
    out = _buffers(len(data) + 100)[kind]
    assert read_into(store, "seg/0.log", out) == len(data)
    assert bytes(out[: len(data)]) == data
    assert bytes(out[len(data) :]) == bytes([SENTINEL]) * 100


def test_get_into_an_exact_fit_and_an_empty_object(store: ObjectStore) -> None:
    store.put("exact", b"12345")
    store.put("empty", b"")
    out = bytearray(5)
    assert read_into(store, "exact", out) == 5
    assert out == b"12345"
    assert read_into(store, "empty", out) == 0
    assert out == b"12345"
    assert read_into(store, "empty", bytearray()) == 0


def test_an_object_larger_than_the_buffer_is_refused_and_nothing_is_written(store: ObjectStore) -> None:
    store.put("big.log", b"x" * 11)
    out = bytearray([SENTINEL]) * 10
    with pytest.raises(BufferTooSmallError, match=r"big\.log.*11 bytes.*10-byte buffer") as caught:
        read_into(store, "big.log", out)
    assert (caught.value.object_size, caught.value.buffer_size) == (11, 10)
    assert isinstance(caught.value, ObjectStoreError)
    assert out == bytes([SENTINEL]) * 10
    assert store.get("big.log") == b"x" * 11  # the store is still usable (the unread body was dropped)


def test_get_into_a_missing_object_is_not_found_naming_the_key(store: ObjectStore) -> None:
    out = bytearray([SENTINEL]) * 4
    with pytest.raises(ObjectNotFoundError, match=r"no/such\.log"):
        read_into(store, "no/such.log", out)
    assert out == bytes([SENTINEL]) * 4


@pytest.mark.parametrize(
    "out",
    [b"read-only bytes", memoryview(bytearray(16)).toreadonly(), np.zeros(32, dtype=np.uint8)[::2]],
    ids=["bytes", "read-only view", "strided array"],
)
def test_get_into_needs_a_writable_contiguous_buffer(store: ObjectStore, out: object) -> None:
    store.put("k", b"data")
    with pytest.raises(TypeError, match="get_into needs a"):
        read_into(store, "k", out)  # type: ignore[arg-type]


def test_get_into_refuses_escaping_keys(store: ObjectStore) -> None:
    with pytest.raises(InvalidObjectKeyError):
        read_into(store, "../x", bytearray(4))


def test_get_into_crosses_read_chunks(store: ObjectStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(s3_reads, "READ_CHUNK_BYTES", 7)  # S3 reads 7 bytes per readinto; local ignores it
    data = bytes(range(256)) * 4 + b"odd"
    store.put("chunks", data)
    out = np.zeros(len(data) + 3, dtype=np.uint8)
    for verify in (True, False):
        out[:] = SENTINEL
        assert read_into(store, "chunks", out, verify_checksum=verify) == len(data)
        assert out[: len(data)].tobytes() == data
        assert out[len(data) :].tolist() == [SENTINEL] * 3


def test_get_into_reports_progress_chunk_by_chunk(
    store: ObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in (s3_reads, local_module):
        monkeypatch.setattr(module, "PROGRESS_CHUNK_BYTES", 100)
    data = bytes(range(256)) * 4 + b"odd"
    store.put("progress", data)
    out = np.zeros(len(data), dtype=np.uint8)
    seen: list[int] = []

    def progress(filled: int) -> None:
        assert out[:filled].tobytes() == data[:filled]  # what is reported is in the buffer already
        seen.append(filled)

    assert read_into(store, "progress", out, progress=progress) == len(data)
    assert seen == [*range(100, len(data), 100), len(data)]


def test_get_into_stops_when_progress_raises(store: ObjectStore, monkeypatch: pytest.MonkeyPatch) -> None:
    for module in (s3_reads, local_module):
        monkeypatch.setattr(module, "PROGRESS_CHUNK_BYTES", 100)
    store.put("stopped", b"x" * 1000)
    calls: list[int] = []

    def progress(filled: int) -> None:
        calls.append(filled)
        raise LookupError("caller gave up")

    with pytest.raises(LookupError, match="caller gave up"):
        read_into(store, "stopped", bytearray(1000), progress=progress)
    assert calls == [100]


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.binary(max_size=3000),
    slack=st.integers(0, 64),
    offset=st.integers(0, 16),
    verify=st.booleans(),
)
def test_get_into_reads_what_get_reads(
    store: ObjectStore, data: bytes, slack: int, offset: int, verify: bool
) -> None:
    key = f"prop/{uuid.uuid4().hex}"
    store.put(key, data)
    buffer = np.full(offset + len(data) + slack, SENTINEL, dtype=np.uint8)
    assert read_into(store, key, buffer[offset:], verify_checksum=verify) == len(data)
    assert buffer[offset : offset + len(data)].tobytes() == store.get(key)
    assert buffer[:offset].tolist() == [SENTINEL] * offset
    assert buffer[offset + len(data) :].tolist() == [SENTINEL] * slack


class _GetOnlyStore:
    """An ``ObjectStore`` written before ``get_into`` existed (like a test's fault injector)."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner
        self.gets: list[str] = []

    def describe(self) -> str:
        return self.inner.describe()

    def location(self, key: str) -> str:
        return self.inner.location(key)

    def get(self, key: str) -> bytes:
        self.gets.append(key)
        return self.inner.get(key)

    def get_range(self, key: str, *, start: int, end: int, if_match: str | None = None) -> bytes:
        return self.inner.get_range(key, start=start, end=end, if_match=if_match)

    def head(self, key: str) -> ObjectMeta:
        return self.inner.head(key)

    def list(self, prefix: str = "", *, start_after: str | None = None) -> Iterator[ObjectMeta]:
        return self.inner.list(prefix, start_after=start_after)

    def list_folders(self, prefix: str = "") -> Iterator[str]:
        return self.inner.list_folders(prefix)

    def put(self, key: str, data: bytes, *, mode: PutMode = Overwrite()) -> PutResult:  # noqa: B008
        return self.inner.put(key, data, mode=mode)

    def delete(self, key: str) -> None:
        self.inner.delete(key)

    def delete_many(self, keys: Iterable[str]) -> None:
        self.inner.delete_many(keys)


@pytest.mark.parametrize("wrap", [_GetOnlyStore, lambda s: ForwardingStore(_GetOnlyStore(s))])
def test_read_into_falls_back_to_get_with_the_same_contract(
    store: ObjectStore, wrap: Callable[[ObjectStore], ObjectStore]
) -> None:
    wrapped = wrap(store)
    assert isinstance(wrapped, ObjectStore)
    store.put("a.log", b"abcdef")
    out = bytearray([SENTINEL]) * 8
    assert read_into(wrapped, "a.log", out) == 6
    assert out == b"abcdef" + bytes([SENTINEL]) * 2
    small = bytearray([SENTINEL]) * 5
    with pytest.raises(BufferTooSmallError, match=r"a\.log.*6 bytes.*5-byte buffer"):
        read_into(wrapped, "a.log", small)
    assert small == bytes([SENTINEL]) * 5
    with pytest.raises(ObjectNotFoundError, match=r"missing\.log"):
        read_into(wrapped, "missing.log", out)
    with pytest.raises(TypeError, match="get_into needs a"):
        read_into(wrapped, "a.log", b"read-only")  # type: ignore[arg-type]
    inner = wrapped if isinstance(wrapped, _GetOnlyStore) else wrapped.inner  # type: ignore[attr-defined]
    assert inner.gets == ["a.log", "a.log", "missing.log"]


@pytest.mark.parametrize(
    "wrap",
    [lambda s: s, _GetOnlyStore, lambda s: ForwardingStore(_GetOnlyStore(s))],
    ids=["own-get_into", "get-only", "forwarding-get-only"],
)
def test_get_into_if_match_reads_only_that_version(
    store: ObjectStore, wrap: Callable[[ObjectStore], ObjectStore]
) -> None:
    wrapped = wrap(store)
    first = store.put("v.log", b"version one")
    out = bytearray([SENTINEL]) * 16
    assert read_into(wrapped, "v.log", out, if_match=first.etag) == 11
    assert out[:11] == b"version one"

    second = store.put("v.log", b"version two!")
    with pytest.raises(PreconditionFailedError, match=r"the object changed") as caught:
        read_into(wrapped, "v.log", out, if_match=first.etag)
    assert first.etag in str(caught.value)
    assert caught.value.location.endswith("v.log")
    assert read_into(wrapped, "v.log", out, if_match=second.etag) == 12
    assert out[:12] == b"version two!"
    with pytest.raises(ObjectNotFoundError, match=r"gone\.log"):
        read_into(wrapped, "gone.log", out, if_match=first.etag)


def test_buffer_too_small_errors_pickle() -> None:
    error = BufferTooSmallError(location="s3://b/k", object_size=11, buffer_size=10)
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), str(copy), copy.object_size, copy.buffer_size) == (
        BufferTooSmallError,
        str(error),
        11,
        10,
    )
