"""Checking every ``name: value`` of the ``broker`` and ``topics`` sections against the catalogue.

Every problem is collected; a name from the other level gets a pointed message (use ``log.retention.ms`` under
``broker``), an unknown name a "did you mean" (``difflib``). Invalid values are left out of the parsed
sections, so the effective configuration shows what the other levels would give."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field

from kafka_segments.config.catalogue import (
    EXTENSION_PREFIX,
    KAFKA_SETTINGS_NOT_USED,
    Level,
    Setting,
    Value,
    broker_setting,
    broker_settings,
    topic_names_by_synonym,
    topic_setting,
    topic_settings,
)
from kafka_segments.config.problems import ConfigProblem, render_value
from kafka_segments.config.values import SettingValueError, parse_setting_value
from kafka_segments.config.yaml_source import Entry, RawConfig
from kafka_segments.errors import InvalidTopicError
from kafka_segments.topic_partition import validate_topic_name


@dataclass(frozen=True, slots=True)
class Section:
    """The valid, set values of one section (``broker`` or one topic), with the line of each key."""

    values: Mapping[str, Value] = field(default_factory=dict)
    lines: Mapping[str, int] = field(default_factory=dict)
    path: str = "broker"
    """The key prefix for problems: ``broker`` or ``topics.<topic>``."""

    def key(self, name: str) -> str:
        return f"{self.path}.{name}"

    def problem(self, name: str, value: object, rule: str) -> ConfigProblem:
        return ConfigProblem(self.key(name), render_value(value), rule, self.lines.get(name))


@dataclass(frozen=True, slots=True)
class Sections:
    """The broker section and the sections of the topics with legal names (file order)."""

    broker: Section
    topics: Mapping[str, Section]
    problems: tuple[ConfigProblem, ...]


def parse_sections(raw: RawConfig) -> Sections:
    """Parse and validate every entry; collect every problem."""
    problems: list[ConfigProblem] = list(raw.problems)
    broker = _section(raw.broker, Level.BROKER, "broker", problems)
    topics: dict[str, Section] = {}
    for topic in raw.topics:
        path = f"topics.{topic.name}"
        section = _section(topic.entries, Level.TOPIC, path, problems)
        try:
            validate_topic_name(topic.name)
        except InvalidTopicError as exc:
            problems.append(ConfigProblem(path, render_value(topic.name), str(exc), topic.line))
            continue
        topics[topic.name] = section
    return Sections(broker, topics, tuple(problems))


def _section(entries: tuple[Entry, ...], level: Level, path: str, problems: list[ConfigProblem]) -> Section:
    values: dict[str, Value] = {}
    lines: dict[str, int] = {}
    for entry in entries:
        lines[entry.name] = entry.line
        key = f"{path}.{entry.name}"
        setting = broker_setting(entry.name) if level is Level.BROKER else topic_setting(entry.name)
        if setting is None:
            rule = _misplaced(entry.name, level) or _unknown(entry.name, level)
            problems.append(ConfigProblem(key, render_value(entry.value), rule, entry.line))
            continue
        try:
            value = parse_setting_value(setting, entry.value)
        except SettingValueError as exc:
            problems.append(
                ConfigProblem(key, render_value(entry.value), _with_type(setting, exc), entry.line)
            )
            continue
        if value is not None:
            values[entry.name] = value
    return Section(values, lines, path)


def _with_type(setting: Setting, exc: SettingValueError) -> str:
    valid = f"; valid: {setting.validator.describe()}" if setting.validator is not None else ""
    return f"{exc.rule} ({setting.name} is {setting.type.value}{valid})"


def _misplaced(name: str, level: Level) -> str | None:
    """The rule for a name that exists at the other level, or None."""
    if level is Level.BROKER:
        setting = topic_setting(name)
        if setting is None:
            return None
        if not setting.synonyms:
            return f"{name} is a topic-level setting with no broker synonym: set it under topics.<topic>"
        synonyms = " / ".join(synonym.name for synonym in setting.synonyms)
        return f"{name} is a topic-level setting: at broker level use {synonyms}"
    if broker_setting(name) is None:
        return None
    topic_name = topic_names_by_synonym().get(name)
    if topic_name is None:
        return f"{name} is a broker-only setting: it applies to every topic and cannot be set per topic"
    return f"{name} is a broker-level setting: per topic use {topic_name}"


def _unknown(name: str, level: Level) -> str:
    """The rule for a name no level knows: a suggestion, and where this project's own settings live."""
    if name in KAFKA_SETTINGS_NOT_USED:
        return (
            f"{name} is a Kafka setting kafka-segments does not use (it does not change what retention "
            "or compaction keep): remove it"
        )
    settings = broker_settings() if level is Level.BROKER else topic_settings()
    close = difflib.get_close_matches(name, [setting.name for setting in settings], n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    if name.startswith(EXTENSION_PREFIX):
        return f"unknown kafka-segments extension setting{hint}"
    return (
        f"unknown {level.value} setting{hint}; kafka-segments' own settings use the {EXTENSION_PREFIX} prefix"
    )
