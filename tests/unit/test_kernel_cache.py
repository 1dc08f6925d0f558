"""Compiled kernels are cached on disk also when the library is imported from its archive (Spark's
``--py-files``), under the archive's name: a second Spark application, whose copy of the archive is in
another folder, loads them instead of compiling them again (``records.fast.jit``). The archive carries the
kernels its builder compiled, so a new executor with an empty cache loads them too (issue 22, point 3)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from kafka_segments.pipeline.engines.spark_submit import library_archive
from kafka_segments.user_cache import CACHE_DIR_ENV, archive_kernel_dir

pytestmark = pytest.mark.unit

PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from kafka_segments.records.fast import index_kernels as kernels
kernel = kernels.relative_last_offsets
kernel(np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int32), 0)
print(json.dumps({"file": kernels.__file__, "hits": sum(kernel.stats.cache_hits.values()),
                  "misses": sum(kernel.stats.cache_misses.values())}))
"""


def _first_call(archive: Path, cache: Path) -> dict[str, object]:
    """Import the kernels from ``archive`` in a fresh Python (no source tree on its path), call one kernel,
    and say where it came from and whether numba loaded it from the cache."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env[CACHE_DIR_ENV] = str(cache)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(archive)], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_a_kernel_compiled_from_one_copy_of_the_archive_is_loaded_by_a_copy_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(cache))  # an archive without kernels: none compiled for it yet
    built = library_archive(cache_dir=tmp_path / "archives")
    first, second = tmp_path / "app-1", tmp_path / "app-2"  # Spark copies --py-files per application
    for folder in (first, second):
        folder.mkdir()
        shutil.copy(built, folder)

    compiled = _first_call(first / built.name, cache)
    loaded = _first_call(second / built.name, cache)

    assert str(compiled["file"]).startswith(str(first / built.name))
    assert (compiled["hits"], compiled["misses"]) == (0, 1)
    assert str(loaded["file"]).startswith(str(second / built.name))
    assert (loaded["hits"], loaded["misses"]) == (1, 0)
    kept = cache / "numba" / built.name / "kafka_segments" / "records" / "fast"
    assert sorted(path.suffix for path in kept.iterdir()) == [".nbc", ".nbi"]


def test_a_fresh_worker_with_an_empty_cache_loads_the_kernels_the_archive_carries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver_cache, worker_cache = tmp_path / "driver-cache", tmp_path / "worker-cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(driver_cache))
    plain = library_archive(cache_dir=tmp_path / "archives")
    assert _first_call(plain, driver_cache)["misses"] == 1  # compiled on the driver's host, into its cache

    shipped = library_archive(cache_dir=tmp_path / "archives")
    executor = tmp_path / "executor-app"  # another host: its own copy, its own empty cache
    executor.mkdir()
    shutil.copy(shipped, executor)
    loaded = _first_call(executor / shipped.name, worker_cache)

    assert shipped.name.startswith(plain.name.removesuffix(".zip") + ".k")
    assert str(loaded["file"]).startswith(str(executor / shipped.name))
    assert (loaded["hits"], loaded["misses"]) == (1, 0)  # loaded from the archive, nothing compiled
    assert not list(worker_cache.rglob("*.nbc"))


def test_an_archive_and_its_kernel_tagged_copy_share_one_kernel_folder() -> None:
    assert archive_kernel_dir("kafka_segments-0123abcd.k4567ef.zip") == archive_kernel_dir(
        "kafka_segments-0123abcd.zip"
    )
    assert archive_kernel_dir("other.zip").name == "other.zip"
