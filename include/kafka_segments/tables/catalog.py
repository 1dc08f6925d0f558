"""The catalog that holds the topics' tables: by default the catalog kept inside the lake
(``tables.lake_catalog``: no server, no file outside the lake, on a local lake as on S3), or any catalog
pyiceberg supports (SQL on SQLite or PostgreSQL, REST, Glue, Hive) from its properties. A local lake that has
the SQLite catalog of the first slice, ``<lake>/_kafka_segments/tables/catalog.db``, keeps using it. The
warehouse defaults to the lake's own prefix, ``<lake>/_kafka_segments/tables/warehouse``, written through
pyiceberg's FileIO with the lake's S3 endpoint and credentials (docs/tables.md, "Catalogs")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_segments.errors import TableError
from kafka_segments.lake.layout import META_PREFIX
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.storage.s3 import S3Store

TABLES_PREFIX = META_PREFIX + "tables/"
"""The tables' folder in the lake (adoption and gc leave everything under ``_kafka_segments/`` alone)."""
WAREHOUSE_KEY = TABLES_PREFIX + "warehouse"
CATALOG_DB_KEY = TABLES_PREFIX + "catalog.db"
"""The SQLite catalog's file of a local lake synced before the lake's own catalog was the default: used
while it is there."""
LAKE_CATALOG_TYPE = "lake"
"""``type=lake``: the catalog kept inside the lake (the default when no ``type`` or ``uri`` is given)."""
DEFAULT_CATALOG_NAME = "kafka_segments"


@dataclass(frozen=True, slots=True)
class CatalogSettings:
    """Which catalog: ``properties`` are pyiceberg's catalog properties (``type``, ``uri``, ``warehouse``,
    ``s3.endpoint`` ...); without ``type`` and ``uri`` the catalog kept inside the lake."""

    name: str = DEFAULT_CATALOG_NAME
    properties: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_pairs(cls, pairs: list[str], *, name: str = DEFAULT_CATALOG_NAME) -> CatalogSettings:
        """Settings from ``NAME=VALUE`` texts (the command line's ``--catalog``).

        Raises:
            TableError: a text without ``=``.
        """
        properties: dict[str, str] = {}
        for pair in pairs:
            key, equals, value = pair.partition("=")
            if not equals or not key.strip():
                raise TableError(f"{pair!r} is not NAME=VALUE", location="--catalog")
            properties[key.strip()] = value
        return cls(name=name, properties=properties)


def catalog_properties(store: ObjectStore, settings: CatalogSettings) -> dict[str, str]:
    """The properties of ``store``'s catalog: pyiceberg's ``load_catalog``'s, or ``type=lake``."""
    given = dict(settings.properties)
    properties = _file_io_properties(store)
    if "warehouse" not in given:
        properties["warehouse"] = warehouse_location(store)
    if "type" not in given and "uri" not in given:
        properties.update(_default_catalog(store))
    elif given.get("uri", "").startswith("sqlite:") and "type" not in given:
        properties["type"] = "sql"
    properties.update(given)
    return properties


def open_catalog(store: ObjectStore, settings: CatalogSettings) -> Any:
    """The ``pyiceberg.catalog.Catalog`` of ``store``'s tables.

    Raises:
        TableError: pyiceberg cannot open the catalog named.
    """
    from pyiceberg.catalog import load_catalog

    properties = catalog_properties(store, settings)
    if properties.get("type") == LAKE_CATALOG_TYPE:
        from kafka_segments.tables.lake_catalog import LakeCatalog

        return LakeCatalog(settings.name, store=store, **properties)
    try:
        return load_catalog(settings.name, **properties)
    except Exception as exc:  # pyiceberg's and SQLAlchemy's own errors derive from Exception only
        raise TableError(f"cannot open the catalog: {exc}", location=_shown(properties)) from exc


def warehouse_location(store: ObjectStore) -> str:
    """``<lake>/_kafka_segments/tables/warehouse`` as a URI pyiceberg's FileIO opens."""
    if isinstance(store, LocalStore):
        return (Path(store.root) / WAREHOUSE_KEY).as_uri()
    if isinstance(store, S3Store):
        return f"s3://{store.bucket}/{store.prefix}{WAREHOUSE_KEY}"
    raise TableError("tables need a local or an S3 lake", location=store.describe())


def _default_catalog(store: ObjectStore) -> dict[str, str]:
    """The catalog kept inside the lake; a local lake's SQLite catalog of the first slice while it exists."""
    if isinstance(store, LocalStore) and (Path(store.root) / CATALOG_DB_KEY).is_file():
        return {"type": "sql", "uri": f"sqlite:///{Path(store.root) / CATALOG_DB_KEY}"}
    return {"type": LAKE_CATALOG_TYPE}


def _file_io_properties(store: ObjectStore) -> dict[str, str]:
    """pyiceberg's S3 FileIO settings from the lake's own client: its endpoint, region and credentials."""
    if not isinstance(store, S3Store):
        return {}
    client = store.client()
    properties = {"s3.region": str(client.meta.region_name or "us-east-1")}
    if store.endpoint_url or client.meta.endpoint_url:
        properties["s3.endpoint"] = str(store.endpoint_url or client.meta.endpoint_url)
    credentials = client._request_signer._credentials  # the client's resolved credentials (private)
    if credentials is not None:
        frozen = credentials.get_frozen_credentials()
        properties["s3.access-key-id"] = frozen.access_key
        properties["s3.secret-access-key"] = frozen.secret_key
        if frozen.token:
            properties["s3.session-token"] = frozen.token
    return properties


def _shown(properties: Mapping[str, str]) -> str:
    """Where the catalog is, for a message (never its secrets)."""
    return (
        f"catalog {properties.get('type', '?')} at {properties.get('uri', properties.get('warehouse', '?'))}"
    )
