"""What the tests do to start Spark jobs faster without changing what they run: a quicker JVM for every
``spark-submit`` (and the session's own Spark) and the numba kernels the user's cache already holds for the
library archive.

* ``QUICK_JVM``: Spark's JVMs in a test start, run a few tiny jobs and stop; most of their CPU is the JIT
  compiling Spark's own start-up code with its optimising compiler. ``-XX:TieredStopAtLevel=1`` keeps the
  quick one only and ``-XX:+UseSerialGC`` one collector thread (a trivial ``spark-submit`` on a loaded
  2-core machine: 17.8 s of CPU without them, 11.3 s with them). ``spark-submit`` (also pyspark's own
  launch of the JVM) adds ``SPARK_SUBMIT_OPTS`` to the driver's command line. Tests only: a user's jobs
  keep the JVM's defaults.
* ``seed_archive_kernels``: the tests cache the library archive and its kernels in a temporary folder,
  never in the user's (``kafka_segments_cache`` in ``tests/conftest.py``), so the first Spark job of a
  session compiled every kernel again in its executors, although ``scripts/setup`` had just compiled them
  for the same archive (``python -m kafka_segments.cli.warm --archive``). They are copied from the user's
  cache folder (read only) when it has them for the current sources; numba still checks that they belong
  to the source and the CPU, and compiles when not.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest
from kafka_segments.pipeline.engines.library_archive import library_archive
from kafka_segments.user_cache import CACHE_DIR_ENV, KERNEL_CACHE, archive_kernel_dir, user_cache_dir

QUICK_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
SUBMIT_OPTS_ENV = "SPARK_SUBMIT_OPTS"


def with_quick_jvm(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with ``QUICK_JVM_OPTIONS`` added to ``SPARK_SUBMIT_OPTS`` (after what it already has)."""
    own = environ.get(SUBMIT_OPTS_ENV, "")
    if QUICK_JVM_OPTIONS in own:
        return dict(environ)
    return {**environ, SUBMIT_OPTS_ENV: f"{own} {QUICK_JVM_OPTIONS}".strip()}


def seed_archive_kernels(folder: Path, *, user_cache: Path) -> Path | None:
    """Copy the kernels ``user_cache`` (the user's ``numba`` cache folder) holds for the current library
    archive into the test cache ``folder`` (a ``$KAFKA_SEGMENTS_CACHE_DIR``); the folder copied, or ``None``
    when there was nothing to copy or ``folder`` already has them. Written under a temporary name and
    renamed: xdist workers share ``folder``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_DIR_ENV, str(folder))
        target = archive_kernel_dir(library_archive().name)
    source = user_cache / target.name
    if target.exists() or not source.is_dir():
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        shutil.copytree(source, staging, dirs_exist_ok=True)
        staging.rename(target)
    except OSError:  # another worker renamed its copy first
        shutil.rmtree(staging, ignore_errors=True)
        return None
    return target


def user_kernel_cache() -> Path:
    """The user's kernel cache folder (``user_cache.user_cache_dir``) as this process's environment names it
    (call it before a test points ``$KAFKA_SEGMENTS_CACHE_DIR`` elsewhere)."""
    return user_cache_dir(KERNEL_CACHE)
