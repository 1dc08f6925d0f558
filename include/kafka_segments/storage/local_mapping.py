"""A local file's bytes as a memory map (``LocalStore.get_mapped``): a round or an adoption reads a segment of
a local lake straight from the page cache, without copying it into fresh memory first.

Copying 1 GB into a new buffer costs more CPU than decoding it (the new pages fault in one by one:
bench/RESULTS.md, "Against Kafka's own cleaner"). The map is private (``MAP_PRIVATE``): a write into it stays
in this process and never reaches the file, and it is writable, so numba's kernels see the array type of any
other input buffer. The file's inode is mapped: a file *replaced* meanwhile (``os.replace``, as every
writer of this project does) leaves the mapped version whole. A file rewritten *in place*
changes under the map: ``LocalStore.mapped_unchanged`` tells (device, inode, size, mtime and ctime), and a
file truncated in place while mapped stops the process (``SIGBUS``): a lake's objects are replaced, never
rewritten (docs/lake.md, "A local lake")."""

from __future__ import annotations

import ctypes
import mmap
import os
import stat
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from kafka_segments.libc import libc as _libc

if TYPE_CHECKING:
    from typing_extensions import Buffer

StatKey = tuple[int, int, int, int, int]
"""A file's device, inode, size, mtime and ctime (ns): what changes whenever its content can have changed."""


def stat_key(st: os.stat_result) -> StatKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True, slots=True)
class MappedObject:
    """One version of a local object, mapped."""

    key: str
    data: memoryview
    """The object's bytes (a writable view of a private map: writes never reach the file)."""
    version: StatKey
    """The mapped file's stat key when it was opened."""
    sha256: str | None
    """The content's sha256 (its etag), when the store knew it without hashing; else ``None``."""

    @property
    def size(self) -> int:
        return len(self.data)


def map_file(path: Path) -> tuple[memoryview, StatKey]:
    """``path``'s bytes, privately mapped, and its stat key at the open. The map keeps no file descriptor
    (Python's ``mmap`` keeps one per map until 3.13: a round over a partition of a thousand segments would
    run out of them); it is unmapped when the last view of it is gone.

    Raises:
        FileNotFoundError: the file is missing, or is not a regular file.
        OSError: it cannot be opened or mapped.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileNotFoundError(f"{path} is not a file")
        if st.st_size == 0:  # mmap refuses an empty file
            return memoryview(bytearray()), stat_key(st)
        return _mapped(fd, st.st_size), stat_key(st)
    finally:
        os.close(fd)  # the map does not need it


def _mapped(fd: int, size: int) -> memoryview:
    libc = _libc()
    if libc is None:
        raise OSError("mmap: no C library to map files with")
    address = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE, fd, 0)
    if address is None or address == _MAP_FAILED:
        error = ctypes.get_errno()
        raise OSError(error, f"mmap: {os.strerror(error)}")
    import numpy as np

    owner = _Map(address, size)
    weakref.finalize(owner, libc.munmap, address, size)  # once the last view of it is gone
    return memoryview(cast("Buffer", np.asarray(owner)))  # numpy's stubs: buffer protocol from 3.12


class _Map:
    """One map's owner: the array numpy makes of it keeps it alive (an ``__array_interface__``, not a ctypes
    array type: ctypes would keep one new type per size for good)."""

    def __init__(self, address: int, size: int) -> None:
        self.__array_interface__ = {
            "data": (address, False),
            "shape": (size,),
            "typestr": "|u1",
            "version": 3,
        }


_MAP_FAILED = ctypes.c_void_p(-1).value
