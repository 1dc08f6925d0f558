"""The library's folder for what it builds once and reuses: the Spark job's library archives (``spark/``)
and the compiled kernels of an archive (``numba/``).

``$KAFKA_SEGMENTS_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/kafka-segments``, else
``~/.cache/kafka-segments``.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "KAFKA_SEGMENTS_CACHE_DIR"


def user_cache_dir(name: str) -> Path:
    """The cache's sub-folder ``name`` (not created here)."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured) / name
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-segments" / name
