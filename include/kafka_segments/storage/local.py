"""A local directory as an object store (the ``file://`` lake backend).

Writes go to a fsynced temp file, then ``os.link`` for ``Create`` (exactly one concurrent creator wins) or
``os.replace``; replacing writes and deletes hold an ``flock`` on ``<root>/.kafka-segments.lock``, so an
``UpdateIfMatch`` check and its replace are atomic across processes. Etags are the content's SHA-256,
computed once per version of a file (its stat key) and kept across processes (``storage.local_etags``).
Symbolic links are never followed out of the root (``ForeignObjectError``), but the listing shows them (etag
``symlink-<sha256 of the target>``) so adoption can report them."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import uuid
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.errors import (
    ForeignObjectError,
    ObjectAlreadyExistsError,
    ObjectStoreError,
    PreconditionFailedError,
)
from kafka_segments.storage.base import (
    PROGRESS_CHUNK_BYTES,
    RESERVED_SEGMENT_PREFIX,
    Create,
    ObjectMeta,
    Overwrite,
    Progress,
    PutMode,
    PutResult,
    UpdateIfMatch,
    WritableBuffer,
    check_range,
    key_location,
    validate_folder,
    validate_key,
    validate_prefix,
)
from kafka_segments.storage.buffers import check_fits, etag_mismatch, writable_view
from kafka_segments.storage.local_etags import EtagRecords
from kafka_segments.storage.local_files import fsync_dir, link_reason, locked, os_errors, sub_folders
from kafka_segments.storage.local_files import names_after as _names_after
from kafka_segments.storage.local_mapping import MappedObject, map_file
from kafka_segments.storage.local_mapping import StatKey as _StatKey
from kafka_segments.storage.local_mapping import stat_key as _stat_key

TEMP_PREFIX = f"{RESERVED_SEGMENT_PREFIX}-tmp-"
LOCK_NAME = f"{RESERVED_SEGMENT_PREFIX}.lock"
_CHUNK = 1 << 20
_clock: Clock = wall_clock_ms
"""When a hashing begins (a file's mtime and ctime are compared with it: ``local_etags.persistable``)."""


def _write_fully(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view[:_CHUNK])
        view = view[written:]


class LocalStore:
    """Objects as files under ``root`` (created on the first write)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.abspath(root))
        self._etags = EtagRecords.for_lake(self.root)

    def describe(self) -> str:
        return str(self.root)

    def location(self, key: str) -> str:
        return key_location(self.describe(), key)

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"root": self.root}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.root = state["root"]
        self._etags = EtagRecords.for_lake(self.root)

    # -- reads ---------------------------------------------------------------------------------------------

    def get(self, key: str) -> bytes:
        path = self._readable(key)
        with os_errors(path):
            return path.read_bytes()

    def get_range(self, key: str, *, start: int, end: int, if_match: str | None = None) -> bytes:
        """Bytes ``[start, end)`` (``ObjectStore.get_range``), clipped to the file's size *before* reading: a
        read allocates what it asks for, so ``end`` past the file (a tampered manifest's ``size``) must not
        be asked for. ``if_match``: compared with the etag (sha256) of the file opened and read from, known
        or hashed; a write in place while read fails it too."""
        check_range(start, end)
        path = self._readable(key)
        with os_errors(path), path.open("rb") as f:
            opened = _stat_key(os.fstat(f.fileno()))
            if if_match is not None:
                etag_mismatch(if_match, self._open_file_etag(key, f, opened), location=str(path))
                self._etags.save()
            f.seek(start)
            data = f.read(max(0, min(end, os.fstat(f.fileno()).st_size) - start))
            if if_match is not None and _stat_key(os.fstat(f.fileno())) != opened:
                raise PreconditionFailedError("the object changed while read", location=str(path))
            return data

    def _open_file_etag(self, key: str, f: BinaryIO, version: _StatKey) -> str:
        """The etag of ``key``'s open file ``f`` (stat key ``version``): known (this process's or an earlier
        one's: ``storage.local_etags``), else hashed, and remembered if the file did not change meanwhile."""
        known = self._etags.get(key, version)
        if known is not None:
            return known
        started = _clock()
        f.seek(0)
        etag = _hash_stream(f)
        if _stat_key(os.fstat(f.fileno())) == version:
            self._etags.put(key, version, etag, hashed_from_ms=started)
        return etag

    def get_into(
        self,
        key: str,
        out: WritableBuffer,
        *,
        verify_checksum: bool = True,
        progress: Progress | None = None,
        if_match: str | None = None,
    ) -> int:
        """The object's bytes into ``out[:size]``; returns ``size`` (``storage.buffers``).

        ``readinto`` straight from the file, whose size comes from the open descriptor: an object replaced
        meanwhile is read whole, old or new, as ``get`` reads it. A local file keeps no checksum, so
        ``verify_checksum`` changes nothing here. ``if_match`` is compared with the sha256 (the etag) of
        the bytes read, after the read; the file this store listed or described unchanged since (same
        device, inode, size, mtime and ctime before and after the read) has the etag known of it (this
        process's or an earlier one's: ``storage.local_etags``), and is not hashed again."""
        started = _clock()
        size, unchanged = self._read_into(key, out, progress)
        if if_match is not None:
            location = str(self._path(key))
            etag = None if unchanged is None else self._etags.get(key, unchanged)
            if etag is None:
                etag = hashlib.sha256(writable_view(out, location=location)[:size]).hexdigest()
                if unchanged is not None:
                    self._etags.put(key, unchanged, etag, hashed_from_ms=started)
                    self._etags.save()
            etag_mismatch(if_match, etag, location=location)
        return size

    def _read_into(
        self, key: str, out: WritableBuffer, progress: Progress | None
    ) -> tuple[int, _StatKey | None]:
        """The size read, and the file's stat key if it did not change while read."""
        path = self._readable(key)
        view = writable_view(out, location=str(path))
        with os_errors(path), path.open("rb", buffering=0) as f:
            before = os.fstat(f.fileno())
            size = before.st_size
            check_fits(size, len(view), location=str(path))
            filled = 0
            chunk = size if progress is None else PROGRESS_CHUNK_BYTES
            while filled < size:
                count = f.readinto(view[filled : min(filled + chunk, size)])
                if not count:
                    raise ObjectStoreError(f"file ended after {filled} of {size} bytes", location=str(path))
                filled += count
                if progress is not None:
                    progress(filled)
            if f.read(1):
                raise ObjectStoreError(f"file grew past {size} bytes while read", location=str(path))
            after = _stat_key(os.fstat(f.fileno()))
        return size, after if after == _stat_key(before) else None

    def get_mapped(self, key: str, *, if_match: str | None = None) -> MappedObject:
        """The object's bytes as a private memory map (``storage.local_mapping``), not copied.

        ``sha256`` is the etag known of the file unchanged since (a listing, ``head`` or ``put`` of this
        process, or an earlier process's hashing: ``storage.local_etags``), else ``None``; with ``if_match``
        the mapped bytes are hashed when it is not known, and a mismatch is a ``PreconditionFailedError``.
        Raises ``ObjectNotFoundError``, ``ForeignObjectError`` (a link)."""
        path = self._readable(key)
        started = _clock()
        with os_errors(path):
            data, version = map_file(path)
        known = self._etags.get(key, version)
        if if_match is not None:
            if known is None:
                known = hashlib.sha256(data).hexdigest()
                self._etags.put(key, version, known, hashed_from_ms=started)
                self._etags.save()
            etag_mismatch(if_match, known, location=str(path))
        return MappedObject(key=key, data=data, version=version, sha256=known)

    def mapped_unchanged(self, mapped: MappedObject) -> bool:
        """Whether the file ``mapped`` maps is still there with the stat key it had when mapped (no write
        in place, no replacement)."""
        try:
            return _stat_key(self._readable(mapped.key).stat()) == mapped.version
        except (OSError, ForeignObjectError):
            return False

    def head(self, key: str) -> ObjectMeta:
        path = self._readable(key)
        with os_errors(path):
            meta = self._meta(key, path)
        self._etags.save()
        return meta

    def list(self, prefix: str = "", *, start_after: str | None = None) -> Iterator[ObjectMeta]:
        validate_prefix(prefix, location=self.describe())
        # Walk only the deepest directory the prefix names; stat only the keys listed.
        folders = prefix.split("/")[:-1]
        if self._linked_folder(folders) is not None:
            return  # under a linked folder: the listing above shows the link itself
        walked: dict[str, Sequence[str]] = {}
        start = self.root.joinpath(*folders)
        after = "" if start_after is None else start_after
        keys = sorted(self._walk(start, walked, prefix=prefix, after=after))
        for key in keys:
            try:
                yield self._listed_meta(key, self.root / key)
            except FileNotFoundError:
                continue  # deleted while listing
        self._etags.save(walked=walked, whole_lake=not folders)

    def list_folders(self, prefix: str = "") -> Iterator[str]:
        """The directories of the folder ``prefix`` names (an empty one too, which S3 would not show)."""
        validate_folder(prefix, location=self.describe())
        folders = prefix.split("/")[:-1]
        if self._linked_folder(folders) is not None:
            return
        for name in sub_folders(self.root.joinpath(*folders), reserved=RESERVED_SEGMENT_PREFIX):
            yield f"{prefix}{name}/"

    def _walk(self, top: Path, walked: dict[str, Sequence[str]], *, prefix: str, after: str) -> Iterator[str]:
        """Every file and link (to a file or a folder; not followed) under ``top`` whose key starts with
        ``prefix`` and sorts after ``after``; ``walked`` gets the names in each folder (``""``: the root)."""
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if not d.startswith(RESERVED_SEGMENT_PREFIX)]
            linked = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
            relative = Path(dirpath).relative_to(self.root).as_posix()
            folder = "" if relative == "." else relative
            names = [name for name in filenames + linked if not name.startswith(RESERVED_SEGMENT_PREFIX)]
            walked[folder] = names
            head = f"{folder}/" if folder else ""
            for name in _names_after(names, head, after):
                key = head + name
                if key.startswith(prefix):
                    yield key

    def _listed_meta(self, key: str, path: Path) -> ObjectMeta:
        """A listed object's metadata; a link's own (see the module docstring), never its target's."""
        st = path.lstat()
        if not stat.S_ISLNK(st.st_mode):
            return self._meta(key, path, st)  # not a link: its lstat is its stat
        target = hashlib.sha256(os.fsencode(os.readlink(path))).hexdigest()
        return ObjectMeta(
            key=key, size=st.st_size, etag=f"symlink-{target}", last_modified_ms=st.st_mtime_ns // 1_000_000
        )

    def _meta(self, key: str, path: Path, known: os.stat_result | None = None) -> ObjectMeta:
        st = path.stat() if known is None else known
        if not stat.S_ISREG(st.st_mode):
            raise FileNotFoundError(errno.ENOENT, "not a file", str(path))
        etag = self._etags.get(key, _stat_key(st))
        if etag is None:  # hashed from the file opened: its stat, not the path's a moment before
            with path.open("rb") as f:
                st = os.fstat(f.fileno())
                if not stat.S_ISREG(st.st_mode):
                    raise FileNotFoundError(errno.ENOENT, "not a file", str(path))
                etag = self._open_file_etag(key, f, _stat_key(st))
        return ObjectMeta(key=key, size=st.st_size, etag=etag, last_modified_ms=st.st_mtime_ns // 1_000_000)

    # -- writes --------------------------------------------------------------------------------------------

    def put(self, key: str, data: bytes, *, mode: PutMode = Overwrite()) -> PutResult:  # noqa: B008
        path = self._path(key)
        etag = hashlib.sha256(data).hexdigest()
        with os_errors(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            temp, inode = self._write_temp(path, data)
            try:
                if isinstance(mode, Create):
                    try:
                        os.link(temp, path)
                    except FileExistsError:
                        raise ObjectAlreadyExistsError(
                            "object already exists (create-only write refused)", location=str(path)
                        ) from None
                else:
                    with locked(self.root, LOCK_NAME):
                        if isinstance(mode, UpdateIfMatch):
                            self._check_etag(path, mode.etag)
                        os.replace(temp, path)
                fsync_dir(path.parent)
            finally:
                temp.unlink(missing_ok=True)
        self._remember(key, path, inode, etag)
        return PutResult(key=key, etag=etag)

    def _remember(self, key: str, path: Path, inode: int, etag: str) -> None:
        """Cache the etag of the file just written, if ``path`` is still that file (a ``head`` or listing
        of it then hashes nothing)."""
        try:
            st = path.stat()
        except OSError:
            return
        if st.st_ino == inode:
            self._etags.put(key, _stat_key(st), etag, hashed_from_ms=None)

    def _check_etag(self, path: Path, expected: str) -> None:
        try:
            current = _hash_file(path)
        except FileNotFoundError:
            raise PreconditionFailedError(
                f"conditional update on a missing object (expected etag {expected})", location=str(path)
            ) from None
        if current != expected:
            raise PreconditionFailedError(
                f"etag mismatch: expected {expected}, found {current}", location=str(path)
            )

    def _write_temp(self, path: Path, data: bytes) -> tuple[Path, int]:
        """The fsynced temp file holding ``data``, and its inode."""
        temp = path.with_name(f"{TEMP_PREFIX}{uuid.uuid4().hex}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            _write_fully(fd, data)
            os.fsync(fd)
            inode = os.fstat(fd).st_ino
        except BaseException:
            os.close(fd)
            temp.unlink(missing_ok=True)
            raise
        os.close(fd)
        return temp, inode

    def delete(self, key: str) -> None:
        path = self._path(key)
        with os_errors(path), locked(self.root, LOCK_NAME):
            path.unlink(missing_ok=True)

    def delete_many(self, keys: Iterable[str]) -> None:
        paths = [self._path(key) for key in keys]  # validate every key before deleting any
        if not paths:
            return
        with os_errors(self.root), locked(self.root, LOCK_NAME):
            for path in paths:
                path.unlink(missing_ok=True)

    # -- helpers -------------------------------------------------------------------------------------------

    def _path(self, key: str) -> Path:
        """The key's file; ``ForeignObjectError`` if a folder on the way is a symbolic link."""
        path = self.root / validate_key(key, location=self.describe())
        linked = self._linked_folder(key.split("/")[:-1])
        if linked is not None:
            raise ForeignObjectError(link_reason("folder", linked), location=str(path))
        return path

    def _readable(self, key: str) -> Path:
        """``_path``, and the file itself must not be a symbolic link."""
        path = self._path(key)
        if path.is_symlink():
            raise ForeignObjectError(link_reason("file", path), location=str(path))
        return path

    def _linked_folder(self, folders: Sequence[str]) -> Path | None:
        """The first of the nested ``folders`` below the root that is a symbolic link, if any."""
        current = self.root
        for name in folders:
            current = current / name
            if current.is_symlink():
                return current
        return None


def _hash_file(path: Path) -> str:
    with path.open("rb") as f:
        return _hash_stream(f)


def _hash_stream(f: BinaryIO) -> str:
    """The sha256 of the rest of the open file ``f``."""
    digest = hashlib.sha256()
    while chunk := f.read(_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()
