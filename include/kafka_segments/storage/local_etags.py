"""The etags (sha256) a local lake's files were found to have, kept across processes: a file whose stat is
unchanged since it was hashed is not read again by the next ``kafka-segments run``, ``describe`` or Airflow
task (``LocalStore``; docs/lake.md, "A local lake").

An entry is a file's name and its stat key (device, inode, size, mtime and ctime, in ns) with the sha256
computed from it; it is trusted only while the file's stat key is exactly that one. Like git's index with
its "racy" entries, an entry is persisted only when the file's mtime and ctime are older than the moment
its hashing began by ``RACY_MARGIN_MS``: a file written again later gets a newer mtime and ctime, a write
within the same timestamp tick as the hashed version could not be told apart, so such a file is hashed
again by the next process (once it is old enough, it is persisted).

Records live in the user's cache folder (``user_cache``), never in the lake (read-only commands do not
write into a lake, and a file there would be listed and collected): ``etags/<lake id>/`` per lake (the
sha256 of its resolved root, which the folder's ``root`` file names), one record per folder of the lake
(a run that lists a few partitions loads a few small records). A record is written to a temp file then
renamed over the old one, so concurrent processes never see half of one (the last writer wins: the
other's new entries are hashed again later); a record that cannot be read, is not the current user's, or
fails its checksum is ignored, and rewritten. Entries of files gone from their folder are dropped when
the record is rewritten; a listing of the whole lake deletes the records of folders gone from it, and the
first record of a new lake deletes the records of lakes whose root no longer exists (of at most
``PRUNE_CHECKS`` lakes, chosen at random among more).

``KAFKA_SEGMENTS_ETAG_CACHE``: ``off`` (or ``0``, ``false``, ``no``) keeps etags in memory only, per
process; unset, empty or ``on``, the records are kept in the cache folder's ``etags``; any other value is
the folder to keep them in.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import random
import shutil
import stat
import struct
import tempfile
import threading
import zlib
from collections import OrderedDict
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

from kafka_segments.clock import wall_clock_ms
from kafka_segments.storage.local_mapping import StatKey
from kafka_segments.user_cache import user_cache_dir

ETAG_CACHE_ENV = "KAFKA_SEGMENTS_ETAG_CACHE"
ETAG_CACHE = "etags"
"""The cache folder's sub-folder for the records (``user_cache.user_cache_dir``)."""
KEEP_READ_FOLDERS = 256
"""How many folders' entries, as read from their records and unchanged since, stay in memory."""
RACY_MARGIN_MS = 2_000
"""How much older than the start of its hashing a file's mtime and ctime must be for its sha256 to be
persisted: more than any filesystem's timestamp granularity (FAT's 2 s), and a margin for clocks."""
_OFF = frozenset({"off", "0", "false", "no"})
_ON = frozenset({"", "on"})
_MAGIC = b"KSETAGS1"
_HEADER = struct.Struct("<8sI")  # magic, length of the folder's name
_ENTRY = struct.Struct("<H3Q2q32s")  # length of the name, dev, ino, size, mtime and ctime ns, sha256
_CRC = struct.Struct("<I")
_ROOT_FILE = "root"
_TEMP_PREFIX = ".tmp-"
_TEMP_AGE_S = 3600
PRUNE_CHECKS = 64
"""How many lakes' folders a new lake's first record checks for a root that is gone: all of them up to this
many, else this many chosen at random. A new lake costs a bounded number of reads however many lakes the
folder holds (checking all of them cost a test session of N lakes N**2 / 2 reads), and it removes gone
lakes faster than one new lake can leave one: they stay about 1 / PRUNE_CHECKS of the folders at most."""

Entry = tuple[StatKey, str, bool]
"""A file's stat key, its sha256 (hex) and whether it may be persisted (not racy)."""


class _Record:
    """A folder's record as read and checked (magic, folder, checksum), its entries not decoded: a lookup
    finds the name in the record's bytes. A run that lists each partition's tail looks up a few names per
    folder; decoding every entry of every folder it lists cost it most of its CPU and memory (10^6
    entries at 10^6 segments). Decoded whole (``entries``) only when the folder's entries change."""

    __slots__ = ("_body", "_start")

    def __init__(self, body: bytes, *, start: int) -> None:
        self._body = body
        self._start = start
        """Where the first entry begins."""

    def sha256(self, name: str, version: StatKey) -> str | None:
        """The sha256 of entry ``name`` if its stat key is ``version``. Each place the name's bytes occur is
        read as an entry's name: one whose entry's length field and stat key match is the entry (a place
        inside another entry would have to hold the file's exact device, inode, size, mtime and ctime)."""
        encoded = name.encode()
        body = self._body
        hit = body.find(encoded, self._start + _ENTRY.size)
        while hit != -1:
            at = hit - _ENTRY.size
            length, dev, ino, size, mtime, ctime, sha256 = _ENTRY.unpack_from(body, at)
            if length == len(encoded) and (dev, ino, size, mtime, ctime) == version:
                return bytes(sha256).hex()
            hit = body.find(encoded, hit + 1)
        return None

    def entries(self) -> dict[str, Entry]:
        """Every entry, decoded; none if they do not decode (the record is then rewritten whole)."""
        try:
            return _decode_entries(self._body, self._start)
        except (ValueError, struct.error, UnicodeDecodeError):
            return {}


def records_folder() -> Path | None:
    """Where the records are kept as ``KAFKA_SEGMENTS_ETAG_CACHE`` says; ``None`` when turned off."""
    value = os.environ.get(ETAG_CACHE_ENV, "").strip()
    if value.lower() in _OFF:
        return None
    if value.lower() in _ON:
        return user_cache_dir(ETAG_CACHE)
    return Path(value)


def persistable(version: StatKey, *, hashed_from_ms: int) -> bool:
    """Whether a file with stat key ``version`` hashed from ``hashed_from_ms`` (the wall clock when its
    hashing began) may be trusted by another process: its mtime and ctime older by ``RACY_MARGIN_MS``."""
    limit_ns = (hashed_from_ms - RACY_MARGIN_MS) * 1_000_000
    return version[3] < limit_ns and version[4] < limit_ns


class EtagRecords:
    """The known etags of one local lake's files, by key; the persisted ones loaded lazily per folder."""

    def __init__(self, root: Path, *, folder: Path | None) -> None:
        self._root = root
        self._folder_of_records = folder
        self._folders: dict[str, dict[str, Entry] | _Record] = {}
        """The entries known of each folder, by name (a record as read: looked up, not decoded)."""
        self._dirty: set[str] = set()
        """The folders whose record is to be written."""
        self._as_read: OrderedDict[str, None] = OrderedDict()
        """The folders whose entries are exactly their record's (no ``put`` since): dropped from memory, least
        recently used first, beyond ``KEEP_READ_FOLDERS`` (read again when asked): a run that lists the tails
        of 10^5 partitions holds a few hundred folders' entries, not every segment's."""
        self._lock = threading.Lock()
        """Held by ``get``, ``put`` and ``save``: a store is used by several threads (adoption's reads)."""

    @classmethod
    def for_lake(cls, root: Path) -> EtagRecords:
        """The records of the lake at ``root``, kept where ``KAFKA_SEGMENTS_ETAG_CACHE`` says."""
        return cls(root, folder=records_folder())

    @functools.cached_property
    def _lake_folder(self) -> Path | None:
        """The lake's folder of records (named after its resolved root), ``None`` when turned off."""
        if self._folder_of_records is None:
            return None
        return self._folder_of_records / _digest(str(self._resolved_root))

    @functools.cached_property
    def _resolved_root(self) -> Path:
        return Path(os.path.realpath(self._root))

    def get(self, key: str, version: StatKey) -> str | None:
        """The sha256 of ``key``'s file if it was hashed with stat key ``version``."""
        folder, name = _split(key)
        with self._lock:
            entries = self._folder(folder)
            if isinstance(entries, _Record):
                return entries.sha256(name, version)
            entry = entries.get(name)
        return entry[1] if entry is not None and entry[0] == version else None

    def put(self, key: str, version: StatKey, sha256: str, *, hashed_from_ms: int | None) -> None:
        """``key``'s file with stat key ``version`` has ``sha256``; ``hashed_from_ms``: when its hashing
        began (``None``: the bytes were not read from the file, as for a write; kept in memory only)."""
        folder, name = _split(key)
        durable = hashed_from_ms is not None and persistable(version, hashed_from_ms=hashed_from_ms)
        with self._lock:
            entries = self._entries(folder)
            old = entries.get(name)
            entries[name] = (version, sha256, durable)
            self._changed(folder)
            if (durable and old != entries[name]) or (not durable and old is not None and old[2]):
                self._dirty.add(folder)  # a new entry to persist, or a persisted one gone stale

    def save(self, *, walked: Mapping[str, Collection[str]] | None = None, whole_lake: bool = False) -> None:
        """Write the records that changed. ``walked``: the names found in folders just listed (entries of
        other names are dropped); ``whole_lake``: ``walked`` covers every folder of the lake (the records
        of other folders are deleted). Never raises: a record not written is a file hashed again later."""
        with self._lock:
            self._save(walked, whole_lake=whole_lake)

    def _save(self, walked: Mapping[str, Collection[str]] | None, *, whole_lake: bool) -> None:
        for name, present in (walked or {}).items():
            if not whole_lake and isinstance(self._folders.get(name), _Record):
                continue  # as read: its entries of files gone are dropped when it is next written
            entries = self._entries(name)
            if not entries.keys() <= set(present):
                self._folders[name] = {k: e for k, e in entries.items() if k in present}
                self._changed(name)
                self._dirty.add(name)
        if self._lake_folder is None:
            self._dirty.clear()
            return
        dirty, self._dirty = self._dirty, set()
        for name in sorted(dirty):
            with contextlib.suppress(OSError):
                self._write(name, walked=walked is not None and name in walked)
        if whole_lake and walked is not None:
            with contextlib.suppress(OSError):
                self._drop_records_except({_digest(name) for name in walked})

    # -- disk ----------------------------------------------------------------------------------------------

    def _entries(self, name: str) -> dict[str, Entry]:
        """Folder ``name``'s entries, decoded (to be changed)."""
        entries = self._folder(name)
        if isinstance(entries, _Record):
            entries = self._folders[name] = entries.entries()
        return entries

    def _folder(self, name: str) -> dict[str, Entry] | _Record:
        entries = self._folders.get(name)
        if entries is None:
            entries = self._folders[name] = self._read(name)
            self._as_read[name] = None
            while len(self._as_read) > KEEP_READ_FOLDERS:
                oldest, _ = self._as_read.popitem(last=False)
                self._folders.pop(oldest, None)
        elif name in self._as_read:
            self._as_read.move_to_end(name)
        return entries

    def _changed(self, name: str) -> None:
        """Folder ``name``'s entries are no longer its record's: kept in memory from now on."""
        self._as_read.pop(name, None)

    def _read(self, name: str) -> dict[str, Entry] | _Record:
        """The persisted entries of folder ``name``; none when the record is missing or unusable."""
        if self._lake_folder is None:
            return {}
        try:
            with open(self._lake_folder / _digest(name), "rb") as f:
                st = os.fstat(f.fileno())
                if st.st_uid != os.geteuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                    return {}  # written by someone else: its sha256s are not evidence
                data = f.read()
            return _decode(data, folder=name)
        except (OSError, ValueError, struct.error, UnicodeDecodeError):
            return {}

    def _write(self, name: str, *, walked: bool) -> None:
        entries = self._entries(name)
        if not walked:  # drop the entries of files gone from the folder
            present = set(_names(self._root / name))
            entries = self._folders[name] = {k: e for k, e in entries.items() if k in present}
            self._changed(name)
        durable = {k: e for k, e in entries.items() if e[2]}
        if not durable:
            if self._lake_folder is not None:
                (self._lake_folder / _digest(name)).unlink(missing_ok=True)
            return
        _replace(self._new_lake_folder() / _digest(name), _encode(durable, folder=name))

    def _new_lake_folder(self) -> Path:
        """The lake's folder of records, created (with its ``root`` file) if missing; creating it deletes
        the folders of lakes whose root is gone."""
        folder = self._lake_folder
        if folder is None:  # pragma: no cover - save() checks
            raise OSError("etag records are off")
        if not (folder / _ROOT_FILE).is_file():
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            _replace(folder / _ROOT_FILE, os.fsencode(self._resolved_root))
            _drop_gone_lakes(folder.parent)
        return folder

    def _drop_records_except(self, keep: Collection[str]) -> None:
        folder = self._lake_folder
        if folder is None or not folder.is_dir():
            return
        stale_temp = wall_clock_ms() / 1000 - _TEMP_AGE_S
        with os.scandir(folder) as entries:  # closed also when another writer's rename races a stat
            for entry in entries:
                if entry.name.startswith(_TEMP_PREFIX):
                    if _mtime(entry) < stale_temp:  # left by a killed writer
                        Path(entry.path).unlink(missing_ok=True)
                elif entry.name != _ROOT_FILE and entry.name not in keep:
                    Path(entry.path).unlink(missing_ok=True)


def _split(key: str) -> tuple[str, str]:
    folder, _, name = key.rpartition("/")
    return folder, name


def _digest(text: str) -> str:
    return hashlib.sha256(os.fsencode(text)).hexdigest()[:32]


def _names(folder: Path) -> Iterator[str]:
    try:
        yield from os.listdir(folder)
    except FileNotFoundError:
        return


def _encode(entries: Mapping[str, Entry], *, folder: str) -> bytes:
    name = folder.encode()
    parts = [_HEADER.pack(_MAGIC, len(name)), name]
    for key, (version, sha256, _) in sorted(entries.items()):
        encoded = key.encode()
        parts.append(_ENTRY.pack(len(encoded), *version, bytes.fromhex(sha256)))
        parts.append(encoded)
    body = b"".join(parts)
    return body + _CRC.pack(zlib.crc32(body))


def _decode(data: bytes, *, folder: str) -> _Record:
    """Raises ``ValueError``, ``struct.error`` or ``UnicodeDecodeError`` for a record that is not a whole
    record of ``folder`` (its entries are decoded when used: ``_Record``)."""
    body, crc = data[: -_CRC.size], data[-_CRC.size :]
    if len(data) < _HEADER.size + _CRC.size or _CRC.unpack(crc)[0] != zlib.crc32(body):
        raise ValueError("etag record: checksum mismatch")
    magic, length = _HEADER.unpack_from(body)
    position = _HEADER.size + length
    if magic != _MAGIC or body[_HEADER.size : position].decode() != folder:
        raise ValueError("etag record: not this folder's")
    return _Record(body, start=position)


def _decode_entries(body: bytes, position: int) -> dict[str, Entry]:
    """The entries of a checked record's ``body`` from ``position``."""
    entries: dict[str, Entry] = {}
    while position < len(body):
        length, dev, ino, size, mtime, ctime, sha256 = _ENTRY.unpack_from(body, position)
        position += _ENTRY.size + length
        if position > len(body):
            raise ValueError("etag record: truncated")
        name = body[position - length : position].decode()
        entries[name] = ((dev, ino, size, mtime, ctime), sha256.hex(), True)
    return entries


def _replace(path: Path, data: bytes) -> None:
    """``path`` holds ``data``, written to a temp file (mode 0600) and renamed over it."""
    fd, temp = tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _drop_gone_lakes(records: Path) -> None:
    """Delete the records of lakes whose root folder no longer exists, of at most ``PRUNE_CHECKS`` lakes."""
    names = os.listdir(records)
    if len(names) > PRUNE_CHECKS:
        names = random.sample(names, PRUNE_CHECKS)
    for name in names:
        try:
            root = (records / name / _ROOT_FILE).read_bytes()
        except OSError:
            continue  # not a lake's folder, or one being created
        if not os.path.isdir(os.fsdecode(root)):
            shutil.rmtree(records / name, ignore_errors=True)


def _mtime(entry: os.DirEntry[str]) -> float:
    """A folder entry's mtime; ``inf`` when it is gone meanwhile (another writer renamed its temp file)."""
    try:
        return entry.stat(follow_symlinks=False).st_mtime
    except FileNotFoundError:
        return float("inf")
