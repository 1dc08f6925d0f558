"""Topics as Apache Iceberg tables (docs/tables.md): each topic's committed log, as ``read_lake`` gives it
with read_committed, in a table partitioned by Kafka partition with one Parquet file per segment, brought to
the lake's head version by version (``sync_tables``).

The names below are re-exported lazily: importing the package loads neither pyiceberg nor pyarrow."""

from __future__ import annotations

from kafka_segments import exports_by_module, lazy_exports

_EXPORTS = exports_by_module(
    {
        "sync": "sync_tables current_files recorded_version snapshot_as_of",
        "catalog": "CatalogSettings open_catalog",
        "report": "TablesSyncReport TableSync VersionSync SkippedVersions",
        "schema": "LAKE_VERSION_PROPERTY table_name",
    }
)

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - the lazy exports, listed once in _EXPORTS

__getattr__ = lazy_exports(__name__, _EXPORTS)
