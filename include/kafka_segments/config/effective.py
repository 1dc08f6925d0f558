"""The configuration file (docs/configuration.md) as a value: ``load_config``, ``parse_config``,
``check_config``. Everything is validated before any work and every problem is reported at once
(``ConfigError.problems``); ``check_config`` returns them instead of raising."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

import yaml

from kafka_segments.config.catalogue import Value
from kafka_segments.config.model import TopicConfig
from kafka_segments.config.problems import FILE_KEY, ConfigError, ConfigProblem
from kafka_segments.config.resolve import (
    EffectiveSetting,
    checked_broker,
    effective_settings,
    to_topic_config,
)
from kafka_segments.config.rules import cross_setting_problems
from kafka_segments.config.sections import Section, parse_sections
from kafka_segments.config.yaml_source import read_yaml
from kafka_segments.nesting import NestingTooDeepError
from kafka_segments.topic_partition import validate_topic_name

DEFAULT_SOURCE = "(Kafka defaults)"

INTERNAL_TOPICS: Mapping[str, Mapping[str, Value]] = MappingProxyType(
    {
        # Kafka creates it with these topic overrides (GroupCoordinatorService.groupMetadataTopicConfigs:
        # cleanup.policy=compact, segment.bytes=offsets.topic.segment.bytes). Time retention on it would
        # delete group metadata and committed offsets.
        "__consumer_offsets": MappingProxyType(
            {"cleanup.policy": ("compact",), "segment.bytes": 104_857_600}
        ),
    }
)
SOURCE_INTERNAL = "internal topic (Kafka creates it with this override)"


@dataclass(frozen=True, slots=True)
class Config:
    """A valid configuration: the effective settings of any topic.

    Attributes:
        source: the file it was read from (or the ``source`` given to ``parse_config``).
        topics: the topics the file names, in file order.
    """

    source: str
    topics: tuple[str, ...]
    broker_values: Mapping[str, Value] = field(default_factory=dict, hash=False)
    """The broker section's valid values, by broker setting name."""
    topic_values: Mapping[str, Mapping[str, Value]] = field(default_factory=dict, hash=False)
    """Each named topic's own valid values, by topic setting name."""

    @classmethod
    def default(cls) -> Config:
        """No file: Kafka's defaults (and this project's for its own settings) for every topic."""
        return cls(DEFAULT_SOURCE, ())

    def for_topic(self, topic: str) -> TopicConfig:
        """The effective configuration of ``topic`` (a topic the file does not name gets the broker defaults).

        Raises:
            InvalidTopicError: ``topic`` is not a legal Kafka topic name.
        """
        validate_topic_name(topic)
        return to_topic_config(topic, self.settings(topic))

    def broker_defaults(self) -> TopicConfig:
        """What a topic without settings of its own gets (``topic`` is ``""``)."""
        return to_topic_config("", self.settings(None))

    def broker_value(self, name: str) -> Value | None:
        """The effective value of the broker-level setting ``name`` (its default when the file sets none;
        ``None`` for a name that is no broker setting or has no default)."""
        return next((setting.value for setting in self.settings(None) if setting.name == name), None)

    def settings(self, topic: str | None) -> tuple[EffectiveSetting, ...]:
        """Every setting's effective value and source for ``topic`` (``None``: the broker defaults)."""
        own = self.topic_values.get(topic, {}) if topic is not None else {}
        internal = INTERNAL_TOPICS.get(topic, {}) if topic is not None else {}
        broker = Section(self.broker_values, path="broker")
        settings = effective_settings(Section({**internal, **own}, path=f"topics.{topic}"), broker)
        return tuple(
            replace(setting, source=SOURCE_INTERNAL)
            if setting.name in internal and setting.name not in own
            else setting
            for setting in settings
        )


@dataclass(frozen=True, slots=True)
class ConfigCheck:
    """The outcome of checking a file: every problem, and the effective configuration as far as it goes.

    ``config`` leaves invalid values out (they fall back to the next level), so it shows what the valid
    part of the file gives; it is ``None`` when the text is not YAML at all.
    """

    source: str
    config: Config | None
    problems: tuple[ConfigProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def check_config(text: str, *, source: str) -> ConfigCheck:
    """Check a configuration file's text; never raises for invalid content."""
    try:
        raw = read_yaml(text)
    except yaml.YAMLError as exc:
        return ConfigCheck(source, None, (_yaml_problem(exc),))
    except NestingTooDeepError as exc:
        return ConfigCheck(source, None, (ConfigProblem(FILE_KEY, f"line {exc.line}", exc.reason, exc.line),))
    sections = parse_sections(raw)
    broker, broker_problems = checked_broker(sections.broker)
    per_key = sorted([*sections.problems, *broker_problems], key=_file_order)
    problems = [*per_key, *cross_setting_problems(broker, sections.topics)]
    config = Config(
        source=source,
        topics=tuple(sections.topics),
        broker_values=MappingProxyType(dict(broker.values)),
        topic_values=MappingProxyType(
            {name: MappingProxyType(dict(section.values)) for name, section in sections.topics.items()}
        ),
    )
    return ConfigCheck(source, config, tuple(problems))


def parse_config(text: str, *, source: str) -> Config:
    """Parse and validate a configuration file's text.

    Raises:
        ConfigError: the text is not YAML, or breaks any rule (``problems`` lists every one).
    """
    check = check_config(text, source=source)
    if check.problems or check.config is None:
        raise ConfigError.from_problems(check.problems, location=source)
    return check.config


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read, parse and validate the configuration file at ``path``.

    Raises:
        ConfigError: the file cannot be read or is not UTF-8, is not YAML, or breaks any rule.
    """
    return parse_config(read_config_text(path), source=os.fspath(path))


def read_config_text(path: str | os.PathLike[str]) -> str:
    """The file's text.

    Raises:
        ConfigError: the file is missing, unreadable or not UTF-8 (its one problem has the key ``(file)``).
    """
    location = os.fspath(path)
    try:
        return Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        rule = f"cannot read the configuration file: {exc.strerror or exc}"
    except UnicodeDecodeError as exc:
        rule = f"the configuration file is not UTF-8 text (byte {exc.start})"
    problem = ConfigProblem(FILE_KEY, location, rule)
    raise ConfigError(rule, location=location, problems=(problem,))


def _file_order(problem: ConfigProblem) -> int:
    return problem.line if problem.line is not None else 0


def _yaml_problem(exc: yaml.YAMLError) -> ConfigProblem:
    mark = getattr(exc, "problem_mark", None)
    what = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    if context:
        what = f"{what} ({context})"
    if mark is None:
        return ConfigProblem(FILE_KEY, "", f"not valid YAML: {what}")
    line, column = int(mark.line) + 1, int(mark.column) + 1
    return ConfigProblem(
        FILE_KEY, f"line {line}", f"not valid YAML at line {line}, column {column}: {what}", line
    )
