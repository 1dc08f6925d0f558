"""A local lake's conditional reads (``get_into(if_match=)``, ``get_range(if_match=)``) reuse the sha256 its
listing computed for an unchanged file instead of hashing the segment a second time (issue 22: the read phase
of a local run)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from kafka_segments.errors import PreconditionFailedError
from kafka_segments.storage import LocalStore
from kit import record_local_hashes

pytestmark = pytest.mark.lake


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of what the local store hashes from now on."""
    return record_local_hashes(monkeypatch)


def test_a_listed_unchanged_file_is_not_hashed_again(tmp_path: Path, hashed: list[int]) -> None:
    (tmp_path / "t-0").mkdir()
    (tmp_path / "t-0" / "0.log").write_bytes(b"x" * 5000)
    store = LocalStore(tmp_path)
    (meta,) = store.list("t-0/")
    assert meta.etag == hashlib.sha256(b"x" * 5000).hexdigest()
    hashed.clear()
    out = bytearray(5000)
    assert store.get_into("t-0/0.log", out, if_match=meta.etag) == 5000
    assert hashed == []


def test_a_file_replaced_after_listing_is_hashed_and_refused(tmp_path: Path, hashed: list[int]) -> None:
    store = LocalStore(tmp_path)
    store.put("t-0/0.log", b"version one")
    (meta,) = store.list("t-0/")
    path = tmp_path / "t-0" / "0.log"
    stat = path.stat()
    path.write_bytes(b"version two")  # same size, rewritten in place; mtime put back: ctime still moves
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    hashed.clear()
    with pytest.raises(PreconditionFailedError, match="the object changed"):
        store.get_into("t-0/0.log", bytearray(11), if_match=meta.etag)
    assert hashed == [11]


def test_a_file_never_listed_is_hashed(tmp_path: Path, hashed: list[int]) -> None:
    etag = LocalStore(tmp_path).put("a.log", b"abc").etag
    hashed.clear()
    assert LocalStore(tmp_path).get_into("a.log", bytearray(3), if_match=etag) == 3
    assert hashed == [3]


def test_a_ranged_read_of_a_listed_unchanged_file_is_not_hashed_again(
    tmp_path: Path, hashed: list[int]
) -> None:
    (tmp_path / "t-0").mkdir()
    (tmp_path / "t-0" / "0.log").write_bytes(b"0123456789")
    store = LocalStore(tmp_path)
    (meta,) = store.list("t-0/")
    hashed.clear()
    assert store.get_range("t-0/0.log", start=2, end=5, if_match=meta.etag) == b"234"
    assert hashed == []


def test_a_ranged_read_of_a_file_rewritten_after_listing_is_refused(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put("t-0/0.log", b"version one")
    (meta,) = store.list("t-0/")
    path = tmp_path / "t-0" / "0.log"
    stat = path.stat()
    path.write_bytes(b"version two")  # same size, rewritten in place; mtime put back: ctime still moves
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(PreconditionFailedError, match="the object changed"):
        store.get_range("t-0/0.log", start=8, end=11, if_match=meta.etag)


def test_a_ranged_read_of_a_file_never_listed_hashes_it(tmp_path: Path, hashed: list[int]) -> None:
    etag = LocalStore(tmp_path).put("a.log", b"abc").etag
    hashed.clear()
    assert LocalStore(tmp_path).get_range("a.log", start=1, end=3, if_match=etag) == b"bc"
    assert hashed != []
    with pytest.raises(PreconditionFailedError, match="the object changed"):
        LocalStore(tmp_path).get_range("a.log", start=1, end=3, if_match=hashlib.sha256(b"abd").hexdigest())
