"""File-system steps of the local store (``storage.local``): a directory made durable, and why a symbolic
link is refused."""

from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    """Make ``directory``'s entries (a new or replaced name) durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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
