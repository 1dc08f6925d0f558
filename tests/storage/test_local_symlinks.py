"""A local lake never reads through a symbolic link: a linked segment file, or a linked folder, is not
adopted (its bytes would come from outside the lake's root) but reported, and the store refuses to read it
with ``ForeignObjectError`` naming the link and its target."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kafka_segments.errors import ForeignObjectError
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.history import read_head
from kafka_segments.storage import LocalStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment, upload_segment

pytestmark = pytest.mark.lake

TP = TopicPartition("orders", 0)


@pytest.fixture
def outside(tmp_path: Path) -> LocalStore:
    """Valid segments in another directory (another lake, a broker's log directory...)."""
    store = LocalStore(tmp_path / "elsewhere")
    upload_segment(store, TP, make_segment(0), with_indexes=False)
    upload_segment(store, TP, make_segment(6), with_indexes=False)
    return store


def test_a_linked_segment_file_is_not_adopted_and_is_reported(
    local_store: LocalStore, outside: LocalStore, clock: FakeClock
) -> None:
    adopted = upload_segment(local_store, TP, make_segment(0), with_indexes=False)
    linked = "orders-0/00000000000000000006.log"
    os.symlink(outside.root / linked, local_store.root / linked)

    report = adopt(local_store, now_ms=clock(), clock=clock)

    assert [entry.key for entry in report.result.adopted] == [adopted]
    ignored = {item.key: item.reason for item in report.result.ignored}
    assert "symbolic link" in ignored[linked]
    assert str(outside.root / linked) in ignored[linked]
    head = read_head(local_store)
    assert head is not None
    assert [entry.key for entry in head.live_segments()] == [adopted]
    with pytest.raises(ForeignObjectError, match="symbolic link") as raised:
        local_store.get(linked)
    assert raised.value.location == str(local_store.root / linked)
    for read in (local_store.head, lambda key: local_store.get_range(key, start=0, end=1)):
        with pytest.raises(ForeignObjectError):
            read(linked)
    with pytest.raises(ForeignObjectError):
        local_store.get_into(linked, bytearray(1 << 16))


def test_a_linked_partition_folder_is_not_adopted_and_is_reported(
    local_store: LocalStore, outside: LocalStore, clock: FakeClock
) -> None:
    local_store.put("notes.txt", b"keep the lake root existing")
    os.symlink(outside.root / "orders-0", local_store.root / "orders-0")

    assert [meta.key for meta in local_store.list()] == ["notes.txt", "orders-0"]
    assert list(local_store.list("orders-0/")) == []  # not descended into
    report = adopt(local_store, now_ms=clock(), clock=clock)

    assert report.result.adopted == ()
    assert "orders-0" in {item.key for item in report.result.ignored}
    with pytest.raises(ForeignObjectError, match="folder"):
        local_store.get("orders-0/00000000000000000000.log")
    with pytest.raises(ForeignObjectError):
        local_store.put("orders-0/00000000000000000012.log", b"")
    assert not (outside.root / "orders-0/00000000000000000012.log").exists()


def test_a_committed_segment_replaced_by_a_link_quarantines_its_partition(
    local_store: LocalStore, outside: LocalStore, clock: FakeClock
) -> None:
    key = upload_segment(local_store, TP, make_segment(0), with_indexes=False)
    adopt(local_store, now_ms=clock(), clock=clock)
    (local_store.root / key).unlink()
    os.symlink(outside.root / key, local_store.root / key)

    report = adopt(local_store, now_ms=clock(), clock=clock)

    # planned as a live object whose size changed (a link's size is its own), or read as a link: either
    # way its partition is quarantined and keeps its committed state
    assert [item.key for item in report.result.quarantined] == [key]
    assert report.result.quarantined[0].error in {"ForeignObjectError", "SegmentObjectMismatchError"}


def test_deleting_a_link_removes_the_link_not_its_target(
    local_store: LocalStore, outside: LocalStore
) -> None:
    local_store.put("a", b"x")
    key = "orders-0/00000000000000000000.log"
    (local_store.root / "orders-0").mkdir()
    os.symlink(outside.root / key, local_store.root / key)
    meta = {m.key: m for m in local_store.list()}[key]
    assert meta.etag.startswith("symlink-")
    local_store.delete(key)
    assert not os.path.lexists(local_store.root / key)
    assert (outside.root / key).is_file()
