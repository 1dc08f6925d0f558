"""The catalog that holds the topics' tables: pyiceberg's SQL catalog on a SQLite file by default (no
server), or any catalog pyiceberg supports (REST, Glue, Hive, SQL on PostgreSQL) from its properties. The
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
"""The embedded catalog's SQLite file, for a local lake."""
DEFAULT_CATALOG_NAME = "kafka_segments"


@dataclass(frozen=True, slots=True)
class CatalogSettings:
    """Which catalog: ``properties`` are pyiceberg's catalog properties (``type``, ``uri``, ``warehouse``,
    ``s3.endpoint`` ...); without ``type`` and ``uri`` the embedded SQLite catalog of a local lake."""

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
    """The properties pyiceberg's ``load_catalog`` gets for ``store``'s tables.

    Raises:
        TableError: an S3 lake without a catalog named (a SQLite file cannot live in S3).
    """
    given = dict(settings.properties)
    properties = _file_io_properties(store)
    if "warehouse" not in given:
        properties["warehouse"] = warehouse_location(store)
    if "type" not in given and "uri" not in given:
        properties.update(type="sql", uri=f"sqlite:///{_embedded_db(store)}")
    elif given.get("uri", "").startswith("sqlite:") and "type" not in given:
        properties["type"] = "sql"
    properties.update(given)
    return properties


def open_catalog(store: ObjectStore, settings: CatalogSettings) -> Any:
    """The ``pyiceberg.catalog.Catalog`` of ``store``'s tables.

    Raises:
        TableError: no catalog for an S3 lake, or pyiceberg cannot open the one named.
    """
    from pyiceberg.catalog import load_catalog

    properties = catalog_properties(store, settings)
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


def _embedded_db(store: ObjectStore) -> Path:
    if not isinstance(store, LocalStore):
        raise TableError(
            "an S3 lake's tables need a catalog: give --catalog uri=sqlite:////path/to/catalog.db (the "
            "embedded SQLite catalog, in a local file) or another pyiceberg catalog (--catalog type=rest "
            "--catalog uri=https://...)",
            location=store.describe(),
        )
    path = Path(store.root) / CATALOG_DB_KEY
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


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
