"""Reading committed manifests from a store: the version list, one version, the head."""

from __future__ import annotations

from kafka_segments.errors import ObjectNotFoundError
from kafka_segments.lake.layout import MANIFESTS_PREFIX, parse_manifest_key
from kafka_segments.lake.roots import read_root
from kafka_segments.state import Manifest
from kafka_segments.storage.base import ObjectStore


def manifest_versions(store: ObjectStore) -> list[int]:
    """Every committed manifest version present, ascending."""
    versions = (parse_manifest_key(meta.key) for meta in store.list(MANIFESTS_PREFIX))
    return sorted(version for version in versions if version is not None)


def head_version(store: ObjectStore) -> int | None:
    """The latest committed version, ``None`` for a lake without a manifest yet."""
    versions = manifest_versions(store)
    return versions[-1] if versions else None


def read_manifest(store: ObjectStore, version: int, *, referenced: set[str] | None = None) -> Manifest:
    """Manifest ``version``, in either format (a format 2 root's partitions are read from its pieces;
    ``referenced`` collects their keys).

    Raises:
        ObjectNotFoundError: no such version (never committed, or removed by gc).
        ManifestFormatError: the object is not a valid manifest (``UnsupportedFormatVersionError`` for an
            unknown format version); also when it claims another version than its key.
    """
    return read_root(store, version).manifest(referenced=referenced)


def read_head(store: ObjectStore) -> Manifest | None:
    """The latest committed manifest, ``None`` when nothing was committed yet."""
    version = head_version(store)
    return None if version is None else read_manifest(store, version)


def read_head_topic(store: ObjectStore, topic: str) -> Manifest | None:
    """The latest committed manifest with ``topic``'s partitions only (a reader's view: a format 2 lake's
    other partitions are not read), ``None`` when nothing was committed yet."""
    version = head_version(store)
    return None if version is None else read_root(store, version).manifest(lambda tp: tp.topic == topic)


def try_read_manifest(
    store: ObjectStore, version: int, *, referenced: set[str] | None = None
) -> Manifest | None:
    """Manifest ``version``, or ``None`` when it does not exist."""
    try:
        return read_manifest(store, version, referenced=referenced)
    except ObjectNotFoundError:
        return None
