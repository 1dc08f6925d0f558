"""``CountingStore`` (tests/counting_store.py) counts every call by kind and area, and the bytes read and
written, on a local lake and on S3; ``reset`` starts again; a local lake's wrapper still maps."""

from __future__ import annotations

import pytest
from counting_store import MANIFESTS, META, PARTITIONS, RUNS, SEGMENTS, counting_store
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.storage.base import Create, MappingStore, ReadIntoStore

pytestmark = pytest.mark.lake

MANIFEST = "_kafka_segments/manifests/00000000000000000001.json"
PIECE = "_kafka_segments/partitions/t-0/abc.json"
RUN_FILE = "_kafka_segments/runs/r1/run.json"
CHECKPOINT = "_kafka_segments/lock-free-note"
SEGMENT = "t-0/00000000000000000000.log"


def test_every_call_is_counted_by_kind_and_area_with_its_bytes(store: ObjectStore) -> None:
    counting = counting_store(store)
    counting.put(MANIFEST, b"m" * 100, mode=Create())
    counting.put(PIECE, b"p" * 30)
    counting.put(RUN_FILE, b"r" * 7)
    counting.put(CHECKPOINT, b"c" * 5)
    counting.put(SEGMENT, b"s" * 1000)
    assert counting.get(MANIFEST) == b"m" * 100
    assert counting.get_range(SEGMENT, start=10, end=30) == b"s" * 20
    out = bytearray(1000)
    assert counting.get_into(SEGMENT, out) == 1000
    assert counting.head(PIECE).size == 30
    assert [meta.key for meta in counting.list("t-0/")] == [SEGMENT]
    assert len(list(counting.list("_kafka_segments/"))) == 4
    counting.delete(RUN_FILE)
    counting.delete_many([CHECKPOINT, PIECE])

    counts = counting.counts()
    assert counts.as_dict() == {
        "requests": {
            MANIFESTS: {"get": 1, "put": 1},
            META: {"delete_many": 1, "list": 1, "put": 1},
            PARTITIONS: {"delete_many": 1, "head": 1, "put": 1},
            RUNS: {"delete": 1, "put": 1},
            SEGMENTS: {"get_into": 1, "get_range": 1, "list": 1, "put": 1},
        },
        "bytes_read": {MANIFESTS: 100, SEGMENTS: 1020},
        "bytes_written": {MANIFESTS: 100, META: 5, PARTITIONS: 30, RUNS: 7, SEGMENTS: 1000},
        "listed": {META: 4, SEGMENTS: 1},
    }
    assert counts.written(MANIFESTS, PARTITIONS) == 130
    assert counts.written() == 1142
    assert counts.read() == 1120
    assert counts.calls(kind="put") == 5
    assert counts.calls(area=SEGMENTS) == 4
    assert counting.read_keys() == [MANIFEST, SEGMENT, SEGMENT]


def test_reset_forgets_the_counts(store: ObjectStore) -> None:
    counting = counting_store(store)
    counting.put(SEGMENT, b"x")
    counting.get(SEGMENT)
    counting.reset()
    assert counting.calls == ()
    empty: dict[str, object] = {"requests": {}, "bytes_read": {}, "bytes_written": {}, "listed": {}}
    assert counting.counts().as_dict() == empty
    counting.get(SEGMENT)
    assert counting.counts().read() == 1


def test_the_wrapper_maps_exactly_when_the_store_does(store: ObjectStore) -> None:
    counting = counting_store(store)
    assert isinstance(counting, ReadIntoStore)
    assert isinstance(counting, MappingStore) == isinstance(store, LocalStore)
    if isinstance(counting, MappingStore):
        counting.put(SEGMENT, b"abc")
        mapped = counting.get_mapped(SEGMENT)
        assert bytes(mapped.data) == b"abc"
        assert counting.mapped_unchanged(mapped)
        assert counting.counts().as_dict()["requests"] == {SEGMENTS: {"get_mapped": 1, "put": 1}}
        assert counting.counts().read(SEGMENTS) == 3
