"""File-system steps of the local store (``storage.local``): a directory made durable, its sub-folders, the
names of a folder after a listing's start, why a symbolic link is refused, the lake's lock, and OS errors as
the store's errors."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kafka_segments.errors import ObjectNotFoundError, ObjectStoreError


def fsync_dir(directory: Path) -> None:
    """Make ``directory``'s entries (a new or replaced name) durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sub_folders(directory: Path, *, reserved: str) -> list[str]:
    """The names of ``directory``'s sub-directories (not links, none starting with ``reserved``), sorted as
    their keys ``<name>/`` sort; none when ``directory`` does not exist."""
    try:
        with os.scandir(directory) as entries:
            names = [
                entry.name
                for entry in entries
                if entry.is_dir(follow_symlinks=False) and not entry.name.startswith(reserved)
            ]
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(names, key=lambda name: name + "/")


def names_after(names: list[str], head: str, after: str) -> Iterable[str]:
    """The ``names`` of the folder whose keys start with ``head`` whose key sorts after ``after``, compared
    without building every key (a run lists each partition's tail: a few keys of a folder of many)."""
    shared = after[: len(head)]
    if shared < head:
        return names  # every key of the folder sorts after it
    if shared > head:
        return ()
    rest = after[len(head) :]
    return [name for name in names if name > rest]


def link_reason(what: str, link: Path) -> str:
    """Why a local lake refuses the symbolic link ``link`` (a ``file`` or a ``folder``)."""
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    return (
        f"a symbolic link ({what} {link} -> {target}): a local lake does not follow links, whose bytes "
        "would come from outside its root"
    )


@contextmanager
def locked(root: Path, name: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the file ``name`` of the folder ``root`` (both created if missing)."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / name, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextmanager
def os_errors(path: Path) -> Iterator[None]:
    """An ``OSError`` as the store's error naming ``path`` (a missing file: ``ObjectNotFoundError``)."""
    try:
        yield
    except (FileNotFoundError, IsADirectoryError) as exc:
        raise ObjectNotFoundError("object not found", location=str(path)) from exc
    except ObjectStoreError:
        raise
    except OSError as exc:
        raise ObjectStoreError(f"{type(exc).__name__}: {exc.strerror or exc}", location=str(path)) from exc
