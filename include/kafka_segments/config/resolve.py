"""Effective values: Kafka's precedence from the topic's own setting down to the default.

For a topic-level setting (``LogConfig.fromProps(defaults, overrides)`` with the defaults of
``KafkaConfig.extractLogConfigMap``):

1. the topic's own value (source ``topic``);
2. else the first broker synonym that is set, in ``ServerTopicConfigSynonyms`` order (``log.retention.ms``
   over ``log.retention.minutes`` over ``log.retention.hours``; ``log.roll.ms`` over ``log.roll.hours``),
   converted to milliseconds (source ``broker: <name>``);
3. else the default (source ``default``) — which is what the last synonym's own default gives.

Broker values turn into topic values the way ``KafkaConfig`` does it, with its checks:
``logRetentionTimeMillis`` maps any negative result to -1 and ``validateValues`` then requires
``log.retention.ms`` to be -1 or >= 1 (so 0 is refused at broker level, unlike ``retention.ms: 0`` on a
topic); ``logRollTimeMillis`` must be >= 1; and the converted value must pass the topic setting's own
validator (the broker builds a ``LogConfig`` from it). A broker value that fails is reported and left out.

Broker-only settings (``producer.id.expiration.ms``, ``offsets.retention.minutes``, ``log.cleaner.enable``)
come from the broker section or their default. ``internal.segment.bytes`` (Kafka ``defineInternal``, tests
only) replaces ``segment.bytes`` when set, as ``LogConfig.segmentSize()`` does.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.config.catalogue import (
    CLEANER_THREADS,
    DEDUPE_BUFFER_SIZE,
    DEDUPE_LOAD_FACTOR,
    MAX_BATCH_DECOMPRESSED_BYTES,
    MINUTES_TO_MS,
    Setting,
    Synonym,
    Value,
    broker_only_settings,
    topic_settings,
)
from kafka_segments.config.model import TopicConfig
from kafka_segments.config.problems import ConfigProblem
from kafka_segments.config.sections import Section
from kafka_segments.config.values import SettingValueError, check_validator

SOURCE_TOPIC = "topic"
SOURCE_DEFAULT = "default"
RETENTION_MS = "retention.ms"


@dataclass(frozen=True, slots=True)
class EffectiveSetting:
    """One setting's effective value and where it came from (``topic``, ``broker: <name>``, ``default``)."""

    name: str
    value: Value | None
    source: str


@dataclass(frozen=True, slots=True)
class BrokerValue:
    """A topic setting's value as the broker section gives it: converted, and the synonym it came from."""

    value: Value
    synonym: str


def broker_value(setting: Setting, broker: Section) -> BrokerValue | None:
    """The first synonym of ``setting`` that the broker sets, converted to the topic setting's unit."""
    for synonym in setting.synonyms:
        if synonym.name in broker.values:
            return BrokerValue(_convert(setting, synonym, broker.values[synonym.name]), synonym.name)
    return None


def _convert(setting: Setting, synonym: Synonym, raw: Value) -> Value:
    if synonym.to_ms == 1 or isinstance(raw, bool) or not isinstance(raw, int):
        value = raw
    else:
        value = raw * synonym.to_ms
    if setting.name == RETENTION_MS and isinstance(value, int) and value < 0:
        return -1  # KafkaConfig.logRetentionTimeMillis: "if (millis < 0) return -1"
    return value


def checked_broker(broker: Section) -> tuple[Section, list[ConfigProblem]]:
    """Apply KafkaConfig's checks to the converted broker values; drop (and report) the ones that fail."""
    values = dict(broker.values)
    problems: list[ConfigProblem] = []
    for setting in topic_settings():
        while (found := broker_value(setting, Section(values, broker.lines, broker.path))) is not None:
            rule = _broker_rule(setting, found)
            if rule is None:
                break
            problems.append(broker.problem(found.synonym, broker.values[found.synonym], rule))
            del values[found.synonym]
    return Section(values, broker.lines, broker.path), problems


def _broker_rule(setting: Setting, found: BrokerValue) -> str | None:
    if setting.name == RETENTION_MS and found.value == 0:
        return (
            "the broker retention time must be unlimited (-1, or any negative value) or at least 1 ms "
            "(KafkaConfig.validateValues: log.retention.ms must be unlimited (-1) or, greater than or "
            "equal to 1)"
        )
    if setting.validator is None:
        return None
    try:
        check_validator(setting.validator, found.value)
    except SettingValueError as exc:
        return (
            f"{exc.rule}: it becomes {setting.name} = {found.value} (the broker builds a LogConfig from it)"
        )
    return None


def effective_settings(topic: Section, broker: Section) -> tuple[EffectiveSetting, ...]:
    """Every setting's effective value for a topic with ``topic``'s own values (empty for broker defaults)."""
    settings = [_effective_topic_setting(setting, topic, broker) for setting in topic_settings()]
    for setting in broker_only_settings():
        if setting.name in broker.values:
            settings.append(
                EffectiveSetting(setting.name, broker.values[setting.name], f"broker: {setting.name}")
            )
        else:
            settings.append(EffectiveSetting(setting.name, setting.default, SOURCE_DEFAULT))
    return tuple(settings)


def _effective_topic_setting(setting: Setting, topic: Section, broker: Section) -> EffectiveSetting:
    if setting.name in topic.values:
        return EffectiveSetting(setting.name, topic.values[setting.name], SOURCE_TOPIC)
    found = broker_value(setting, broker)
    if found is not None:
        return EffectiveSetting(setting.name, found.value, f"broker: {found.synonym}")
    return EffectiveSetting(setting.name, setting.default, SOURCE_DEFAULT)


def to_topic_config(topic: str, settings: tuple[EffectiveSetting, ...]) -> TopicConfig:
    """The ``TopicConfig`` the rules read, from a complete set of effective settings."""
    values: dict[str, Value | None] = {setting.name: setting.value for setting in settings}
    # A plain dict (never mutated: the field is read-only by convention) so that a TopicConfig pickles, as
    # the Spark engine ships it to executors; MappingProxyType does not pickle.
    sources = {setting.name: setting.source for setting in settings}
    internal = values["internal.segment.bytes"]
    return TopicConfig(
        topic=topic,
        cleanup_policy=frozenset(_strings(values["cleanup.policy"])),
        retention_ms=_int(values[RETENTION_MS]),
        retention_bytes=_int(values["retention.bytes"]),
        segment_bytes=_int(values["segment.bytes"] if internal is None else internal),
        segment_index_bytes=_int(values["segment.index.bytes"]),
        index_interval_bytes=_int(values["index.interval.bytes"]),
        file_delete_delay_ms=_int(values["file.delete.delay.ms"]),
        delete_retention_ms=_int(values["delete.retention.ms"]),
        min_compaction_lag_ms=_int(values["min.compaction.lag.ms"]),
        max_compaction_lag_ms=_int(values["max.compaction.lag.ms"]),
        min_cleanable_dirty_ratio=_float(values["min.cleanable.dirty.ratio"]),
        message_timestamp_type=str(values["message.timestamp.type"]),
        max_message_bytes=_int(values["max.message.bytes"]),
        consumed_retention_enabled=values["retention.commitoffset.enable"] is True,
        consumed_retention_ms=_int(values["retention.commitoffset.ms"]),
        required_groups=_strings(values["kafka_segments.consumed.required.groups"]),
        producer_id_expiration_ms=_int(values["producer.id.expiration.ms"]),
        offsets_retention_ms=_int(values["offsets.retention.minutes"]) * MINUTES_TO_MS,
        cleaner_enabled=values["log.cleaner.enable"] is True,
        sources=sources,
        segment_ms=_int(values["segment.ms"]),
        max_batch_decompressed_bytes=_int(values[MAX_BATCH_DECOMPRESSED_BYTES]),
        dedupe_buffer_size=None if values[DEDUPE_BUFFER_SIZE] is None else _int(values[DEDUPE_BUFFER_SIZE]),
        dedupe_buffer_load_factor=_float(values[DEDUPE_LOAD_FACTOR]),
        cleaner_threads=_int(values[CLEANER_THREADS]),
    )


def _int(value: Value | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer setting value, got {value!r}")
    return value


def _float(value: Value | None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a numeric setting value, got {value!r}")
    return float(value)


def _strings(value: Value | None) -> tuple[str, ...]:
    if not isinstance(value, tuple):
        raise TypeError(f"expected a list setting value, got {value!r}")
    return value
