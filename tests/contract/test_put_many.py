"""``put_many`` on every backend: concurrent PUTs, and every key's outcome when some fail."""

from __future__ import annotations

import pickle
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_segments.errors import (
    InvalidObjectKeyError,
    ObjectAlreadyExistsError,
    ObjectNotFoundError,
    TransientStoreError,
)
from kafka_segments.storage import Create, ObjectStore, Overwrite, PutManyError, PutMode, PutResult, put_many
from kafka_segments.storage.forwarding import ForwardingStore

pytestmark = pytest.mark.contract

SEGMENT = {"seg.index": b"i" * 80, "seg.timeindex": b"t" * 120, "seg.log": b"L" * 100_000}


def test_every_object_is_written_and_results_come_in_order(store: ObjectStore) -> None:
    results = put_many(store, SEGMENT, mode=Create())
    assert list(results) == list(SEGMENT)
    for key, data in SEGMENT.items():
        assert results[key] == PutResult(key=key, etag=store.head(key).etag)
        assert store.get(key) == data
    assert put_many(store, {}) == {}


def test_an_invalid_key_writes_nothing(store: ObjectStore) -> None:
    with pytest.raises(InvalidObjectKeyError, match=r"\.\./x"):
        put_many(store, {"fine": b"1", "../x": b"2"})
    assert list(store.list()) == []


def test_max_workers_must_be_positive(store: ObjectStore) -> None:
    with pytest.raises(ValueError, match="max_workers"):
        put_many(store, SEGMENT, max_workers=0)


class Recording(ForwardingStore):
    """Records PUTs; ``gate`` (a barrier) makes every PUT wait for the others; ``fail`` keys raise."""

    def __init__(
        self, inner: ObjectStore, *, gate: threading.Barrier | None = None, fail: frozenset[str] = frozenset()
    ) -> None:
        super().__init__(inner)
        self.gate = gate
        self.fail = fail
        self.started: list[str] = []
        self.failed_once = threading.Event()
        self._lock = threading.Lock()

    def put(self, key: str, data: bytes, *, mode: PutMode = Overwrite()) -> PutResult:  # noqa: B008
        with self._lock:
            self.started.append(key)
        if self.gate is not None:
            self.gate.wait()
        if key in self.fail:
            self.failed_once.set()
            raise TransientStoreError("injected", location=key)
        if key == "slow":
            self.failed_once.wait(10)
        return super().put(key, data, mode=mode)


def test_puts_run_concurrently(store: ObjectStore) -> None:
    recording = Recording(store, gate=threading.Barrier(3, timeout=10))
    put_many(recording, SEGMENT, max_workers=3)  # each PUT waits at the barrier for the other two
    assert sorted(recording.started) == sorted(SEGMENT)


def test_a_failure_in_turn_names_what_was_written_failed_and_not_attempted(store: ObjectStore) -> None:
    store.put("b", b"someone else's")
    objects = {"a": b"1", "b": b"2", "c": b"3"}
    with pytest.raises(PutManyError, match=r"/b: 1 of 3 PUT\(s\) failed.*ObjectAlreadyExistsError") as caught:
        put_many(store, objects, mode=Create(), max_workers=1)
    error = caught.value
    assert list(error.written) == ["a"]
    assert error.written["a"].etag == store.head("a").etag
    assert list(error.failed) == ["b"]
    assert isinstance(error.first_error, ObjectAlreadyExistsError)
    assert error.__cause__ is error.first_error
    assert error.not_attempted == ("c",)
    assert store.get("b") == b"someone else's"  # refused, unchanged
    with pytest.raises(ObjectNotFoundError):
        store.get("c")


def test_no_put_starts_after_a_failure(store: ObjectStore) -> None:
    # "bad" and "slow" start together (the barrier); "bad" fails while "slow" is still running.
    recording = Recording(store, gate=threading.Barrier(2, timeout=10), fail=frozenset({"bad"}))
    objects = {"bad": b"x", "slow": b"s", "c": b"c", "d": b"d", "e": b"e"}
    with pytest.raises(PutManyError) as caught:
        put_many(recording, objects, max_workers=2)
    error = caught.value
    assert sorted(recording.started) == ["bad", "slow"]
    assert list(error.written) == ["slow"]
    assert list(error.failed) == ["bad"]
    assert error.not_attempted == ("c", "d", "e")
    assert [m.key for m in store.list()] == ["slow"]


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    keys=st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=8, unique=True),
    failing=st.sets(st.sampled_from("abcdefgh")),
    workers=st.integers(1, 4),
)
def test_every_key_has_exactly_one_outcome_and_the_store_agrees(
    store: ObjectStore, keys: list[str], failing: set[str], workers: int
) -> None:
    prefix = f"p{time.monotonic_ns()}/"
    objects = {prefix + key: key.encode() for key in keys}
    recording = Recording(store, fail=frozenset(prefix + key for key in failing))
    if not failing & set(keys):
        written = put_many(recording, objects, max_workers=workers)
    else:
        with pytest.raises(PutManyError) as caught:
            put_many(recording, objects, max_workers=workers)
        error = caught.value
        assert error.failed
        assert set(error.failed) <= {prefix + key for key in failing}
        assert sorted([*error.written, *error.failed, *error.not_attempted]) == sorted(objects)
        assert sorted(recording.started) == sorted([*error.written, *error.failed])
        written = error.written
    assert {m.key: m.etag for m in store.list(prefix)} == {key: r.etag for key, r in written.items()}


def test_put_many_errors_pickle(store: ObjectStore) -> None:
    recording = Recording(store, fail=frozenset({"b"}))
    with pytest.raises(PutManyError) as caught:
        put_many(recording, {"a": b"1", "b": b"2"}, max_workers=1)
    copy = pickle.loads(pickle.dumps(caught.value))
    assert str(copy) == str(caught.value)
    assert copy.written == caught.value.written
    assert list(copy.failed) == ["b"]
    assert isinstance(copy.first_error, TransientStoreError)
