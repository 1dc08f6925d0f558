"""Rules between settings, checked on the effective values after precedence (docs/configuration.md,
"Validation").

* **Compaction lags** (``LogConfig.validateValues``): ``min.compaction.lag.ms > max.compaction.lag.ms`` is
  refused. Kafka checks the broker defaults at startup and every topic's combined config; here the broker
  defaults once, and each topic that sets either lag itself (the others have the broker's values).
* **Consumed retention vs time retention** (KIP-68, this project's rule): a consumed-retention time longer
  than a finite ``retention.ms`` is refused, where consumed retention is in play. A *disabled* broker-wide
  default (168 hours unless set) is deliberately not checked: otherwise every topic with ``retention.ms``
  below a week would be invalid without ever using consumed retention.
* **The offset map** (``dedupe_rules``): Kafka's startup checks of ``log.cleaner.dedupe.buffer.size``.
* **Run folder retention** (this project's rule): ``kafka_segments.run.folder.retention.ms`` is -1 or at least
  one hour, since a run still writes its folder after it ends.
* **A table's JSON schema** (``config.table_values``): ``kafka_segments.table.value.schema`` is a JSON
  object of field name -> long, double, boolean or string."""

from __future__ import annotations

from collections.abc import Mapping

from kafka_segments.config.catalogue import (
    MIN_RUN_FOLDER_RETENTION_MS,
    RUN_FOLDER_RETENTION_MS,
    TABLE_VALUE_SCHEMA,
    Value,
    topic_setting,
)
from kafka_segments.config.dedupe_rules import dedupe_problems
from kafka_segments.config.problems import ConfigProblem
from kafka_segments.config.resolve import EffectiveSetting, broker_value, effective_settings
from kafka_segments.config.sections import Section
from kafka_segments.config.table_values import parse_value_schema
from kafka_segments.config.values import SettingValueError

MIN_LAG, MAX_LAG = "min.compaction.lag.ms", "max.compaction.lag.ms"
RETENTION, CONSUMED_MS, CONSUMED_ENABLE = (
    "retention.ms",
    "retention.commitoffset.ms",
    "retention.commitoffset.enable",
)
BROKER_CONSUMED_TIMES = (
    "log.retention.commitoffset.ms",
    "log.retention.commitoffset.minutes",
    "log.retention.commitoffset.hours",
)
BROKER_CONSUMED_ENABLE = "log.retention.commitoffset.enable"


def cross_setting_problems(broker: Section, topics: Mapping[str, Section]) -> list[ConfigProblem]:
    """Every cross-setting problem: the broker defaults first, then each topic in file order."""
    empty = Section(path="broker")
    defaults = _values(effective_settings(empty, broker))
    problems = _broker_problems(broker, defaults)
    for section in topics.values():
        values = _values(effective_settings(section, broker))
        problems.extend(_topic_problems(section, values))
    return problems


def _values(settings: tuple[EffectiveSetting, ...]) -> dict[str, Value | None]:
    return {setting.name: setting.value for setting in settings}


def _lag_conflict(values: Mapping[str, Value | None]) -> bool:
    low, high = values[MIN_LAG], values[MAX_LAG]
    return isinstance(low, int) and isinstance(high, int) and low > high


def _consumed_conflict(values: Mapping[str, Value | None]) -> bool:
    retention, consumed = values[RETENTION], values[CONSUMED_MS]
    return isinstance(retention, int) and isinstance(consumed, int) and 0 <= retention < consumed


def _broker_problems(broker: Section, values: Mapping[str, Value | None]) -> list[ConfigProblem]:
    problems = dedupe_problems(broker, values)
    if _lag_conflict(values):
        key = _first_set(broker, ("log.cleaner.min.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms"))
        problems.append(broker.problem(key, broker.values[key], _lag_rule(values, broker=True)))
    sets_time = any(name in broker.values for name in BROKER_CONSUMED_TIMES)
    if (sets_time or values[CONSUMED_ENABLE] is True) and _consumed_conflict(values):
        key = _first_set(broker, (*BROKER_CONSUMED_TIMES, BROKER_CONSUMED_ENABLE))
        problems.append(broker.problem(key, broker.values[key], _consumed_rule(broker, values)))
    retention = values.get(RUN_FOLDER_RETENTION_MS)
    if isinstance(retention, int) and 0 <= retention < MIN_RUN_FOLDER_RETENTION_MS:
        rule = (
            f"must be -1 (keep every run folder) or at least {MIN_RUN_FOLDER_RETENTION_MS} (1 hour): a run "
            "still writes its folder after it ends"
        )
        problems.append(broker.problem(RUN_FOLDER_RETENTION_MS, broker.values[RUN_FOLDER_RETENTION_MS], rule))
    return problems


def _topic_problems(topic: Section, values: Mapping[str, Value | None]) -> list[ConfigProblem]:
    problems = []
    if (MIN_LAG in topic.values or MAX_LAG in topic.values) and _lag_conflict(values):
        key = _first_set(topic, (MIN_LAG, MAX_LAG))
        problems.append(topic.problem(key, topic.values[key], _lag_rule(values, broker=False)))
    in_play = values[CONSUMED_ENABLE] is True or CONSUMED_MS in topic.values
    own = (CONSUMED_MS, CONSUMED_ENABLE, RETENTION)
    if in_play and any(name in topic.values for name in own) and _consumed_conflict(values):
        key = _first_set(topic, own)
        problems.append(topic.problem(key, topic.values[key], _consumed_rule(topic, values)))
    schema = values.get(TABLE_VALUE_SCHEMA)
    if TABLE_VALUE_SCHEMA in topic.values and isinstance(schema, str):
        try:
            parse_value_schema(schema)
        except SettingValueError as exc:
            problems.append(topic.problem(TABLE_VALUE_SCHEMA, topic.values[TABLE_VALUE_SCHEMA], exc.rule))
    return problems


def _first_set(section: Section, names: tuple[str, ...]) -> str:
    """The first of ``names`` the section sets itself (the key a problem is reported on)."""
    return next(name for name in names if name in section.values)


def _lag_rule(values: Mapping[str, Value | None], *, broker: bool) -> str:
    low, high = values[MIN_LAG], values[MAX_LAG]
    names = (MIN_LAG, MAX_LAG)
    if broker:
        names = ("log.cleaner.min.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms")
    return (
        f"conflict: {names[0]} ({low}) > {names[1]} ({high}); the minimum compaction lag must not exceed "
        "the maximum (equal is allowed) (LogConfig.validateValues)"
    )


def _consumed_rule(section: Section, values: Mapping[str, Value | None]) -> str:
    consumed, retention = values[CONSUMED_MS], values[RETENTION]
    retention_from = "retention.ms"
    setting = topic_setting(RETENTION)
    if section.path == "broker" and setting is not None:
        found = broker_value(setting, section)
        retention_from = found.synonym if found is not None else "log.retention.hours (default)"
    return (
        f"consumed retention ({consumed} ms) is longer than {retention_from} ({retention} ms): time "
        "retention would delete the data first; it must be <= the finite retention time (KIP-68)"
    )
