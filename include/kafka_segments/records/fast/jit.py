"""``njit``: numba's decorator for every kernel of this package, with an on-disk cache that also holds when
the package is imported from a zip (the library archive that a Spark job gets through ``--py-files``).

numba caches a compiled kernel next to its source (``__pycache__``) or, when the source is in a zip, in a
user-wide folder named after the zip's absolute path. Spark copies ``--py-files`` into a new folder for every
application, so from the archive every Spark job compiled every kernel again (15-25 s of a job; once per
Python worker) and left one more copy of the cache behind. Here a kernel imported from an archive is cached
under the archive's file name instead, which carries a digest of the archive's content
(``spark_submit.library_archive``): in ``numba/<archive name>/`` of the library's cache folder
(``user_cache.user_cache_dir``), one compile per library version and host. numba still checks that the
cached code belongs to the source (its stamp is a hash of the source file's content) and to the machine (CPU
name and features), and compiles again when either differs.
"""

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
