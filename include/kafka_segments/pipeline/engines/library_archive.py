"""The library archive: a zip of the ``kafka_segments`` package that Spark's executors import
(``--py-files``), with the numba kernels compiled for it when this host has them.

A Python worker importing the package from a zip cannot write numba's cache next to the sources, and a new
executor's own cache folder is empty: without the kernels in the archive each of its Python workers would
compile those it calls (tens of seconds on a loaded machine). So the archive carries what this host has
compiled from an archive of the same sources (``user_cache.archive_kernel_dir``, filled by
``python -m kafka_segments.cli.warm --archive``, which ``scripts/setup`` runs, or by a Spark job run on this
host), in ``user_cache.ARCHIVE_KERNELS``, and ``records.fast.jit`` loads them from there. numba only uses
them on a machine with the same CPU; others compile as before."""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

from kafka_segments.errors import LocatedError
from kafka_segments.user_cache import ARCHIVE_KERNELS, archive_kernel_dir, user_cache_dir

ARCHIVE_PREFIX = "kafka_segments-"
_ARCHIVE_SUFFIXES = (".py", ".typed")
_KERNEL_SUFFIXES = (".nbi", ".nbc")
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
_DIGEST_CHARS = 20


class SparkJobNotFoundError(LocatedError):
    """A job script, the ``spark_jobs`` folder, the library's source or ``spark-submit`` is not where it must
    be (``location``: the path looked at)."""


def library_archive(*, cache_dir: Path | None = None) -> Path:
    """A zip of the ``kafka_segments`` package (``.py`` and ``py.typed`` files only) for ``--py-files``, with
    the kernels this host compiled for it (the module docstring).

    Its name carries a digest of the sources (``kafka_segments-<sources>.zip``) and, when it carries kernels,
    one of those too (``kafka_segments-<sources>.k<kernels>.zip``), so an archive is built once per content
    and then reused; it is written to a temporary file and renamed, so a reader never sees a partial archive.
    The zip is deterministic (sorted entries, fixed timestamps).

    Raises:
        SparkJobNotFoundError: the package was not imported from a source directory.
    """
    files = [(f"kafka_segments/{relative}", path) for relative, path in _archive_files(package_dir())]
    sources = f"{ARCHIVE_PREFIX}{_digest(files)}"
    kernel_dir = archive_kernel_dir(f"{sources}.zip")
    kernels = [(f"{ARCHIVE_KERNELS}/{relative}", path) for relative, path in _kernel_files(kernel_dir)]
    folder = _cache_dir(cache_dir)
    target = folder / (f"{sources}.k{_digest(kernels)}.zip" if kernels else f"{sources}.zip")
    if target.is_file():
        return target
    entries = files + kernels
    handle, temporary = tempfile.mkstemp(prefix=f".{ARCHIVE_PREFIX}", suffix=".zip.tmp", dir=folder)
    try:
        with os.fdopen(handle, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
            for folder_name in _folders(name for name, _path in entries):
                entry = zipfile.ZipInfo(folder_name, date_time=_ZIP_EPOCH)
                entry.external_attr = (0o40755 << 16) | 0x10
                archive.writestr(entry, b"")
            for name, path in entries:
                info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                archive.writestr(info, path.read_bytes())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def package_dir() -> Path:
    """The folder of the ``kafka_segments`` package. Raises ``SparkJobNotFoundError``."""
    import kafka_segments

    package = Path(kafka_segments.__file__).resolve().parent
    if not package.is_dir():
        raise SparkJobNotFoundError(
            "the kafka_segments package is not a source directory (imported from an archive?)",
            location=str(package),
        )
    return package


def _digest(entries: list[tuple[str, Path]]) -> str:
    digest = hashlib.sha256()
    for name, path in entries:
        data = path.read_bytes()
        digest.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()[:_DIGEST_CHARS]


def _archive_files(package: Path) -> list[tuple[str, Path]]:
    files = [
        (path.relative_to(package).as_posix(), path)
        for path in package.rglob("*")
        if path.is_file() and path.suffix in _ARCHIVE_SUFFIXES and "__pycache__" not in path.parts
    ]
    return sorted(files)


def _kernel_files(folder: Path) -> list[tuple[str, Path]]:
    """numba's index and data files under ``folder`` (none when it does not exist); numba writes each to a
    temporary name first, so these are whole."""
    if not folder.is_dir():
        return []
    return sorted(
        (path.relative_to(folder).as_posix(), path)
        for path in folder.rglob("*")
        if path.suffix in _KERNEL_SUFFIXES and path.is_file()
    )


def _folders(names: Iterable[str]) -> list[str]:
    """Every folder of the archive as a directory entry (``name/``): ``zipimport`` finds a namespace package
    (a folder without ``__init__.py``, e.g. ``kafka_segments/retention``) only through its entry."""
    folders: set[str] = set()
    for name in names:
        parts = name.split("/")[:-1]
        folders.update("/".join(parts[: index + 1]) + "/" for index in range(len(parts)))
    return sorted(folders)


def _cache_dir(cache_dir: Path | None) -> Path:
    """``cache_dir`` as given, else ``$KAFKA_SEGMENTS_CACHE_DIR/spark``, else the user's cache folder."""
    folder = user_cache_dir("spark") if cache_dir is None else cache_dir
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder
