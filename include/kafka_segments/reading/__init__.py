"""Reading the lake: the committed log as Kafka records, as Arrow batches (``read_lake``), with the options of
Spark's Kafka source (docs/reading.md). The Spark data source over it is the adapter ``spark_source``.

The names below are re-exported lazily: importing the package does not load pyarrow."""

from __future__ import annotations

from kafka_segments import exports_by_module, lazy_exports

_EXPORTS = exports_by_module(
    {
        "reader": "read_lake",
        "plan": "ReadPlan plan_read",
        "options": "ReadOptions parse_options",
        "errors": "DataLossError ReadOptionError VersionGoneError",
        "arrow": "arrow_schema spark_schema",
    }
)

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - the lazy exports, listed once in _EXPORTS

__getattr__ = lazy_exports(__name__, _EXPORTS)
