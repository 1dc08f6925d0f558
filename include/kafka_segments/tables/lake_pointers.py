"""The objects of the catalog kept inside the lake (``tables.lake_catalog``), read and written through the
lake's own ``ObjectStore`` with its conditional writes (docs/tables.md, "Catalogs").

* ``_kafka_segments/tables/catalog/<namespace>/<table>.json``: a table's pointer, ``{"metadata-location":
  …, "previous-metadata-location": …}``, the Iceberg metadata file that is the table's current state. It is
  created only if absent (``Create``) and moved only from the version read (``UpdateIfMatch(etag)``): of two
  commits from the same state one loses, on a local lake as on S3.
* ``_kafka_segments/tables/catalog/<namespace>/namespace.properties``: a namespace's properties (JSON); a
  namespace also exists while it holds a table.

Names are one key segment each: no ``/``, ``\\``, NUL, ``.`` or ``..``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from kafka_segments.errors import (
    ObjectAlreadyExistsError,
    ObjectNotFoundError,
    PreconditionFailedError,
    TableError,
)
from kafka_segments.lake.layout import META_PREFIX
from kafka_segments.storage.base import Create, ObjectStore, UpdateIfMatch

CATALOG_PREFIX = META_PREFIX + "tables/catalog/"
"""Beside the warehouse, under ``tables.catalog.TABLES_PREFIX``."""
POINTER_SUFFIX = ".json"
NAMESPACE_OBJECT = "namespace.properties"
METADATA_LOCATION = "metadata-location"
PREVIOUS_METADATA_LOCATION = "previous-metadata-location"
_READ_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class Pointer:
    """A table's pointer as read: the current metadata file, the one before, and the object's etag (what a
    commit's ``UpdateIfMatch`` names)."""

    metadata_location: str
    previous_metadata_location: str | None
    etag: str


def pointer_key(namespace: str, table: str) -> str:
    """The key of ``namespace.table``'s pointer, relative to the lake's root."""
    return f"{namespace_prefix(namespace)}{_checked(table, what='table')}{POINTER_SUFFIX}"


def namespace_prefix(namespace: str) -> str:
    return f"{CATALOG_PREFIX}{_checked(namespace, what='namespace')}/"


def read_pointer(store: ObjectStore, namespace: str, table: str) -> Pointer | None:
    """The table's pointer (``None``: no such table)."""
    read = _read_json(store, pointer_key(namespace, table))
    if read is None:
        return None
    content, etag = read
    location, previous = content.get(METADATA_LOCATION), content.get(PREVIOUS_METADATA_LOCATION)
    if not isinstance(location, str):
        key = pointer_key(namespace, table)
        raise TableError(f"a table pointer without {METADATA_LOCATION!r}", location=store.location(key))
    return Pointer(location, None if previous is None else str(previous), etag)


def create_pointer(store: ObjectStore, namespace: str, table: str, metadata_location: str) -> bool:
    """Point a new table at ``metadata_location``; ``False`` when the table exists already (nothing
    written)."""
    data = _pointer_bytes(metadata_location, None)
    return _put(store, pointer_key(namespace, table), data, etag=None)


def move_pointer(
    store: ObjectStore, namespace: str, table: str, current: Pointer, metadata_location: str
) -> bool:
    """Move the table from ``current`` (as read) to ``metadata_location``; ``False`` when another commit
    moved it meanwhile, or dropped it (nothing written)."""
    data = _pointer_bytes(metadata_location, current.metadata_location)
    return _put(store, pointer_key(namespace, table), data, etag=current.etag)


def delete_pointer(store: ObjectStore, namespace: str, table: str) -> None:
    store.delete(pointer_key(namespace, table))


def table_names(store: ObjectStore, namespace: str) -> list[str]:
    """The tables of ``namespace``, sorted."""
    prefix = namespace_prefix(namespace)
    names = (meta.key[len(prefix) :] for meta in store.list(prefix))
    return [name.removesuffix(POINTER_SUFFIX) for name in names if _is_pointer(name)]


def namespace_names(store: ObjectStore) -> list[str]:
    """The namespaces that have properties or a table (an object in their folder), sorted."""
    keys = (meta.key[len(CATALOG_PREFIX) :] for meta in store.list(CATALOG_PREFIX))
    return sorted({key.split("/", 1)[0] for key in keys if "/" in key})


def namespace_holds_anything(store: ObjectStore, namespace: str) -> bool:
    return next(iter(store.list(namespace_prefix(namespace))), None) is not None


def read_namespace(store: ObjectStore, namespace: str) -> tuple[dict[str, str], str] | None:
    """The namespace's properties and their object's etag (``None``: none written)."""
    read = _read_json(store, namespace_prefix(namespace) + NAMESPACE_OBJECT)
    if read is None:
        return None
    content, etag = read
    return {str(key): str(value) for key, value in content.items()}, etag


def write_namespace(
    store: ObjectStore, namespace: str, properties: Mapping[str, str], *, etag: str | None
) -> bool:
    """Write the namespace's properties: created (``etag`` ``None``) or moved from ``etag``; ``False`` when
    another writer was first."""
    data = json.dumps(dict(properties), sort_keys=True).encode()
    return _put(store, namespace_prefix(namespace) + NAMESPACE_OBJECT, data, etag=etag)


def delete_namespace(store: ObjectStore, namespace: str) -> None:
    store.delete(namespace_prefix(namespace) + NAMESPACE_OBJECT)


def _is_pointer(name: str) -> bool:
    return "/" not in name and name.endswith(POINTER_SUFFIX) and name != POINTER_SUFFIX


def _pointer_bytes(metadata_location: str, previous: str | None) -> bytes:
    content = {METADATA_LOCATION: metadata_location, PREVIOUS_METADATA_LOCATION: previous}
    return json.dumps(content, indent=2).encode() + b"\n"


def _put(store: ObjectStore, key: str, data: bytes, *, etag: str | None) -> bool:
    try:
        store.put(key, data, mode=Create() if etag is None else UpdateIfMatch(etag))
    except (ObjectAlreadyExistsError, PreconditionFailedError):
        return False
    return True


def _read_json(store: ObjectStore, key: str) -> tuple[dict[str, object], str] | None:
    """The object's JSON and the etag of exactly the version read (``None``: no object)."""
    for _ in range(_READ_ATTEMPTS):
        try:
            meta = store.head(key)
            data = store.get_range(key, start=0, end=meta.size, if_match=meta.etag)
        except ObjectNotFoundError:
            return None
        except PreconditionFailedError:
            continue  # replaced between the two requests: read the new version
        try:
            content = json.loads(data)
        except ValueError as exc:
            raise TableError(f"not JSON: {exc}", location=store.location(key)) from exc
        if not isinstance(content, dict):
            raise TableError("not a JSON object", location=store.location(key))
        return content, meta.etag
    raise TableError(f"changed {_READ_ATTEMPTS} times while read", location=store.location(key))


def _checked(name: str, *, what: str) -> str:
    if not name or name in {".", ".."} or any(char in name for char in "/\\\x00"):
        raise TableError(
            f"{name!r} cannot name a {what} of the lake's catalog: one key segment (no '/', '\\', NUL, "
            "'.' or '..')",
            location=CATALOG_PREFIX,
        )
    return name
