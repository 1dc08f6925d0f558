"""A YAML value -> a setting's value, the way Kafka's ``ConfigDef.parseType`` and validators (``Range``,
``ValidString.in``, ``ValidList``) do it; the rules per type are docs/configuration.md, "Values".

Strings are trimmed as Java's ``String.trim`` does (every character <= U+0020). Kafka's range check lets NaN
through (every comparison with NaN is false); this project refuses NaN and infinities. A YAML ``null`` means
"not set" only for the settings whose Kafka default is null; elsewhere it is refused as Kafka refuses null."""

from __future__ import annotations

import datetime
import math
import re

from kafka_segments.config.catalogue import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    ListOf,
    OneOf,
    Range,
    Setting,
    Validator,
    Value,
    ValueType,
)
from kafka_segments.errors import KafkaSegmentsError

_JAVA_TRIM = "".join(chr(code) for code in range(0x21))
_JAVA_SPACE = "[ \t\n\x0b\f\r]"
_COMMA = re.compile(f"{_JAVA_SPACE}*,{_JAVA_SPACE}*")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_YAML11_BOOLEANS = frozenset({"yes", "no", "y", "n", "on", "off"})
_INTEGER_BOUNDS = {ValueType.INT: (INT_MIN, INT_MAX), ValueType.LONG: (LONG_MIN, LONG_MAX)}
_INTEGER_NAMES = {ValueType.INT: "a 32-bit integer", ValueType.LONG: "a 64-bit integer (long)"}


class SettingValueError(KafkaSegmentsError, ValueError):
    """A value breaks its setting's type or validator; ``rule`` says which rule, in Kafka's words."""

    def __init__(self, rule: str) -> None:
        self.rule = rule
        super().__init__(rule)


def parse_setting_value(setting: Setting, raw: object) -> Value | None:
    """Parse and validate ``raw`` (a value from the YAML file) for ``setting``.

    Returns ``None`` for a YAML ``null`` on a setting whose default is null (not set).

    Raises:
        SettingValueError: the value has the wrong type, does not parse, or breaks the validator.
    """
    if raw is None:
        if setting.default is None:
            return None
        raise SettingValueError("Value must be non-null (leave the key out to use the default)")
    value = parse_typed(setting.type, raw)
    if setting.validator is not None:
        check_validator(setting.validator, value)
    return value


def parse_typed(value_type: ValueType, raw: object) -> Value:
    """``ConfigDef.parseType`` for one non-null value."""
    if value_type is ValueType.BOOLEAN:
        return _parse_boolean(raw)
    if value_type in _INTEGER_BOUNDS:
        return _parse_integer(value_type, raw)
    if value_type is ValueType.DOUBLE:
        return _parse_double(raw)
    if value_type is ValueType.STRING:
        if isinstance(raw, str):
            return raw.strip(_JAVA_TRIM)
        raise SettingValueError(f"Expected value to be a string, but it was {_kind(raw)}")
    return _parse_list(raw)


def _parse_boolean(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip(_JAVA_TRIM).lower() in ("true", "false"):
        return raw.strip(_JAVA_TRIM).lower() == "true"
    hint = ""
    if isinstance(raw, str) and raw.strip(_JAVA_TRIM).lower() in _YAML11_BOOLEANS:
        hint = f" ({raw!r} is not a boolean here: write true or false)"
    raise SettingValueError(f"Expected value to be either true or false{hint}")


def _parse_integer(value_type: ValueType, raw: object) -> int:
    low, high = _INTEGER_BOUNDS[value_type]
    if isinstance(raw, str):
        text = raw.strip(_JAVA_TRIM)
        if not _INTEGER.fullmatch(text) or not low <= int(text) <= high:
            raise SettingValueError(f"Not a number of type {value_type.value}")
        return int(text)
    if isinstance(raw, int) and not isinstance(raw, bool):
        if not low <= raw <= high:
            raise SettingValueError(f"Value is out of range for type {value_type.value} [{low},...,{high}]")
        return raw
    raise SettingValueError(f"Expected value to be {_INTEGER_NAMES[value_type]}, but it was {_kind(raw)}")


def _parse_double(raw: object) -> float:
    if isinstance(raw, str):
        text = raw.strip(_JAVA_TRIM)
        if not _DECIMAL.fullmatch(text):
            raise SettingValueError("Not a number of type DOUBLE")
        value = float(text)
    elif isinstance(raw, int | float) and not isinstance(raw, bool):
        value = float(raw)
    else:
        raise SettingValueError(f"Expected value to be a double, but it was {_kind(raw)}")
    if not math.isfinite(value):
        raise SettingValueError("Value must be a finite number (NaN and infinities are refused)")
    return value


def _parse_list(raw: object) -> tuple[str, ...]:
    if isinstance(raw, str):
        text = raw.strip(_JAVA_TRIM)
        return tuple(_COMMA.split(text)) if text else ()
    if isinstance(raw, list):
        for item in raw:
            if not isinstance(item, str):
                raise SettingValueError(f"List items must be strings, but one was {_kind(item)}: quote it")
        return tuple(raw)
    raise SettingValueError(f"Expected a comma separated list (or a YAML list), but it was {_kind(raw)}")


def check_validator(validator: Validator, value: Value) -> None:
    """Raise ``SettingValueError`` when ``value`` breaks ``validator`` (Kafka's ``ensureValid``)."""
    if isinstance(validator, Range):
        _check_range(validator, value)
    elif isinstance(validator, OneOf):
        if value not in validator.choices:
            raise SettingValueError("String must be one of: " + ", ".join(validator.choices))
    else:
        _check_list(validator, value)


def _check_range(validator: Range, value: Value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SettingValueError("Value must be a number")
    if value < validator.minimum:
        raise SettingValueError(f"Value must be at least {validator.minimum}")
    if validator.maximum is not None and value > validator.maximum:
        raise SettingValueError(f"Value must be no more than {validator.maximum}")


def _check_list(validator: ListOf, value: Value) -> None:
    if not isinstance(value, tuple):
        raise SettingValueError("Value must be a list")
    if not validator.allow_empty and not value:
        raise SettingValueError(f"Value must not be empty. Valid values include: {validator.describe()}")
    if len(set(value)) != len(value):
        raise SettingValueError("Values must not be duplicated")
    for item in value:
        if not item:
            raise SettingValueError("Values must not be empty strings")
        if validator.choices and item not in validator.choices:
            raise SettingValueError(f"{item!r}: String must be one of: " + ", ".join(validator.choices))


def _kind(raw: object) -> str:  # noqa: PLR0911 - one return per YAML value type, in the order of Kafka's ConfigDef types
    """How a YAML value reads in a message: ``a boolean``, ``a list``, ``a date``, …"""
    if isinstance(raw, bool):
        return "a boolean"
    if isinstance(raw, int):
        return "an integer"
    if isinstance(raw, float):
        return "a floating-point number"
    if isinstance(raw, str):
        return "a string"
    if isinstance(raw, list):
        return "a list"
    if isinstance(raw, dict):
        return "a mapping"
    if isinstance(raw, datetime.date):
        return "a date"
    return f"a {type(raw).__name__}"
