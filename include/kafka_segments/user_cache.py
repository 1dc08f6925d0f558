"""The library's folder for what it builds once and reuses: the Spark job's library archives (``spark/``)
and the compiled kernels of an archive (``numba/``).

``$KAFKA_SEGMENTS_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/kafka-segments``, else
``~/.cache/kafka-segments``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

CACHE_DIR_ENV = "KAFKA_SEGMENTS_CACHE_DIR"
KERNEL_CACHE = "numba"
"""The sub-folder for the kernels of archives: one folder per archive's sources (``archive_kernel_dir``)."""
ARCHIVE_KERNELS = "_kernels"
"""The folder at the root of a library archive that holds the kernels compiled for it, laid out as in
``archive_kernel_dir`` (``records.fast.jit`` loads them from there when the user's cache has none)."""
_KERNELS_TAG = re.compile(r"\.k[0-9a-f]+(?=\.zip$)")


def user_cache_dir(name: str) -> Path:
    """The cache's sub-folder ``name`` (not created here)."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured) / name
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-segments" / name


def archive_kernel_dir(archive_name: str) -> Path:
    """Where numba keeps the kernels compiled from the library archive named ``archive_name``: a folder
    named after the archive without its kernels' tag (``kafka_segments-<sources>.k<kernels>.zip`` and
    ``kafka_segments-<sources>.zip`` share ``numba/kafka_segments-<sources>.zip``), since the kernels
    belong to the sources."""
    return user_cache_dir(KERNEL_CACHE) / _KERNELS_TAG.sub("", archive_name)
