"""``njit``: numba's decorator for every kernel of this package, with an on-disk cache that also holds when
the package is imported from a zip (docs/compaction.md, "Engines").

numba caches a kernel imported from a zip in a folder named after the zip's absolute path, and Spark copies
``--py-files`` into a new folder for every application: every Spark job compiled every kernel again (once
per Python worker) and left one more copy of the cache behind. Here such a kernel is cached
under the archive's file name, which carries a digest of its content (``spark_submit.library_archive``). numba
still checks that the cached code belongs to the source and to the machine, and compiles again when either
differs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import numba
from numba.core.caching import CompileResultCacheImpl, FunctionCache, ZipCacheLocator

from kafka_segments.user_cache import user_cache_dir

KERNEL_CACHE = "numba"
"""The sub-folder of the library's cache folder for the kernels of archives."""


class ArchiveCacheLocator(ZipCacheLocator):
    """numba's locator for kernels in a zip, with a cache folder named after the zip's file name (which is
    the same in every Spark application) rather than its absolute path (which is not)."""

    def __init__(self, py_func: Callable[..., Any], py_file: str) -> None:
        super().__init__(py_func, py_file)  # type: ignore[no-untyped-call]
        inner = PurePosixPath(self._internal_path).parent
        self._cache_path = str(user_cache_dir(KERNEL_CACHE) / Path(self._zip_path).name / inner)

    @classmethod
    def from_function(cls, py_func: Callable[..., Any], py_file: str) -> ArchiveCacheLocator | None:
        if ".zip" not in py_file:
            return None
        locator = cls(py_func, py_file)
        try:
            locator.ensure_cache_path()  # type: ignore[no-untyped-call]
        except OSError:  # not writable: numba's own locators decide
            return None
        return locator


class _CacheImpl(CompileResultCacheImpl):
    _locator_classes = [ArchiveCacheLocator, *CompileResultCacheImpl._locator_classes]  # noqa: RUF012


class _FunctionCache(FunctionCache):
    _impl_class = _CacheImpl


def njit(*, cache: bool = False, **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``numba.njit(**options)``; with ``cache=True`` the kernel's compiled code is kept on disk (next to its
    source, or for an archive as the module docstring says)."""

    def decorate(function: Callable[..., Any]) -> Any:
        dispatcher = numba.njit(**options)(function)
        if cache:
            dispatcher._cache = _FunctionCache(function)  # type: ignore[no-untyped-call]  # what numba's enable_caching sets, with our locator
        return dispatcher

    return decorate
