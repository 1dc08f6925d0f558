"""What a topic's table is: its name in the catalog, its Iceberg schema (Spark's Kafka-source columns, with
``headers``), its partition spec (identity on the Kafka partition) and the property and summary keys that
tie it to the lake (docs/tables.md)."""

from __future__ import annotations

from typing import Any

from kafka_segments.reading.options import View

LAKE_VERSION_PROPERTY = "kafka-segments.lake-version"
"""A table property: the lake version the table shows (its last sync); a snapshot's summary holds the same
key for the version whose rows it first showed."""
LAKE_PROPERTY = "kafka-segments.lake"
"""A table property: the lake the table follows, as its store describes it."""
TOPIC_PROPERTY = "kafka-segments.topic"
"""A table property: the topic the table holds."""
VIEW_PROPERTY = "kafka-segments.view"
"""A table property: ``all`` (the log) or ``latest`` (the compacted view, one row per key)."""
DEFAULT_NAMESPACE = "kafka_segments"
LATEST_SUFFIX = "_latest"
UNMEASURED_COLUMNS = ("key", "value", "headers.element.key", "headers.element.value")
"""Columns without Iceberg metrics: their files carry no min/max statistics (``files.PARQUET_OPTIONS``)."""
TABLE_PROPERTIES = {
    **{f"write.metadata.metrics.column.{name}": "none" for name in UNMEASURED_COLUMNS},
    "commit.retry.num-retries": "0",
}
"""Every table's own properties (besides the lake's, the topic's and the view's). No commit is retried: a
sync's files are computed from the snapshot it read, so pyiceberg's rebase onto a snapshot another sync made
meanwhile could add a segment's file twice; the commit fails instead (``TableError``: sync again)."""


def table_name(topic: str, *, view: View = View.ALL) -> str:
    """The table's name for ``topic``: a ``.`` (a namespace separator in Iceberg's identifiers) becomes
    ``_``. Kafka refuses two topics that differ only there, so no two topics share a table. The compacted
    view's table ends in ``_latest``."""
    name = topic.replace(".", "_")
    return name + LATEST_SUFFIX if view is View.LATEST else name


def iceberg_schema() -> Any:
    """The table's ``pyiceberg.schema.Schema``: Spark's Kafka-source columns with ``headers``; the columns
    a record always has are required."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import (
        BinaryType,
        IntegerType,
        ListType,
        LongType,
        NestedField,
        StringType,
        StructType,
        TimestamptzType,
    )

    header = StructType(
        NestedField(10, "key", StringType(), required=False),
        NestedField(11, "value", BinaryType(), required=False),
    )
    return Schema(
        NestedField(1, "key", BinaryType(), required=False),
        NestedField(2, "value", BinaryType(), required=False),
        NestedField(3, "topic", StringType(), required=True),
        NestedField(4, "partition", IntegerType(), required=True),
        NestedField(5, "offset", LongType(), required=True),
        NestedField(6, "timestamp", TimestamptzType(), required=True),
        NestedField(7, "timestampType", IntegerType(), required=True),
        NestedField(8, "headers", ListType(9, header, element_required=True), required=False),
    )


def partition_spec() -> Any:
    """Identity on the Kafka partition (field 4): a partition's files are one Iceberg partition."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import IdentityTransform

    return PartitionSpec(
        PartitionField(source_id=4, field_id=1000, transform=IdentityTransform(), name="partition")
    )


def sort_order() -> Any:
    """Rows sorted by offset within each file (they are written in offset order)."""
    from pyiceberg.table.sorting import SortField, SortOrder
    from pyiceberg.transforms import IdentityTransform

    return SortOrder(SortField(source_id=5, transform=IdentityTransform()))


def file_arrow_schema(schema: Any) -> Any:
    """The Arrow schema of the data files of a table whose Iceberg schema is ``schema`` (``iceberg_schema``,
    with ``value_json`` when JSON values are decoded), with the field ids in each field's metadata."""
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    return schema_to_pyarrow(schema, include_field_ids=True)
