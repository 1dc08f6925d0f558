"""Kafka's defaults and validators, setting by setting (LogConfig, ServerLogConfigs, CleanerConfig,
ServerConfigs, GroupCoordinatorConfig, TransactionLogConfig as of Kafka 4.x)."""

from __future__ import annotations

import pytest
from kafka_segments.config import Config, ConfigCheck, ConfigProblem, check_config
from kafka_segments.config.catalogue import broker_settings, topic_settings

pytestmark = pytest.mark.unit

LONG_MAX = 9_223_372_036_854_775_807

KAFKA_TOPIC_DEFAULTS = {
    "cleanup.policy": ("delete",),
    "retention.ms": 604_800_000,
    "retention.bytes": -1,
    "segment.bytes": 1_073_741_824,
    "internal.segment.bytes": None,
    "segment.ms": 604_800_000,
    "segment.index.bytes": 10_485_760,
    "index.interval.bytes": 4096,
    "file.delete.delay.ms": 60_000,
    "delete.retention.ms": 86_400_000,
    "min.compaction.lag.ms": 0,
    "max.compaction.lag.ms": LONG_MAX,
    "min.cleanable.dirty.ratio": 0.5,
    "message.timestamp.type": "CreateTime",
    "max.message.bytes": 1_048_588,
    # KIP-68 (this project's defaults: disabled, 168 hours) and the kafka_segments. extension
    "retention.commitoffset.enable": False,
    "retention.commitoffset.ms": 168 * 3_600_000,
    "kafka_segments.consumed.required.groups": (),
    "kafka_segments.compaction.max.batch.decompressed.bytes": 256 * 1024 * 1024,
    # broker-only
    "producer.id.expiration.ms": 86_400_000,
    "offsets.retention.minutes": 10_080,
    "log.cleaner.enable": True,
    # CleanerConfig's offset map settings; the buffer is not set by default (the unbounded map)
    "log.cleaner.dedupe.buffer.size": None,
    "log.cleaner.io.buffer.load.factor": 0.9,
    "log.cleaner.threads": 1,
    # broker-only, this project's: the per-run compaction budget (no limit)
    "kafka_segments.compaction.max.bytes.per.run": -1,
    "kafka_segments.compaction.max.partitions.per.run": -1,
    # broker-only, this project's: a run's gc keeps 10 manifests and every run folder
    "kafka_segments.retain.manifests": 10,
    "kafka_segments.run.folder.retention.ms": -1,
    # this project's: no topic is a table unless configured; the embedded catalog, its namespace
    "kafka_segments.table.enable": False,
    "kafka_segments.table.value.format": "raw",
    "kafka_segments.table.value.schema": "",
    "kafka_segments.table.catalog": (),
    "kafka_segments.table.namespace": "kafka_segments",
}
"""The literal values of Kafka's definitions, written out independently of the catalogue."""


def check(text: str) -> ConfigCheck:
    return check_config(text, source="test.yaml")


def only_problem(text: str) -> ConfigProblem:
    problems = check(text).problems
    assert len(problems) == 1, problems
    return problems[0]


def test_every_default_equals_kafkas() -> None:
    settings = {s.name: s for s in Config.default().settings("t")}

    assert {name: s.value for name, s in settings.items()} == KAFKA_TOPIC_DEFAULTS
    assert {s.source for s in settings.values()} == {"default"}


def test_default_topic_config_carries_kafka_defaults_in_rule_units() -> None:
    config = Config.default().for_topic("orders")

    assert config.topic == "orders"
    assert config.cleanup_policy == frozenset({"delete"})
    assert config.delete
    assert not config.compact
    assert config.retention_ms == 604_800_000
    assert config.segment_bytes == 1_073_741_824
    assert config.segment_ms == 604_800_000
    assert config.max_compaction_lag_ms == LONG_MAX
    assert config.min_cleanable_dirty_ratio == 0.5
    assert config.offsets_retention_ms == 10_080 * 60_000
    assert config.producer_id_expiration_ms == 86_400_000
    assert config.cleaner_enabled
    assert not config.consumed_retention_enabled
    assert config.consumed_retention_ms == 604_800_000
    assert config.required_groups == ()


def test_topic_defaults_equal_what_their_broker_synonyms_default_to() -> None:
    """LogConfig's defaults are the broker defaults; the last (least specific) synonym has the default."""
    brokers = {s.name: s for s in broker_settings()}
    for setting in topic_settings():
        if not setting.synonyms:
            continue
        last = setting.synonyms[-1]
        broker_default = brokers[last.name].default
        converted = (
            broker_default * last.to_ms
            if isinstance(broker_default, int) and last.to_ms > 1
            else broker_default
        )
        assert converted == setting.default, setting.name


@pytest.mark.parametrize(
    ("name", "lowest_valid", "highest_invalid"),
    [
        ("retention.ms", -1, -2),
        ("segment.bytes", 1_048_576, 1_048_575),
        ("segment.ms", 1, 0),
        ("segment.index.bytes", 4, 3),
        ("index.interval.bytes", 0, -1),
        ("file.delete.delay.ms", 0, -1),
        ("delete.retention.ms", 0, -1),
        ("min.compaction.lag.ms", 0, -1),
        ("max.compaction.lag.ms", 1, 0),
        ("max.message.bytes", 0, -1),
        ("retention.commitoffset.ms", 0, -1),
    ],
)
def test_topic_range_validators_at_their_boundary(name: str, lowest_valid: int, highest_invalid: int) -> None:
    assert check(f"topics:\n  t:\n    {name}: {lowest_valid}\n").ok
    problem = only_problem(f"topics:\n  t:\n    {name}: {highest_invalid}\n")
    assert problem.key == f"topics.t.{name}"
    assert problem.value == str(highest_invalid)
    assert f"Value must be at least {lowest_valid}" in problem.rule


@pytest.mark.parametrize(
    ("name", "lowest_valid", "highest_invalid"),
    [
        ("log.segment.bytes", 1_048_576, 1_048_575),
        ("log.roll.hours", 1, 0),
        ("log.index.size.max.bytes", 4, 3),
        ("log.index.interval.bytes", 0, -1),
        ("log.segment.delete.delay.ms", 0, -1),
        ("log.cleaner.delete.retention.ms", 0, -1),
        ("log.cleaner.min.compaction.lag.ms", 0, -1),
        ("log.cleaner.max.compaction.lag.ms", 1, 0),
        ("message.max.bytes", 0, -1),
        ("producer.id.expiration.ms", 1, 0),
        ("offsets.retention.minutes", 1, 0),
        ("log.retention.commitoffset.ms", 0, -1),
        ("log.retention.commitoffset.minutes", 0, -1),
        ("log.retention.commitoffset.hours", 0, -1),
        ("kafka_segments.retain.manifests", 1, 0),
    ],
)
def test_broker_range_validators_at_their_boundary(
    name: str, lowest_valid: int, highest_invalid: int
) -> None:
    assert check(f"broker:\n  {name}: {lowest_valid}\n").ok
    problem = only_problem(f"broker:\n  {name}: {highest_invalid}\n")
    assert problem.key == f"broker.{name}"
    assert f"Value must be at least {lowest_valid}" in problem.rule


@pytest.mark.parametrize("name", ["min.cleanable.dirty.ratio", "log.cleaner.min.cleanable.ratio"])
def test_dirty_ratio_is_between_zero_and_one_inclusive(name: str) -> None:
    where = "broker:\n" if name.startswith("log.") else "topics:\n  t:\n  "
    for valid in ("0", "1", "0.0", "1.0", "0.25"):
        assert check(f"{where}  {name}: {valid}\n").ok, valid
    assert "Value must be at least 0" in only_problem(f"{where}  {name}: -0.01\n").rule
    assert "Value must be no more than 1" in only_problem(f"{where}  {name}: 1.01\n").rule


def test_retention_bytes_has_no_validator_any_negative_is_unlimited() -> None:
    check_ = check(f"broker:\n  log.retention.bytes: -7\ntopics:\n  t:\n    retention.bytes: {-(2**63)}\n")

    assert check_.ok
    assert check_.config is not None
    assert check_.config.for_topic("t").retention_bytes == -(2**63)
    assert check_.config.for_topic("u").retention_bytes == -7


def test_cleanup_policy_is_a_list_of_compact_and_delete_and_may_be_empty() -> None:
    for value, expected in [
        ("compact", {"compact"}),
        ("delete,compact", {"compact", "delete"}),
        ("[compact, delete]", {"compact", "delete"}),
        ('""', set()),
        ("[]", set()),
    ]:
        result = check(f"topics:\n  t:\n    cleanup.policy: {value}\n")
        assert result.ok, value
        assert result.config is not None
        assert result.config.for_topic("t").cleanup_policy == expected, value


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("Compact", "String must be one of: compact, delete"),
        ("compact,delete,compact", "Values must not be duplicated"),
        ("compact,", "Values must not be empty strings"),
        ("[compact, 1]", "List items must be strings"),
        ("{compact: 1}", "Expected a comma separated list"),
    ],
)
def test_cleanup_policy_refuses_what_kafkas_valid_list_refuses(value: str, rule: str) -> None:
    problem = only_problem(f"broker:\n  log.cleanup.policy: {value}\n")

    assert problem.key == "broker.log.cleanup.policy"
    assert rule in problem.rule


def test_message_timestamp_type_is_case_sensitive() -> None:
    assert check("topics:\n  t:\n    message.timestamp.type: LogAppendTime\n").ok
    problem = only_problem("topics:\n  t:\n    message.timestamp.type: logappendtime\n")
    assert "String must be one of: CreateTime, LogAppendTime" in problem.rule


def test_internal_segment_bytes_is_topic_only_and_overrides_segment_bytes() -> None:
    """LogConfig.segmentSize(): internal.segment.bytes (defineInternal, no validator) wins when set."""
    result = check("topics:\n  t:\n    segment.bytes: 1048576\n    internal.segment.bytes: 1024\n")
    assert result.ok
    assert result.config is not None
    config = result.config.for_topic("t")
    assert config.segment_bytes == 1024
    assert config.sources["internal.segment.bytes"] == "topic"

    problem = only_problem("broker:\n  internal.segment.bytes: 1024\n")
    assert "topic-level setting with no broker synonym" in problem.rule


def test_required_groups_is_a_list_without_duplicates() -> None:
    result = check("topics:\n  t:\n    kafka_segments.consumed.required.groups: billing, fraud\n")
    assert result.config is not None
    assert result.config.for_topic("t").required_groups == ("billing", "fraud")
    assert "duplicated" in only_problem("broker:\n  kafka_segments.consumed.required.groups: [a, a]\n").rule
