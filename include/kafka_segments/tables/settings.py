"""The tables' settings from the configuration file (docs/configuration.md): which topics are tables
(``kafka_segments.table.enable``, per topic or for every topic at broker level), the catalog's pyiceberg
properties (``kafka_segments.table.catalog``, a list of ``NAME=VALUE``) and the namespace
(``kafka_segments.table.namespace``), a topic's JSON values (``kafka_segments.table.value.*``); a
compacted topic's table comes with its ``_latest`` table."""

from __future__ import annotations

from collections.abc import Sequence

from kafka_segments.config import CLEANUP_COMPACT, Config
from kafka_segments.config.catalogue import (
    TABLE_CATALOG,
    TABLE_ENABLE,
    TABLE_NAMESPACE,
    TABLE_VALUE_FORMAT,
    TABLE_VALUE_SCHEMA,
)
from kafka_segments.config.table_values import parse_value_schema
from kafka_segments.tables.catalog import CatalogSettings
from kafka_segments.tables.json_values import JsonValues
from kafka_segments.tables.schema import DEFAULT_NAMESPACE


def configured_topics(config: Config, present: Sequence[str]) -> tuple[str, ...]:
    """The topics of ``present`` whose ``kafka_segments.table.enable`` is true."""
    return tuple(topic for topic in present if _topic_value(config, topic, TABLE_ENABLE) is True)


def compacted_topics(config: Config, topics: Sequence[str]) -> tuple[str, ...]:
    """The topics of ``topics`` whose ``cleanup.policy`` includes ``compact``: each gets a ``_latest``
    table."""
    return tuple(topic for topic in topics if CLEANUP_COMPACT in config.for_topic(topic).cleanup_policy)


def configured_catalog(config: Config) -> CatalogSettings:
    """The catalog ``kafka_segments.table.catalog`` names (empty: the embedded one)."""
    pairs = config.broker_value(TABLE_CATALOG)
    return CatalogSettings.from_pairs(list(pairs) if isinstance(pairs, tuple) else [])


def configured_namespace(config: Config) -> str:
    value = config.broker_value(TABLE_NAMESPACE)
    return value if isinstance(value, str) and value else DEFAULT_NAMESPACE


def topic_json_values(config: Config, topic: str) -> JsonValues | None:
    """``topic``'s JSON decoding (``kafka_segments.table.value.format=json``), ``None`` when off."""
    if _topic_value(config, topic, TABLE_VALUE_FORMAT) != "json":
        return None
    schema = _topic_value(config, topic, TABLE_VALUE_SCHEMA)
    return JsonValues(parse_value_schema(schema) if isinstance(schema, str) else {})


def _topic_value(config: Config, topic: str, name: str) -> object:
    return next((setting.value for setting in config.settings(topic) if setting.name == name), None)
