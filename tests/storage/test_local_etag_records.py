"""A local lake's etags (sha256) are kept across processes (``storage.local_etags``): a new process lists,
heads and reads an unchanged file without hashing it again, and still catches a file changed in place, a
replaced file and a file hashed too soon after it was written (issue 33, point 4)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import types
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from kafka_segments.clock import wall_clock_ms
from kafka_segments.errors import PreconditionFailedError
from kafka_segments.storage import LocalStore, local, local_etags
from kafka_segments.storage.local_etags import ETAG_CACHE, ETAG_CACHE_ENV, RACY_MARGIN_MS
from kafka_segments.user_cache import CACHE_DIR_ENV

pytestmark = pytest.mark.unit

MINUTE_NS = 60 * 1_000_000_000

LIST_IN_A_NEW_PROCESS = """
import hashlib, json, os, sys, types
from kafka_segments.storage import LocalStore, local, local_etags
hashed = []
hash_stream = local._hash_stream
def counting_stream(f):
    hashed.append(os.fstat(f.fileno()).st_size - f.tell())
    return hash_stream(f)
def sha256(data=None):
    if data is not None:
        hashed.append(len(data))
    return hashlib.sha256(b"" if data is None else data)
local._hash_stream, local.hashlib = counting_stream, types.SimpleNamespace(sha256=sha256)
etags = {meta.key: meta.etag for meta in LocalStore(sys.argv[1]).list()}
print(json.dumps({"etags": etags, "hashed": sum(hashed)}))
"""


@pytest.fixture
def records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder the etag records are kept in."""
    folder = tmp_path / "etag-records"
    monkeypatch.setenv(ETAG_CACHE_ENV, str(folder))
    return folder


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of what the local store reads to hash, from now on: files hashed from their open
    descriptor (``_hash_stream``) and bytes already read (``hashlib.sha256(data)``)."""
    sizes: list[int] = []
    hash_stream = local._hash_stream

    def counting_stream(f: Any) -> str:
        sizes.append(os.fstat(f.fileno()).st_size - f.tell())
        return hash_stream(f)

    def sha256(data: Any = None) -> Any:
        if data is not None:
            sizes.append(len(data))
        return hashlib.sha256(b"" if data is None else data)

    monkeypatch.setattr(local, "_hash_stream", counting_stream)
    monkeypatch.setattr(local, "hashlib", types.SimpleNamespace(sha256=sha256))
    return sizes


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Make the store hash as if a minute had passed since the files were written (they are not racy)."""

    def shift() -> None:
        monkeypatch.setattr(local, "_clock", lambda: wall_clock_ms() + 60_000)

    return shift


def _lake(root: Path, files: dict[str, bytes]) -> None:
    for key, data in files.items():
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_bytes(data)


def _etags(store: LocalStore, prefix: str = "") -> dict[str, str]:
    return {meta.key: meta.etag for meta in store.list(prefix)}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


FILES = {"t-0/0.log": b"a" * 4000, "t-0/1.log": b"b" * 3000, "t-1/0.log": b"c" * 2000, "checkpoint": b"cp"}


def test_a_new_process_lists_unchanged_files_without_reading_them(
    tmp_path: Path, records: Path, later: Callable[[], None]
) -> None:
    lake = tmp_path / "lake"
    _lake(lake, FILES)
    later()
    assert _etags(LocalStore(lake)) == {key: _sha(data) for key, data in FILES.items()}

    done = subprocess.run(
        [sys.executable, "-c", LIST_IN_A_NEW_PROCESS, str(lake)], capture_output=True, text=True, check=True
    )

    listed = json.loads(done.stdout)
    assert listed == {"etags": {key: _sha(data) for key, data in FILES.items()}, "hashed": 0}


def test_a_new_store_heads_and_reads_unchanged_files_without_hashing(
    tmp_path: Path, records: Path, hashed: list[int], later: Callable[[], None]
) -> None:
    _lake(tmp_path / "lake", FILES)
    later()
    _etags(LocalStore(tmp_path / "lake"))
    hashed.clear()

    store = LocalStore(tmp_path / "lake")
    assert store.head("t-0/1.log").etag == _sha(FILES["t-0/1.log"])
    assert store.get_into("t-0/0.log", bytearray(4000), if_match=_sha(FILES["t-0/0.log"])) == 4000
    mapped = LocalStore(tmp_path / "lake").get_mapped("t-1/0.log")
    assert mapped.sha256 == _sha(FILES["t-1/0.log"])
    assert hashed == []


def test_a_file_rewritten_in_place_is_hashed_again(
    tmp_path: Path, records: Path, hashed: list[int], later: Callable[[], None]
) -> None:
    lake = tmp_path / "lake"
    _lake(lake, FILES)
    later()
    _etags(LocalStore(lake))
    path = lake / "t-0" / "0.log"
    before = path.stat()
    with path.open("r+b") as f:  # same size, same inode, new content
        f.write(b"z" * 4000)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    hashed.clear()

    assert _etags(LocalStore(lake))["t-0/0.log"] == _sha(b"z" * 4000)
    assert hashed == [4000]


def test_a_file_rewritten_in_place_with_its_mtime_put_back_is_hashed_again(
    tmp_path: Path, records: Path, hashed: list[int], later: Callable[[], None]
) -> None:
    lake = tmp_path / "lake"
    _lake(lake, FILES)
    later()
    _etags(LocalStore(lake))
    path = lake / "t-0" / "0.log"
    before = path.stat()
    with path.open("r+b") as f:
        f.write(b"z" * 4000)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # only ctime tells
    hashed.clear()

    assert _etags(LocalStore(lake))["t-0/0.log"] == _sha(b"z" * 4000)
    with pytest.raises(PreconditionFailedError, match="the object changed"):
        LocalStore(lake).get_mapped("t-0/0.log", if_match=_sha(FILES["t-0/0.log"]))
    assert hashed == [4000]  # the listing's new sha256 was persisted; the read trusted it


def test_a_replaced_file_is_hashed_again(
    tmp_path: Path, records: Path, hashed: list[int], later: Callable[[], None]
) -> None:
    lake = tmp_path / "lake"
    _lake(lake, FILES)
    later()
    _etags(LocalStore(lake))
    path = lake / "t-1" / "0.log"
    before = path.stat()
    (lake / "t-1" / "new").write_bytes(b"d" * 2000)
    os.replace(lake / "t-1" / "new", path)  # a new inode, same size, the old mtime
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    hashed.clear()

    assert LocalStore(lake).head("t-1/0.log").etag == _sha(b"d" * 2000)
    assert hashed == [2000]


def test_a_racy_file_is_hashed_again_by_the_next_process(
    tmp_path: Path, records: Path, hashed: list[int]
) -> None:
    """Hashed less than ``RACY_MARGIN_MS`` after it was written, a file could still change within the same
    timestamp: its sha256 is not persisted."""
    lake = tmp_path / "lake"
    _lake(lake, {"t-0/0.log": b"fresh"})
    mtime = (lake / "t-0" / "0.log").stat().st_mtime_ns
    assert time.time_ns() - mtime < RACY_MARGIN_MS * 1_000_000  # the setup itself is quick enough to be racy
    _etags(LocalStore(lake))
    hashed.clear()

    assert _etags(LocalStore(lake)) == {"t-0/0.log": _sha(b"fresh")}
    assert hashed == [5]


def test_a_file_with_a_future_mtime_is_never_persisted(
    tmp_path: Path, records: Path, hashed: list[int], later: Callable[[], None]
) -> None:
    lake = tmp_path / "lake"
    _lake(lake, {"a.log": b"abc"})
    future = time.time_ns() + 10 * MINUTE_NS
    os.utime(lake / "a.log", ns=(future, future))
    later()
    _etags(LocalStore(lake))
    hashed.clear()

    _etags(LocalStore(lake))
    assert hashed == [3]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "group-writable"])
def test_an_unusable_record_is_ignored_and_rewritten(
    tmp_path: Path, records: Path, hashed: list[int], later: Callable[[], None], damage: str
) -> None:
    lake = tmp_path / "lake"
    _lake(lake, FILES)
    later()
    _etags(LocalStore(lake))
    files = [path for path in records.rglob("*") if path.is_file() and path.name != "root"]
    assert len(files) == 3  # the folders "", t-0 and t-1
    for path in files:
        if damage == "garbage":
            path.write_bytes(os.urandom(path.stat().st_size))
        elif damage == "truncated":
            path.write_bytes(path.read_bytes()[:-10])
        elif damage == "empty":
            path.write_bytes(b"")
        else:
            path.chmod(0o666)
    hashed.clear()

    assert _etags(LocalStore(lake)) == {key: _sha(data) for key, data in FILES.items()}
    assert sorted(hashed) == sorted(len(data) for data in FILES.values())
    hashed.clear()
    assert _etags(LocalStore(lake)) == {key: _sha(data) for key, data in FILES.items()}
    assert hashed == []


def test_the_record_drops_deleted_files_and_folders(
    tmp_path: Path, records: Path, later: Callable[[], None]
) -> None:
    lake = tmp_path / "lake"
    partition = [f"t-0/{n:020d}.log" for n in range(50)]
    _lake(lake, dict.fromkeys(partition, b"x" * 100) | {"t-1/0.log": b"y"})
    later()
    _etags(LocalStore(lake))
    sizes = _record_sizes(records)
    for key in partition[1:]:
        (lake / key).unlink()
    (lake / "t-1" / "0.log").unlink()
    (lake / "t-1").rmdir()
    _lake(lake, {"t-0/new.log": b"new"})

    _etags(LocalStore(lake), "t-0/")  # a partition's listing rewrites that partition's record
    assert _record_sizes(records)["t-0"] < sizes["t-0"] / 20
    assert "t-1" in _record_sizes(records)
    _etags(LocalStore(lake))  # the whole lake's listing deletes the records of the folders gone
    assert set(_record_sizes(records)) == {"t-0"}


def _record_sizes(records: Path) -> dict[str, int]:
    """The size of each folder's record, by folder (the partitions of ``test_..._drops_...``)."""
    names = {hashlib.sha256(folder.encode()).hexdigest()[:32]: folder for folder in ("", "t-0", "t-1")}
    return {names[path.name]: path.stat().st_size for path in records.rglob("*") if path.name in names}


def test_the_records_of_a_lake_that_is_gone_are_deleted(
    tmp_path: Path, records: Path, later: Callable[[], None]
) -> None:
    later()
    for name in ("old", "new"):
        _lake(tmp_path / name, {"a.log": b"a"})
    _etags(LocalStore(tmp_path / "old"))
    assert len(list(records.iterdir())) == 1
    (tmp_path / "old" / "a.log").unlink()
    (tmp_path / "old").rmdir()

    _etags(LocalStore(tmp_path / "new"))  # a new lake's first record

    (folder,) = records.iterdir()
    assert (folder / "root").read_bytes() == os.fsencode(tmp_path / "new")


def test_a_new_lake_checks_a_bounded_number_of_other_lakes(
    tmp_path: Path, records: Path, later: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_etags, "PRUNE_CHECKS", 4)
    later()
    for index in range(12):  # records of lakes that are gone
        (records / f"gone-{index}").mkdir(parents=True)
        (records / f"gone-{index}" / "root").write_bytes(os.fsencode(tmp_path / f"gone-{index}"))
    _lake(tmp_path / "new", {"a.log": b"a"})

    _etags(LocalStore(tmp_path / "new"))  # a new lake's first record checks 4 of the 13 folders

    deleted = 13 - len(list(records.iterdir()))
    assert deleted in (3, 4)  # 3 when the new lake's own folder was among the 4


def test_turned_off_nothing_is_kept_across_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hashed: list[int], later: Callable[[], None]
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(ETAG_CACHE_ENV, "off")
    _lake(tmp_path / "lake", FILES)
    later()
    store = LocalStore(tmp_path / "lake")
    _etags(store)
    hashed.clear()

    _etags(store)  # within one store, nothing is hashed twice
    assert hashed == []
    _etags(LocalStore(tmp_path / "lake"))
    assert sorted(hashed) == sorted(len(data) for data in FILES.values())
    assert not (tmp_path / "cache").exists()


def test_by_default_the_records_are_in_the_users_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hashed: list[int], later: Callable[[], None]
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(ETAG_CACHE_ENV, raising=False)
    _lake(tmp_path / "lake", FILES)
    later()
    _etags(LocalStore(tmp_path / "lake"))
    hashed.clear()

    _etags(LocalStore(tmp_path / "lake"))
    assert hashed == []
    assert (tmp_path / "cache" / ETAG_CACHE).is_dir()


def test_a_read_only_lake_is_not_written_to(tmp_path: Path, records: Path, later: Callable[[], None]) -> None:
    lake = tmp_path / "lake"
    _lake(lake, FILES)
    later()
    _etags(LocalStore(lake))
    LocalStore(lake).head("checkpoint")
    assert sorted(path.relative_to(lake).as_posix() for path in lake.rglob("*") if path.is_file()) == sorted(
        FILES
    )


def test_stores_and_threads_saving_at_once_leave_a_whole_record(
    tmp_path: Path, records: Path, hashed: list[int], later: Callable[[], None]
) -> None:
    """Each record is written to a temp file and renamed: writers racing leave one whole record, and one
    store shared by threads (adoption reads with a pool) keeps its entries consistent."""
    lake = tmp_path / "lake"
    files = {f"t-0/{n:020d}.log": bytes([n]) * (100 + n) for n in range(40)}
    _lake(lake, files)
    later()
    shared = LocalStore(lake)
    jobs = [lambda: _etags(LocalStore(lake)) for _ in range(4)]
    jobs += [lambda key=key: shared.get_mapped(key, if_match=_sha(files[key])) for key in files]
    with ThreadPoolExecutor(max_workers=8) as pool:
        for future in [pool.submit(job) for job in jobs]:
            future.result()
    hashed.clear()

    assert _etags(LocalStore(lake)) == {key: _sha(data) for key, data in files.items()}
    assert hashed == []


def test_a_store_keeps_a_bounded_number_of_folders_entries_and_reads_the_others_again(
    tmp_path: Path,
    records: Path,
    hashed: list[int],
    later: Callable[[], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Listing the folders of a lake one by one (a run's tails) holds at most ``KEEP_READ_FOLDERS`` folders'
    entries as read from their records; one dropped from memory is read again, never hashed again."""
    monkeypatch.setattr(local_etags, "KEEP_READ_FOLDERS", 3)
    files = {f"t-{p}/{n}.log": bytes([p, n]) * 100 for p in range(8) for n in range(4)}
    _lake(tmp_path / "lake", files)
    later()
    _etags(LocalStore(tmp_path / "lake"))
    hashed.clear()

    store = LocalStore(tmp_path / "lake")
    for again in range(2):
        listed = {
            meta.key: meta.etag for p in range(8) for meta in store.list(f"t-{p}/", start_after=f"t-{p}/1")
        }
        assert listed == {key: _sha(data) for key, data in files.items() if key.split("/")[1] > "1"}, again
    assert hashed == []
    assert len(store._etags._folders) <= 3


def test_a_tail_listing_looks_names_up_in_the_record_without_decoding_it(
    tmp_path: Path,
    records: Path,
    hashed: list[int],
    later: Callable[[], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run lists each partition after its newest segment: the few names listed are looked up in their
    folder's record as read, whose other entries are not decoded (they were 10^6 at 10^6 segments). Names
    that occur inside other names (``0.log`` in ``10.log``) find their own entry."""
    files = {f"t-0/{name}": name.encode() * 50 for name in ("0.log", "10.log", "110.log", "2.log", "20.log")}
    _lake(tmp_path / "lake", files)
    later()
    _etags(LocalStore(tmp_path / "lake"))
    hashed.clear()
    decoded: list[int] = []
    decode_entries = local_etags._decode_entries

    def counting(body: bytes, position: int) -> Any:
        decoded.append(len(body))
        return decode_entries(body, position)

    monkeypatch.setattr(local_etags, "_decode_entries", counting)
    for start in (None, "t-0/1", "t-0/10.log", "t-0/2"):
        store = LocalStore(tmp_path / "lake")
        listed = {meta.key: meta.etag for meta in store.list("t-0/", start_after=start)}
        wanted = {key: _sha(data) for key, data in files.items() if start is None or key > start}
        assert listed == wanted, start
    assert hashed == []
    assert decoded == []
    # A change in the folder decodes its record once, and the next process finds every entry.
    _lake(tmp_path / "lake", {"t-0/3.log": b"new"})
    assert _etags(LocalStore(tmp_path / "lake"), "t-0/") == {key: _sha(d) for key, d in files.items()} | {
        "t-0/3.log": _sha(b"new")
    }
    assert len(decoded) == 1
    hashed.clear()
    assert _etags(LocalStore(tmp_path / "lake"), "t-0/")["t-0/0.log"] == _sha(files["t-0/0.log"])
    assert hashed == []
