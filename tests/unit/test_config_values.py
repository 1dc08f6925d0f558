"""Values are parsed the way Kafka's ConfigDef.parseType parses them, from YAML (1.2 core scalars)."""

from __future__ import annotations

import pytest
from kafka_segments.config import ConfigCheck, ConfigProblem, check_config

pytestmark = pytest.mark.unit


def check(text: str) -> ConfigCheck:
    return check_config(text, source="test.yaml")


def topic_value(name: str, yaml_value: str) -> object:
    result = check(f"topics:\n  t:\n    {name}: {yaml_value}\n")
    assert result.ok, result.problems
    assert result.config is not None
    return {s.name: s.value for s in result.config.settings("t")}[name]


def topic_problem(name: str, yaml_value: str) -> ConfigProblem:
    problems = check(f"topics:\n  t:\n    {name}: {yaml_value}\n").problems
    assert len(problems) == 1, problems
    assert problems[0].key == f"topics.t.{name}"
    return problems[0]


@pytest.mark.parametrize(
    ("yaml_value", "expected"),
    [("86400000", 86_400_000), ('"86400000"', 86_400_000), ("' 42 '", 42), ('"+5"', 5), ("010", 10)],
)
def test_long_from_a_yaml_int_or_a_string_of_digits(yaml_value: str, expected: int) -> None:
    """Long.parseLong(trimmed): decimal digits with an optional sign; YAML 1.1's octal 010 is not used."""
    assert topic_value("delete.retention.ms", yaml_value) == expected


@pytest.mark.parametrize(
    ("yaml_value", "rule"),
    [
        ("true", "Expected value to be a 64-bit integer (long), but it was a boolean"),
        ("True", "Expected value to be a 64-bit integer (long), but it was a boolean"),
        ("1.0", "but it was a floating-point number"),
        ("1e3", "but it was a floating-point number"),
        ("'1.0'", "Not a number of type LONG"),
        ("1_000", "Not a number of type LONG"),
        ("0x10", "Not a number of type LONG"),
        ("'9223372036854775808'", "Not a number of type LONG"),
        ("9223372036854775808", "out of range for type LONG"),
        ("[1]", "but it was a list"),
        ("2024-01-01", "but it was a date"),
    ],
)
def test_long_refuses_booleans_floats_and_non_decimal_text(yaml_value: str, rule: str) -> None:
    assert rule in topic_problem("delete.retention.ms", yaml_value).rule


def test_int_is_32_bit() -> None:
    assert topic_value("segment.bytes", "2147483647") == 2_147_483_647
    assert "out of range for type INT" in topic_problem("segment.bytes", "2147483648").rule
    assert "Not a number of type INT" in topic_problem("segment.bytes", "'2147483648'").rule


@pytest.mark.parametrize(
    ("yaml_value", "expected"),
    [
        ("true", True),
        ("false", False),
        ("TRUE", True),
        ('"True"', True),
        ('" FALSE "', False),
        ("'tRuE'", True),
    ],
)
def test_boolean_from_a_yaml_boolean_or_true_false_in_any_case(yaml_value: str, expected: bool) -> None:
    assert topic_value("retention.commitoffset.enable", yaml_value) is expected


@pytest.mark.parametrize("yaml_value", ["yes", "no", "on", "off", "1", "0", "'enabled'"])
def test_boolean_refuses_yaml_1_1_words_and_numbers(yaml_value: str) -> None:
    problem = topic_problem("retention.commitoffset.enable", yaml_value)
    assert "Expected value to be either true or false" in problem.rule


@pytest.mark.parametrize(
    ("yaml_value", "expected"), [("0", 0.0), ("1", 1.0), ("0.75", 0.75), ("'0.25'", 0.25), ("'.5'", 0.5)]
)
def test_double_from_int_float_or_numeric_string(yaml_value: str, expected: float) -> None:
    assert topic_value("min.cleanable.dirty.ratio", yaml_value) == expected


@pytest.mark.parametrize(
    ("yaml_value", "rule"),
    [
        ("true", "but it was a boolean"),
        ("'half'", "Not a number of type DOUBLE"),
        (".nan", "finite"),
        ("'NaN'", "Not a number of type DOUBLE"),
    ],
)
def test_double_refuses_booleans_text_and_nan(yaml_value: str, rule: str) -> None:
    """Kafka's Range lets NaN through (comparisons with NaN are false); this project refuses it."""
    assert rule in topic_problem("min.cleanable.dirty.ratio", yaml_value).rule


def test_string_is_trimmed_and_must_be_a_string() -> None:
    assert topic_value("message.timestamp.type", "'  CreateTime '") == "CreateTime"
    assert "Expected value to be a string" in topic_problem("message.timestamp.type", "5").rule


@pytest.mark.parametrize(
    ("yaml_value", "expected"),
    [
        ("' compact ,  delete '", ("compact", "delete")),
        ("[delete]", ("delete",)),
        ("'  '", ()),
    ],
)
def test_list_from_a_yaml_list_or_a_trimmed_comma_separated_string(
    yaml_value: str, expected: tuple[str, ...]
) -> None:
    assert topic_value("cleanup.policy", yaml_value) == expected


def test_null_means_not_set_only_where_kafkas_default_is_null() -> None:
    result = check(
        "broker:\n  log.retention.ms: null\n  log.retention.minutes: ~\n  log.retention.hours: 1\n"
    )
    assert result.ok
    assert result.config is not None
    assert result.config.for_topic("t").retention_ms == 3_600_000

    problem = check("broker:\n  log.retention.hours:\n").problems[0]
    assert problem.key == "broker.log.retention.hours"
    assert problem.value == "null"
    assert "Value must be non-null" in problem.rule


def test_mapping_keys_are_their_text() -> None:
    """A topic named 123 or true is that name (keys are never typed)."""
    result = check("topics:\n  123:\n    retention.ms: 1\n  'true':\n    retention.ms: 2\n")

    assert result.ok
    assert result.config is not None
    assert result.config.topics == ("123", "true")
    assert result.config.for_topic("123").retention_ms == 1
