"""A table's files listed and deleted through its own pyiceberg FileIO, for a table located outside the lake
(a warehouse elsewhere; ``tables.orphans``): pyiceberg's ``PyArrowFileIO`` gives the pyarrow file system that
lists its location, and its ``delete`` removes a file."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ListedFile:
    """A file under the table's location: its identity (scheme, path as the file system names it), its
    location for ``FileIO.delete``, its size and when it was last modified."""

    identity: tuple[str, str]
    location: str
    size: int
    modified_ms: int


def file_io_listing(table: Any) -> list[ListedFile] | None:
    """Every file under ``table``'s location; ``None``: its FileIO cannot list (not pyarrow's)."""
    from pyarrow.fs import FileSelector, FileType
    from pyiceberg.io.pyarrow import PyArrowFileIO

    io = table.io
    if not isinstance(io, PyArrowFileIO):
        return None
    scheme, netloc, path = PyArrowFileIO.parse_location(table.location())
    selector = FileSelector(path.rstrip("/"), recursive=True, allow_not_found=True)
    infos = io.fs_by_scheme(scheme, netloc).get_file_info(selector)
    return [
        ListedFile(
            (scheme, info.path), f"{scheme}://{info.path}", int(info.size), int(info.mtime_ns // 1_000_000)
        )
        for info in infos
        if info.type == FileType.File
    ]


def identities(locations: Iterable[str]) -> set[tuple[str, str]]:
    """The identities of ``locations`` as ``file_io_listing`` names its files."""
    from pyiceberg.io.pyarrow import PyArrowFileIO

    found = set()
    for location in locations:
        scheme, _, path = PyArrowFileIO.parse_location(location)
        found.add((scheme, path))
    return found


def delete_files(table: Any, files: Iterable[ListedFile]) -> None:
    """Delete ``files`` through ``table``'s FileIO."""
    for listed in files:
        table.io.delete(listed.location)
