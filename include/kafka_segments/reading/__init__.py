"""Reading the lake: the committed log as Kafka records, from Python (``read_lake``) and from Spark (the
``kafka-segments`` data source, ``register``), with the options of Spark's Kafka source (docs/reading.md).

The names below are re-exported lazily: importing the package loads neither pyarrow nor pyspark."""

from __future__ import annotations

from kafka_segments import exports_by_module, lazy_exports

_EXPORTS = exports_by_module(
    {
        "reader": "read_lake",
        "plan": "ReadPlan plan_read",
        "options": "ReadOptions parse_options",
        "errors": "DataLossError ReadOptionError VersionGoneError",
        "arrow": "arrow_schema spark_schema",
        "spark_source": "KafkaSegmentsDataSource register",
    }
)

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - the lazy exports, listed once in _EXPORTS

__getattr__ = lazy_exports(__name__, _EXPORTS)
