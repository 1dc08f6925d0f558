"""``njit``: numba's decorator for every kernel of this package, with an on-disk cache that also holds when
the package is imported from a zip (docs/compaction.md, "Engines").

numba caches a kernel imported from a zip in a folder named after the zip's absolute path, and Spark copies
``--py-files`` into a new folder for every application: every Spark job compiled every kernel again (once
per Python worker) and left one more copy of the cache behind. Here such a kernel is cached
under the archive's sources' name (``user_cache.archive_kernel_dir``), which carries a digest of their
content (``spark_submit.library_archive``). When that folder has no compiled code for a kernel, it is loaded
from the archive itself, which carries the kernels its builder had compiled (``user_cache.ARCHIVE_KERNELS``):
a new executor with an empty cache loads them instead of compiling. numba checks that cached code belongs to
the source and to the machine (its CPU), and compiles again, into the user's cache, when either differs.

numba's array functions (``numba.np.arraymath``, part of its CPU target) import SciPy's BLAS when they are
first imported, only to learn whether ``np.dot`` and ``np.linalg`` can be compiled: about 0.3 s of every
process that loads a kernel, some 15% of the CPU of a small ``kafka-segments run``. No kernel here calls
them, so they are imported with ``scipy.linalg`` out of sight (``_import_numba_array_functions``) when it is
not imported yet; it stays importable as before."""

from __future__ import annotations

import importlib
import io
import pickle
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import numba
from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile, ZipCacheLocator

from kafka_segments.user_cache import ARCHIVE_KERNELS, archive_kernel_dir

_ARRAY_FUNCTIONS = "numba.np.arraymath"
_SCIPY_LINALG = "scipy.linalg"


def _import_numba_array_functions() -> None:
    """``numba.np.arraymath``, imported while ``import scipy.linalg`` fails at once (when it is not imported
    yet): numba then compiles no BLAS-backed function (none is used here) instead of importing SciPy's
    linear algebra."""
    if _ARRAY_FUNCTIONS in sys.modules or _SCIPY_LINALG in sys.modules:
        return
    sys.modules[_SCIPY_LINALG] = None  # type: ignore[assignment]
    try:
        importlib.import_module(_ARRAY_FUNCTIONS)
    finally:
        if sys.modules.get(_SCIPY_LINALG, False) is None:
            del sys.modules[_SCIPY_LINALG]


_import_numba_array_functions()


class ArchiveCacheLocator(ZipCacheLocator):
    """numba's locator for kernels in a zip, with a cache folder named after the zip's sources (the same in
    every Spark application) rather than its absolute path (which is not)."""

    def __init__(self, py_func: Callable[..., Any], py_file: str) -> None:
        super().__init__(py_func, py_file)  # type: ignore[no-untyped-call]
        self._inner = PurePosixPath(self._internal_path).parent
        self._cache_path = str(archive_kernel_dir(Path(self._zip_path).name) / self._inner)

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

    def shipped(self, name: str) -> bytes | None:
        """The cache file ``name`` of this kernel as the archive carries it, if it does."""
        try:
            with zipfile.ZipFile(self._zip_path) as archive:
                return archive.read(f"{ARCHIVE_KERNELS}/{self._inner}/{name}")
        except (KeyError, OSError, zipfile.BadZipFile):
            return None


class _ShippedIndexDataCacheFile(IndexDataCacheFile):
    """numba's index and data files in the user's cache folder, else the ones the archive carries (read in
    place, never copied: what numba compiles goes to the user's cache as usual)."""

    def __init__(self, locator: ArchiveCacheLocator, **options: Any) -> None:
        super().__init__(**options)  # type: ignore[no-untyped-call]
        self._locator = locator

    def load(self, key: Any) -> Any:
        found = super().load(key)  # type: ignore[no-untyped-call]
        return found if found is not None else self._load_shipped(key)

    def _load_shipped(self, key: Any) -> Any:
        """The same checks as numba's ``_load_index``: numba's version, then the source's stamp."""
        index = self._locator.shipped(self._index_name)
        if index is None:
            return None
        stream = io.BytesIO(index)
        if pickle.load(stream) != self._version:
            return None
        stamp, overloads = pickle.loads(stream.read())
        name = overloads.get(key) if stamp == self._source_stamp else None
        data = None if name is None else self._locator.shipped(name)
        return None if data is None else pickle.loads(data)


class _CacheImpl(CompileResultCacheImpl):
    _locator_classes = [ArchiveCacheLocator, *CompileResultCacheImpl._locator_classes]  # noqa: RUF012


class _FunctionCache(FunctionCache):
    _impl_class = _CacheImpl

    def __init__(self, py_func: Callable[..., Any]) -> None:
        super().__init__(py_func)  # type: ignore[no-untyped-call]
        locator = self._impl.locator
        if isinstance(locator, ArchiveCacheLocator):
            self._cache_file = _ShippedIndexDataCacheFile(
                locator,
                cache_path=self._cache_path,
                filename_base=self._impl.filename_base,
                source_stamp=locator.get_source_stamp(),  # type: ignore[no-untyped-call]
            )


def njit(*, cache: bool = False, **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``numba.njit(**options)``; with ``cache=True`` the kernel's compiled code is kept on disk (next to its
    source, or for an archive as the module docstring says)."""

    def decorate(function: Callable[..., Any]) -> Any:
        dispatcher = numba.njit(**options)(function)
        if cache:
            dispatcher._cache = _FunctionCache(function)  # what numba's enable_caching sets, with our locator
        return dispatcher

    return decorate
