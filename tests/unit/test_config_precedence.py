"""Kafka's precedence: topic over broker; log.retention.ms over .minutes over .hours
(ServerTopicConfigSynonyms, KafkaConfig.logRetentionTimeMillis / logRollTimeMillis)."""

from __future__ import annotations

import dataclasses

import pytest
from kafka_segments.config import Config, ConfigError, check_config, parse_config
from kafka_segments.errors import InvalidTopicError

pytestmark = pytest.mark.unit

HOUR, MINUTE = 3_600_000, 60_000


def parse(text: str) -> Config:
    return parse_config(text, source="test.yaml")


def test_log_retention_ms_wins_over_minutes_and_hours() -> None:
    config = parse(
        "broker:\n  log.retention.hours: 5\n  log.retention.minutes: 30\n  log.retention.ms: 1234\n"
    )

    topic = config.for_topic("t")
    assert topic.retention_ms == 1234
    assert topic.sources["retention.ms"] == "broker: log.retention.ms"


def test_log_retention_minutes_wins_over_hours() -> None:
    topic = parse("broker:\n  log.retention.hours: 5\n  log.retention.minutes: 30\n").for_topic("t")

    assert topic.retention_ms == 30 * MINUTE
    assert topic.sources["retention.ms"] == "broker: log.retention.minutes"


def test_log_retention_hours_alone_and_the_168_hour_default() -> None:
    assert parse("broker:\n  log.retention.hours: 5\n").for_topic("t").retention_ms == 5 * HOUR
    default = parse("broker: {}\n").for_topic("t")
    assert default.retention_ms == 168 * HOUR
    assert default.sources["retention.ms"] == "default"


@pytest.mark.parametrize("name", ["log.retention.ms", "log.retention.minutes", "log.retention.hours"])
def test_a_negative_broker_retention_time_means_unlimited(name: str) -> None:
    """KafkaConfig.logRetentionTimeMillis: any negative result becomes -1."""
    assert parse(f"broker:\n  {name}: -5\n").for_topic("t").retention_ms == -1


@pytest.mark.parametrize("name", ["log.retention.ms", "log.retention.minutes", "log.retention.hours"])
def test_a_zero_broker_retention_time_is_refused_but_a_zero_topic_retention_is_not(name: str) -> None:
    """KafkaConfig.validateValues requires -1 or >= 1; LogConfig's retention.ms is atLeast(-1)."""
    with pytest.raises(ConfigError) as caught:
        parse(f"broker:\n  {name}: 0\n")
    (problem,) = caught.value.problems
    assert problem.key == f"broker.{name}"
    assert "must be unlimited (-1" in problem.rule

    assert parse("topics:\n  t:\n    retention.ms: 0\n").for_topic("t").retention_ms == 0


def test_a_refused_broker_synonym_falls_through_in_the_effective_view() -> None:
    check = check_config("broker:\n  log.retention.ms: 0\n  log.retention.hours: 2\n", source="t.yaml")
    assert [p.key for p in check.problems] == ["broker.log.retention.ms"]
    assert check.config is not None
    assert check.config.for_topic("t").retention_ms == 2 * HOUR


def test_log_roll_ms_wins_over_log_roll_hours_and_must_be_at_least_one() -> None:
    topic = parse("broker:\n  log.roll.hours: 2\n  log.roll.ms: 777\n").for_topic("t")
    assert topic.segment_ms == 777
    assert parse("broker:\n  log.roll.hours: 2\n").for_topic("t").segment_ms == 2 * HOUR
    with pytest.raises(ConfigError, match=r"log\.roll\.ms"):
        parse("broker:\n  log.roll.ms: 0\n")


def test_commitoffset_ms_wins_over_minutes_and_hours() -> None:
    base = "broker:\n  log.retention.commitoffset.hours: 3\n"
    assert parse(base).for_topic("t").consumed_retention_ms == 3 * HOUR
    with_minutes = base + "  log.retention.commitoffset.minutes: 7\n"
    assert parse(with_minutes).for_topic("t").consumed_retention_ms == 7 * MINUTE
    with_ms = with_minutes + "  log.retention.commitoffset.ms: 99\n"
    topic = parse(with_ms).for_topic("t")
    assert topic.consumed_retention_ms == 99
    assert topic.sources["retention.commitoffset.ms"] == "broker: log.retention.commitoffset.ms"


def test_topic_setting_wins_over_every_broker_synonym() -> None:
    config = parse(
        "broker:\n  log.retention.ms: 1000\n  log.cleanup.policy: compact\n"
        "  log.cleaner.delete.retention.ms: 5\n"
        "topics:\n  clickstream:\n    retention.ms: 2000\n    cleanup.policy: delete\n"
    )

    topic = config.for_topic("clickstream")
    assert topic.retention_ms == 2000
    assert topic.cleanup_policy == frozenset({"delete"})
    assert topic.delete_retention_ms == 5
    assert topic.sources["retention.ms"] == "topic"
    assert topic.sources["delete.retention.ms"] == "broker: log.cleaner.delete.retention.ms"
    assert topic.sources["segment.bytes"] == "default"


def test_topics_not_in_the_file_get_the_broker_defaults() -> None:
    config = parse("broker:\n  log.retention.bytes: 100\ntopics:\n  named:\n    retention.bytes: 5\n")

    assert config.topics == ("named",)
    assert config.for_topic("other").retention_bytes == 100
    assert config.for_topic("other") == dataclasses.replace(config.broker_defaults(), topic="other")
    assert config.broker_defaults().topic == ""


def test_broker_only_settings_apply_to_every_topic() -> None:
    config = parse(
        "broker:\n  producer.id.expiration.ms: 1000\n  offsets.retention.minutes: 60\n"
        "  log.cleaner.enable: false\n"
        "topics:\n  t:\n    retention.ms: 1\n"
    )

    for topic in ("t", "u"):
        topic_config = config.for_topic(topic)
        assert topic_config.producer_id_expiration_ms == 1000
        assert topic_config.offsets_retention_ms == 60 * MINUTE
        assert not topic_config.cleaner_enabled
        assert topic_config.sources["offsets.retention.minutes"] == "broker: offsets.retention.minutes"


def test_consumed_retention_enable_from_broker_and_topic() -> None:
    config = parse(
        "broker:\n  log.retention.commitoffset.enable: true\n"
        "topics:\n  off:\n    retention.commitoffset.enable: false\n"
    )

    assert config.for_topic("any").consumed_retention_enabled
    assert not config.for_topic("off").consumed_retention_enabled


def test_for_topic_refuses_an_illegal_topic_name() -> None:
    with pytest.raises(InvalidTopicError):
        Config.default().for_topic("no spaces")


def test_default_config_is_kafkas_defaults() -> None:
    assert Config.default().topics == ()
    assert Config.default().for_topic("t") == parse("").for_topic("t")


def test_consumer_offsets_gets_the_overrides_kafka_creates_it_with() -> None:
    """GroupCoordinatorService.groupMetadataTopicConfigs: compact, offsets.topic.segment.bytes."""
    from kafka_segments.config import Config, parse_config

    internal = Config.default().for_topic("__consumer_offsets")
    assert internal.cleanup_policy == frozenset({"compact"})
    assert internal.segment_bytes == 104_857_600
    assert internal.sources["cleanup.policy"].startswith("internal topic")
    assert Config.default().for_topic("orders").cleanup_policy == frozenset({"delete"})
    own = parse_config("topics:\n  __consumer_offsets:\n    cleanup.policy: compact,delete\n", source="f")
    assert own.for_topic("__consumer_offsets").cleanup_policy == frozenset({"compact", "delete"})
    assert own.for_topic("__consumer_offsets").sources["cleanup.policy"] == "topic"
