"""One suite, every object-store backend: a local directory and S3 (moto's server over real HTTP)."""

from __future__ import annotations

import io
import os
import pickle
import threading
from pathlib import Path

import pytest
from kafka_segments.errors import (
    InvalidObjectKeyError,
    ObjectAlreadyExistsError,
    ObjectNotFoundError,
    ObjectStoreError,
    PreconditionFailedError,
)
from kafka_segments.storage import Create, LocalStore, ObjectStore, S3Store, UpdateIfMatch
from kafka_segments.storage import local as local_module

pytestmark = pytest.mark.contract


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


def test_delete_many_in_batches(store: ObjectStore) -> None:
    keys = [f"p/{i:05d}" for i in range(1500)]
    for key in keys:
        store.put(key, b"")
    store.put("keep", b"k")
    store.delete_many([*keys, "never-existed"])
    assert [m.key for m in store.list()] == ["keep"]
    store.delete_many([])


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
