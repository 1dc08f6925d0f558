"""The YAML configuration (docs/configuration.md): Kafka's setting names, defaults, validators and precedence.
``load_config`` / ``parse_config`` give a ``Config`` (or raise ``ConfigError``), ``check_config`` returns the
problems; ``Config.for_topic(topic)`` is the ``TopicConfig`` the rules read."""

from kafka_segments.config.effective import Config, ConfigCheck, check_config, load_config, parse_config
from kafka_segments.config.model import CLEANUP_COMPACT, CLEANUP_DELETE, TopicConfig
from kafka_segments.config.problems import ConfigError, ConfigProblem
from kafka_segments.config.resolve import EffectiveSetting

__all__ = [
    "CLEANUP_COMPACT",
    "CLEANUP_DELETE",
    "Config",
    "ConfigCheck",
    "ConfigError",
    "ConfigProblem",
    "EffectiveSetting",
    "TopicConfig",
    "check_config",
    "load_config",
    "parse_config",
]
