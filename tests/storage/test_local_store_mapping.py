"""A local lake hands its segments over as private memory maps (``LocalStore.get_mapped``), with the sha256
its listing or its own write computed, so adoption and the round neither copy a segment into fresh memory
nor hash it a second time (issue 22: a local run's read phase) — and a replaced or rewritten file is still
caught."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
from kafka_segments.cli import run_cmds
from kafka_segments.errors import ObjectNotFoundError, PreconditionFailedError
from kafka_segments.lake import adoption_reads, scan
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.history import read_head
from kafka_segments.lake.reader import map_segment_version, read_segment
from kafka_segments.pipeline.compaction import sources
from kafka_segments.pipeline.compaction.sources import streamed_source
from kafka_segments.storage import LocalStore, local
from kafka_segments.storage.base import MappingStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment, record_local_hashes, upload_segment
from lake.adoption_helpers import CountingStore

pytestmark = pytest.mark.lake

TP = TopicPartition("orders", 0)


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of what the local store hashes from now on."""
    return record_local_hashes(monkeypatch)


def _rewrite_in_place(path: Path, data: bytes) -> None:
    """Same size, same inode, mtime put back: only ctime tells."""
    before = path.stat()
    with path.open("r+b") as f:
        f.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_local_store_maps_and_a_forwarding_store_does_not(tmp_path: Path) -> None:
    assert isinstance(LocalStore(tmp_path), MappingStore)
    assert not isinstance(CountingStore(LocalStore(tmp_path)), MappingStore)


def test_a_mapped_object_has_the_files_bytes_and_the_listings_sha256(
    tmp_path: Path, hashed: list[int]
) -> None:
    (tmp_path / "t-0").mkdir()
    (tmp_path / "t-0" / "0.log").write_bytes(b"x" * 5000)
    store = LocalStore(tmp_path)
    (meta,) = store.list("t-0/")
    hashed.clear()

    mapped = store.get_mapped("t-0/0.log", if_match=meta.etag)

    assert bytes(mapped.data) == b"x" * 5000
    assert mapped.sha256 == meta.etag
    assert hashed == []
    assert store.mapped_unchanged(mapped)


def test_a_never_listed_file_is_mapped_without_a_sha256_unless_pinned(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(b"abc")
    assert LocalStore(tmp_path).get_mapped("a.log").sha256 is None
    pinned = LocalStore(tmp_path).get_mapped("a.log", if_match=hashlib.sha256(b"abc").hexdigest())
    assert pinned.sha256 == hashlib.sha256(b"abc").hexdigest()
    with pytest.raises(PreconditionFailedError, match="the object changed"):
        LocalStore(tmp_path).get_mapped("a.log", if_match=hashlib.sha256(b"abd").hexdigest())


def test_an_empty_or_missing_object(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put("empty.log", b"")
    assert bytes(store.get_mapped("empty.log").data) == b""
    with pytest.raises(ObjectNotFoundError):
        store.get_mapped("missing.log")
    (tmp_path / "folder.log").mkdir()
    with pytest.raises(ObjectNotFoundError):
        store.get_mapped("folder.log")


def test_writes_into_the_map_never_reach_the_file(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put("a.log", b"abc")
    mapped = store.get_mapped("a.log")
    np.frombuffer(mapped.data, dtype=np.uint8)[0] = ord("z")
    assert bytes(mapped.data) == b"zbc"
    assert (tmp_path / "a.log").read_bytes() == b"abc"


def test_a_file_rewritten_in_place_after_listing_is_hashed_and_refused(
    tmp_path: Path, hashed: list[int]
) -> None:
    store = LocalStore(tmp_path)
    etag = store.put("a.log", b"version one").etag
    _rewrite_in_place(tmp_path / "a.log", b"version two")
    hashed.clear()
    with pytest.raises(PreconditionFailedError, match="the object changed"):
        store.get_mapped("a.log", if_match=etag)
    assert hashed == [11]


def test_a_rewrite_or_a_replacement_after_mapping_is_told(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put("a.log", b"version one")
    mapped = store.get_mapped("a.log")
    _rewrite_in_place(tmp_path / "a.log", b"version two")
    assert not store.mapped_unchanged(mapped)
    remapped = store.get_mapped("a.log")
    store.put("a.log", b"version three")
    assert not store.mapped_unchanged(remapped)
    assert bytes(remapped.data) == b"version two"  # the replaced file's inode stays mapped whole
    (tmp_path / "a.log").unlink()
    assert not store.mapped_unchanged(remapped)


def test_what_put_wrote_is_not_hashed_again_by_head_or_listing(tmp_path: Path, hashed: list[int]) -> None:
    store = LocalStore(tmp_path)
    etag = store.put("t-0/0.log", b"y" * 4000).etag
    hashed.clear()
    assert store.head("t-0/0.log").etag == etag
    assert [meta.etag for meta in store.list("t-0/")] == [etag]
    assert hashed == []


def test_adoption_hashes_a_new_segment_once_and_reads_it_mapped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = make_segment(0, batches=4, records_per_batch=3)
    upload_segment(LocalStore(tmp_path), TP, files)
    store = LocalStore(tmp_path)  # a fresh process: nothing cached, the listing hashes the file

    def hashed_again(data: bytes) -> str:
        raise AssertionError(f"{len(data)} bytes hashed again")

    monkeypatch.setattr(scan, "sha256_hex", hashed_again)
    monkeypatch.setattr(adoption_reads, "sha256_hex", hashed_again)
    get = local.LocalStore.get

    def get_not_a_segment(self: LocalStore, key: str) -> bytes:
        assert not key.endswith(".log"), f"{key} copied, not mapped"
        return get(self, key)

    monkeypatch.setattr(local.LocalStore, "get", get_not_a_segment)

    report = adopt(store, now_ms=FakeClock()(), clock=FakeClock())

    (entry,) = report.result.adopted
    assert entry.sha256 == entry.etag == hashlib.sha256(files.log).hexdigest()
    head = read_head(store)
    assert head is not None
    assert head.partitions[0].segments == (entry,)


def test_the_round_decodes_a_local_segment_mapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    upload_segment(LocalStore(tmp_path), TP, make_segment(0, batches=5, records_per_batch=3))
    store = LocalStore(tmp_path)
    (entry,) = adopt(store, now_ms=FakeClock()(), clock=FakeClock()).result.adopted
    monkeypatch.setattr(local.LocalStore, "get_into", lambda *a, **k: pytest.fail("copied, not mapped"))

    source = streamed_source(store, entry)

    assert source.decoded is not None
    assert bytes(source.data) == read_segment(store, entry)
    mapped = map_segment_version(store, entry)
    assert mapped is not None
    assert bytes(mapped.data) == bytes(source.data)


def test_a_segment_rewritten_while_decoded_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    upload_segment(LocalStore(tmp_path), TP, make_segment(0, batches=5, records_per_batch=3))
    store = LocalStore(tmp_path)
    (entry,) = adopt(store, now_ms=FakeClock()(), clock=FakeClock()).result.adopted
    plain: list[str] = []
    monkeypatch.setattr(local.LocalStore, "mapped_unchanged", lambda self, mapped: False)
    monkeypatch.setattr(sources, "read_segment", lambda s, e: plain.append(e.key) or read_segment(s, e))

    source = streamed_source(store, entry)

    assert plain == [entry.key]
    assert source.decoded is None  # the plain read's bytes, for the round to decode


def test_run_lists_a_local_lake_while_it_loads_its_modules(tmp_path: Path, hashed: list[int]) -> None:
    (tmp_path / "t-0").mkdir()
    (tmp_path / "t-0" / "0.log").write_bytes(b"x" * 5000)
    store = LocalStore(tmp_path)

    wait = run_cmds._listed_meanwhile(store)
    wait()

    assert len(hashed) == 1  # hashed once, on the thread
    hashed.clear()
    assert [meta.etag for meta in store.list()] == [hashlib.sha256(b"x" * 5000).hexdigest()]
    assert hashed == []  # the run's own listing finds it done
    run_cmds._listed_meanwhile(CountingStore(store))()  # another store: nothing to do


def test_a_map_holds_no_file_descriptor_and_goes_with_its_last_view(tmp_path: Path) -> None:
    """A round keeps every segment of its partition mapped: a thousand segments must not take a thousand
    descriptors (Python's own ``mmap`` keeps one per map)."""
    store = LocalStore(tmp_path)
    store.put("a.log", b"abc")
    path = str(tmp_path / "a.log")

    def maps() -> int:
        with open("/proc/self/maps") as f:
            return sum(path in line for line in f)

    descriptors = len(os.listdir("/proc/self/fd"))
    views = [store.get_mapped("a.log").data for _ in range(2000)]
    assert len(os.listdir("/proc/self/fd")) <= descriptors
    assert maps() == 2000
    array = np.frombuffer(views[0], dtype=np.uint8)
    del views
    assert maps() == 1  # the array still uses its map
    assert bytes(array) == b"abc"
    del array
    assert maps() == 0
