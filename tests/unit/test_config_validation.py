"""Validation before any work: every problem reported at once, each with its key, value and rule."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from kafka_segments.config import ConfigCheck, ConfigError, check_config, load_config, parse_config
from kafka_segments.errors import LocatedError

pytestmark = pytest.mark.unit


def check(text: str) -> ConfigCheck:
    return check_config(text, source="test.yaml")


def keys(text: str) -> list[str]:
    return [problem.key for problem in check(text).problems]


# --- LogConfig.validateValues: min.compaction.lag.ms > max.compaction.lag.ms ------------------------------


def test_min_compaction_lag_above_max_is_a_conflict_on_a_topic() -> None:
    (problem,) = check(
        "topics:\n  t:\n    min.compaction.lag.ms: 11\n    max.compaction.lag.ms: 10\n"
    ).problems

    assert problem.key == "topics.t.min.compaction.lag.ms"
    assert problem.value == "11"
    assert "min.compaction.lag.ms (11) > max.compaction.lag.ms (10)" in problem.rule
    assert problem.line == 3


def test_min_compaction_lag_equal_to_max_is_allowed() -> None:
    assert check("topics:\n  t:\n    min.compaction.lag.ms: 10\n    max.compaction.lag.ms: 10\n").ok
    assert check(
        "broker:\n  log.cleaner.min.compaction.lag.ms: 10\n  log.cleaner.max.compaction.lag.ms: 10\n"
    ).ok


def test_compaction_lag_conflict_on_the_broker_defaults_is_reported_once() -> None:
    text = (
        "broker:\n  log.cleaner.min.compaction.lag.ms: 11\n  log.cleaner.max.compaction.lag.ms: 10\n"
        "topics:\n  t:\n    retention.ms: 5\n"
    )
    assert keys(text) == ["broker.log.cleaner.min.compaction.lag.ms"]


def test_compaction_lag_conflict_between_a_topic_and_the_broker_is_the_topics() -> None:
    text = "broker:\n  log.cleaner.max.compaction.lag.ms: 10\ntopics:\n  t:\n    min.compaction.lag.ms: 11\n"
    assert keys(text) == ["topics.t.min.compaction.lag.ms"]
    text = "broker:\n  log.cleaner.min.compaction.lag.ms: 11\ntopics:\n  t:\n    max.compaction.lag.ms: 10\n"
    assert keys(text) == ["topics.t.max.compaction.lag.ms"]


# --- kafka_segments.run.folder.retention.ms: -1 or at least one hour ----------------------------------------


@pytest.mark.parametrize("value", [-1, 3_600_000, 2_592_000_000])
def test_run_folder_retention_is_off_or_at_least_an_hour(value: int) -> None:
    assert check(f"broker:\n  kafka_segments.run.folder.retention.ms: {value}\n").ok


@pytest.mark.parametrize("value", [0, 3_599_999])
def test_a_run_folder_retention_under_an_hour_is_refused(value: int) -> None:
    (problem,) = check(f"broker:\n  kafka_segments.run.folder.retention.ms: {value}\n").problems

    assert (problem.key, problem.value, problem.line) == (
        "broker.kafka_segments.run.folder.retention.ms",
        str(value),
        2,
    )
    assert "must be -1 (keep every run folder) or at least 3600000 (1 hour)" in problem.rule


def test_run_folder_retention_is_a_broker_setting_only() -> None:
    assert keys("topics:\n  t:\n    kafka_segments.run.folder.retention.ms: 3600000\n") == [
        "topics.t.kafka_segments.run.folder.retention.ms"
    ]


# --- KIP-68: consumed retention longer than a finite retention.ms ----------------------------------------


def test_consumed_retention_longer_than_retention_ms_is_refused_when_enabled() -> None:
    text = (
        "topics:\n  clickstream:\n    retention.ms: 1000\n    retention.commitoffset.enable: true\n"
        "    retention.commitoffset.ms: 1001\n"
    )
    (problem,) = check(text).problems

    assert problem.key == "topics.clickstream.retention.commitoffset.ms"
    assert problem.value == "1001"
    assert "longer than retention.ms (1000 ms)" in problem.rule


def test_consumed_retention_equal_to_retention_ms_is_allowed() -> None:
    text = "topics:\n  t:\n    retention.ms: 1000\n    retention.commitoffset.ms: 1000\n"
    assert check(text).ok


def test_consumed_retention_against_unlimited_retention_is_allowed() -> None:
    text = "topics:\n  t:\n    retention.ms: -1\n    retention.commitoffset.enable: true\n"
    assert check(text).ok


def test_consumed_retention_is_checked_when_a_topic_sets_its_time_even_if_disabled() -> None:
    assert keys("topics:\n  t:\n    retention.ms: 10\n    retention.commitoffset.ms: 20\n") == [
        "topics.t.retention.commitoffset.ms"
    ]


def test_a_disabled_broker_wide_consumed_default_does_not_invalidate_short_retention_topics() -> None:
    """The default consumed time is 168 hours; a topic with one hour of retention is fine while disabled."""
    assert check("broker:\n  log.retention.hours: 1\ntopics:\n  t:\n    retention.ms: 3600000\n").ok


def test_enabling_consumed_retention_on_a_short_retention_topic_is_refused() -> None:
    text = "topics:\n  t:\n    retention.ms: 3600000\n    retention.commitoffset.enable: true\n"
    (problem,) = check(text).problems

    assert problem.key == "topics.t.retention.commitoffset.enable"
    assert "consumed retention (604800000 ms) is longer than retention.ms (3600000 ms)" in problem.rule


def test_broker_consumed_retention_is_checked_when_the_broker_sets_its_time() -> None:
    text = "broker:\n  log.retention.hours: 24\n  log.retention.commitoffset.hours: 48\n"
    (problem,) = check(text).problems

    assert problem.key == "broker.log.retention.commitoffset.hours"
    assert "longer than log.retention.hours (86400000 ms)" in problem.rule


def test_broker_consumed_retention_is_checked_when_the_broker_enables_it() -> None:
    text = "broker:\n  log.retention.hours: 24\n  log.retention.commitoffset.enable: true\n"
    assert keys(text) == ["broker.log.retention.commitoffset.enable"]


def test_topic_that_fixes_a_broker_consumed_conflict_is_not_reported() -> None:
    text = (
        "broker:\n  log.retention.hours: 24\n  log.retention.commitoffset.hours: 48\n"
        "topics:\n  long:\n    retention.ms: -1\n"
    )
    assert keys(text) == ["broker.log.retention.commitoffset.hours"]


# --- names -------------------------------------------------------------------------------------------------


def test_unknown_name_gets_a_did_you_mean_and_the_extension_prefix_hint() -> None:
    (problem,) = check("topics:\n  t:\n    retention.msec: 5\n").problems

    assert problem.key == "topics.t.retention.msec"
    assert "did you mean retention.ms?" in problem.rule
    assert "kafka_segments." in problem.rule


def test_unknown_extension_name_is_reported_as_such() -> None:
    (problem,) = check("broker:\n  kafka_segments.consumed.required.group: a\n").problems
    assert "unknown kafka-segments extension setting" in problem.rule
    assert "did you mean kafka_segments.consumed.required.groups?" in problem.rule


def test_topic_level_name_at_broker_level_points_to_its_broker_synonyms() -> None:
    (problem,) = check("broker:\n  retention.ms: 5\n").problems
    assert problem.key == "broker.retention.ms"
    assert "log.retention.ms / log.retention.minutes / log.retention.hours" in problem.rule


def test_broker_level_names_at_topic_level_are_refused() -> None:
    problems = check("topics:\n  t:\n    log.retention.hours: 5\n    offsets.retention.minutes: 5\n").problems

    assert [p.key for p in problems] == ["topics.t.log.retention.hours", "topics.t.offsets.retention.minutes"]
    assert "per topic use retention.ms" in problems[0].rule
    assert "broker-only" in problems[1].rule


def test_kafka_settings_without_effect_on_retention_are_named_as_such() -> None:
    (problem,) = check("topics:\n  t:\n    compression.type: lz4\n").problems
    assert "Kafka setting kafka-segments does not use" in problem.rule


def test_illegal_topic_names_are_refused_with_kafkas_rule() -> None:
    (problem,) = check("topics:\n  'a b':\n    retention.ms: 5\n").problems
    assert problem.key == "topics.a b"
    assert "illegal" in problem.rule


def test_unknown_top_level_key() -> None:
    (problem,) = check("topic:\n  t:\n    retention.ms: 5\n").problems
    assert problem.key == "topic"
    assert "did you mean topics?" in problem.rule


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("- a\n", "(top level)"),
        ("broker: 5\n", "broker"),
        ("topics: [a]\n", "topics"),
        ("topics:\n  t: 5\n", "topics.t"),
    ],
)
def test_sections_must_be_mappings(text: str, key: str) -> None:
    (problem,) = check(text).problems
    assert problem.key == key
    assert "must be" in problem.rule


def test_empty_sections_and_empty_file_are_valid() -> None:
    for text in ("", "# nothing\n", "broker:\ntopics:\n", "topics:\n  t:\n"):
        result = check(text)
        assert result.ok, text
    assert check("topics:\n  t:\n").config is not None


# --- YAML --------------------------------------------------------------------------------------------------


def test_duplicate_keys_are_problems_with_both_lines() -> None:
    text = "broker:\n  log.retention.hours: 1\n  log.retention.hours: 2\ntopics:\n  t: {}\n  t: {}\n"
    problems = check(text).problems

    assert [(p.key, p.line) for p in problems] == [("broker.log.retention.hours", 3), ("topics.t", 6)]
    assert "duplicate key (first at line 2)" in problems[0].rule


def test_duplicate_top_level_key_is_a_problem() -> None:
    assert keys("broker: {}\nbroker: {}\n") == ["broker"]


def test_malformed_yaml_names_the_line() -> None:
    result = check("broker:\n  log.retention.hours: 1\n  bad: [1\n")

    assert result.config is None
    (problem,) = result.problems
    assert problem.key == "(file)"
    assert problem.line == 4
    assert "not valid YAML at line 4" in problem.rule


def test_parse_config_of_malformed_yaml_raises_naming_the_line() -> None:
    with pytest.raises(
        ConfigError, match=r"^x\.yaml: invalid configuration: not valid YAML at line 2, column 1"
    ):
        parse_config("topics: [1\n", source="x.yaml")


def test_several_documents_are_refused() -> None:
    (problem,) = check("broker: {}\n---\ntopics: {}\n").problems
    assert "not valid YAML" in problem.rule


def test_unknown_yaml_tags_are_problems_of_their_key() -> None:
    (problem,) = check("broker:\n  log.retention.hours: !!python/int 5\n").problems
    assert problem.key == "broker.log.retention.hours"
    assert "cannot read the value" in problem.rule


# --- every problem at once, and the error ------------------------------------------------------------------


BROKEN = """\
broker:
  log.retention.hours: -0
  log.segment.bytes: 1000
  log.cleaner.enable: maybe
  retention.ms: 5
topics:
  clickstream:
    retention.ms: 1000
    retention.commitoffset.ms: 2000
    cleanup.policy: compact,purge
    segment.ms: true
  customers:
    min.compaction.lag.ms: 5
    max.compaction.lag.ms: 4
    min.compaction.lag.msx: 1
"""


def test_every_problem_is_reported_together_in_file_order_then_cross_rules() -> None:
    assert [(p.key, p.line) for p in check(BROKEN).problems] == [
        ("broker.log.retention.hours", 2),
        ("broker.log.segment.bytes", 3),
        ("broker.log.cleaner.enable", 4),
        ("broker.retention.ms", 5),
        ("topics.clickstream.cleanup.policy", 10),
        ("topics.clickstream.segment.ms", 11),
        ("topics.customers.min.compaction.lag.msx", 15),
        ("topics.clickstream.retention.commitoffset.ms", 9),
        ("topics.customers.min.compaction.lag.ms", 13),
    ]


def test_parse_config_raises_one_config_error_carrying_every_problem() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(BROKEN, source="conf/retention.yaml")

    error = caught.value
    assert isinstance(error, LocatedError)
    assert error.location == "conf/retention.yaml"
    assert len(error.problems) == 9
    assert str(error).startswith("conf/retention.yaml: invalid configuration: ")
    assert "(and 8 more)" in str(error)
    clone = pickle.loads(pickle.dumps(error))
    assert clone.problems == error.problems


def test_load_config_of_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as caught:
        load_config(missing)

    assert caught.value.location == str(missing)
    (problem,) = caught.value.problems
    assert problem.key == "(file)"
    assert "cannot read" in problem.rule


def test_load_config_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "retention.yaml"
    path.write_text("topics:\n  orders:\n    retention.ms: 60000\n")

    config = load_config(path)

    assert config.source == str(path)
    assert config.for_topic("orders").retention_ms == 60_000


def test_load_config_refuses_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"topics:\n  caf\xe9:\n    retention.ms: 1\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)


def test_problem_lines_are_printable() -> None:
    (problem,) = check("topics:\n  t:\n    segment.bytes: 5\n").problems

    assert problem.as_line() == (
        "problem: topics.t.segment.bytes: 5: Value must be at least 1048576 "
        "(segment.bytes is INT; valid: [1048576,...])"
    )
    assert problem.message.startswith("topics.t.segment.bytes = 5 (line 3): Value must be at least 1048576")
