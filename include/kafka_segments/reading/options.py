"""The options of a lake read, with the meanings of Spark's Kafka source (docs/reading.md, "Options").

Names are case-insensitive, as Spark's. Exactly one of ``subscribe``, ``subscribePattern`` and ``assign``
chooses the partitions. A start is ``startingTimestamp``, else ``startingOffsetsByTimestamp``, else
``startingOffsets`` (default ``earliest``); an end likewise (default ``latest``); offsets are inclusive at
the start and exclusive at the end. In per-partition JSON ``-2`` is earliest and ``-1`` latest. A parsing
problem is one ``ReadOptionError`` naming the option."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from kafka_segments.reading.errors import ReadOptionError
from kafka_segments.timefmt import TimeFormatError, parse_time_ms
from kafka_segments.topic_partition import TopicPartition

_LONG_MAX = 2**63 - 1
EARLIEST = -2
LATEST = -1


class BoundKind(Enum):
    """How a start or end offset is given."""

    EARLIEST = "earliest"
    LATEST = "latest"
    OFFSETS = "offsets"
    """Per-partition offsets (``-2`` earliest, ``-1`` latest)."""
    TIMESTAMP = "timestamp"
    """One timestamp for every partition (``startingTimestamp`` / ``endingTimestamp``)."""
    TIMESTAMPS = "timestamps"
    """Per-partition timestamps (``startingOffsetsByTimestamp`` / ``endingOffsetsByTimestamp``)."""


@dataclass(frozen=True, slots=True)
class Bound:
    """A start or an end of the read, before it is resolved against a partition."""

    kind: BoundKind
    option: str
    """The option it came from (for messages)."""
    values: Mapping[TopicPartition, int] = field(default_factory=dict)
    timestamp: int = 0


@dataclass(frozen=True, slots=True)
class Subscription:
    """Which partitions a read covers: topics, a topic pattern (a full match, as Java's ``matches``), or an
    explicit assignment."""

    topics: frozenset[str] = frozenset()
    pattern: str | None = None
    assigned: frozenset[TopicPartition] = frozenset()

    def selects(self, topic_partition: TopicPartition) -> bool:
        if self.assigned:
            return topic_partition in self.assigned
        if self.pattern is not None:
            return re.fullmatch(self.pattern, topic_partition.topic) is not None
        return topic_partition.topic in self.topics


DEFAULT_MAX_BYTES_PER_PARTITION = 128 << 20
"""The default of ``maxBytesPerPartition`` (Spark's ``spark.sql.files.maxPartitionBytes``)."""


class View(Enum):
    ALL = "all"
    """Every record of the range (a topic's log)."""
    LATEST = "latest"
    """One row per key: the latest record, keys whose latest record is a tombstone left out."""


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """Everything a read needs besides the lake."""

    subscription: Subscription
    starting: Bound
    ending: Bound
    read_committed: bool = False
    fail_on_data_loss: bool = True
    include_headers: bool = False
    version: int | None = None
    timestamp_as_of: int | None = None
    view: View = View.ALL
    starting_strategy_latest: bool = False
    """``startingOffsetsByTimestampStrategy=latest``: a timestamp no record reaches starts at latest."""
    max_bytes_per_partition: int = DEFAULT_MAX_BYTES_PER_PARTITION
    """``maxBytesPerPartition``: a larger segment is split into byte spans of about this size."""


_SUBSCRIPTIONS = ("subscribe", "subscribepattern", "assign")
_DEFAULT_START = Bound(BoundKind.EARLIEST, "startingOffsets")
_DEFAULT_END = Bound(BoundKind.LATEST, "endingOffsets")


def parse_options(options: Mapping[str, object]) -> ReadOptions:
    """The read options of ``options`` (Spark's option map: names are case-insensitive, values strings).
    A value given as a Python ``int`` or ``bool`` means its text (``1`` is ``"1"``, ``True`` is ``"true"``),
    as Spark's ``DataFrameReader.option`` takes them; any other type is refused naming the option.

    Raises:
        ReadOptionError: an option is malformed, of a type that is not a string, an int or a bool, or
            contradicts another.
    """
    given = {_option_name(name): _option_text(name, value) for name, value in options.items()}
    return ReadOptions(
        subscription=_subscription(given),
        starting=_bound(given, "starting", _DEFAULT_START),
        ending=_bound(given, "ending", _DEFAULT_END),
        read_committed=_isolation(given),
        fail_on_data_loss=_flag(given, "failOnDataLoss", default=True),
        include_headers=_flag(given, "includeHeaders", default=False),
        version=_version(given),
        timestamp_as_of=_time(given, "timestampAsOf"),
        view=_view(given),
        starting_strategy_latest=_strategy(given),
        max_bytes_per_partition=_max_bytes(given),
    )


def _option_name(name: object) -> str:
    if not isinstance(name, str):
        raise ReadOptionError(_shown(name), f"an option's name must be a string, not {type(name).__name__}")
    return name.lower()


def _option_text(name: str, value: object) -> str:
    """``value`` as the option's text: a string as is, a bool as ``true``/``false``, an int in decimal."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    raise ReadOptionError(
        name, f"{_shown(value)} is a {type(value).__name__}: give a string (or an int or a bool)"
    )


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _subscription(given: Mapping[str, str]) -> Subscription:
    chosen = [name for name in _SUBSCRIPTIONS if name in given]
    if len(chosen) != 1:
        problem = "is missing" if not chosen else f"is given with {', '.join(_name(n) for n in chosen[1:])}"
        raise ReadOptionError(
            "subscribe", f"{problem}: give exactly one of subscribe, subscribePattern, assign"
        )
    name = chosen[0]
    value = given[name]
    if name == "subscribe":
        topics = frozenset(topic.strip() for topic in value.split(",") if topic.strip())
        if not topics:
            raise ReadOptionError("subscribe", "names no topic (a comma-separated list of topics)")
        return Subscription(topics=topics)
    if name == "subscribepattern":
        try:
            re.compile(value)
        except re.error as exc:
            raise ReadOptionError(
                "subscribePattern", f"{value!r} is not a regular expression: {exc}"
            ) from None
        return Subscription(pattern=value)
    return Subscription(assigned=frozenset(_assignment(value)))


def _assignment(value: str) -> list[TopicPartition]:
    document = _json("assign", value)
    partitions: list[TopicPartition] = []
    for topic, numbers in document.items():
        if not isinstance(numbers, list) or not all(_is_int(n) for n in numbers):
            raise ReadOptionError(
                "assign", f'topic {topic!r}: expected a list of partitions, as {{"t":[0,1]}}'
            )
        partitions.extend(_partition("assign", topic, number) for number in numbers)
    if not partitions:
        raise ReadOptionError("assign", "assigns no partition")
    return partitions


def _bound(given: Mapping[str, str], side: str, default: Bound) -> Bound:
    """The start (``side='starting'``) or end, by the precedence of Spark's Kafka source."""
    timestamp = f"{side}Timestamp"
    if timestamp.lower() in given:
        return Bound(
            BoundKind.TIMESTAMP, timestamp, timestamp=_timestamp(timestamp, given[timestamp.lower()])
        )
    by_timestamp = f"{side}OffsetsByTimestamp"
    if by_timestamp.lower() in given:
        values = _per_partition(by_timestamp, given[by_timestamp.lower()])
        for tp, value in values.items():
            if value < 0:
                raise ReadOptionError(by_timestamp, f"{tp}: timestamp {value} is negative")
        return Bound(BoundKind.TIMESTAMPS, by_timestamp, values=values)
    name = f"{side}Offsets"
    if name.lower() not in given:
        return default
    return _offsets_bound(name, given[name.lower()].strip(), starting=side == "starting")


def _offsets_bound(name: str, value: str, *, starting: bool) -> Bound:
    forbidden = "latest" if starting else "earliest"
    if value == forbidden:
        raise ReadOptionError(
            name, f"{forbidden!r} is not allowed for a batch read (as Spark's Kafka source)"
        )
    if value in ("earliest", "latest"):
        return Bound(BoundKind(value), name)
    offsets = _per_partition(name, value)
    banned = LATEST if starting else EARLIEST
    for tp, offset in offsets.items():
        if offset == banned:
            raise ReadOptionError(name, f"{tp}: {banned} ({forbidden}) is not allowed for a batch read")
        if offset < EARLIEST:
            raise ReadOptionError(name, f"{tp}: offset {offset} is negative (only -2 and -1 have a meaning)")
    return Bound(BoundKind.OFFSETS, name, values=offsets)


def _per_partition(option: str, value: str) -> dict[TopicPartition, int]:
    """``{"topic": {"0": 23, "1": -2}}`` as a mapping."""
    document = _json(option, value)
    out: dict[TopicPartition, int] = {}
    for topic, partitions in document.items():
        if not isinstance(partitions, dict):
            raise ReadOptionError(option, f'topic {topic!r}: expected an object, as {{"t":{{"0":23}}}}')
        for number, offset in partitions.items():
            if not number.lstrip("-").isdigit() or not _is_int(offset):
                raise ReadOptionError(
                    option, f"topic {topic!r}: {number!r}: {offset!r} is not partition: number"
                )
            out[_partition(option, topic, int(number))] = offset
    return out


def _partition(option: str, topic: str, number: int) -> TopicPartition:
    try:
        return TopicPartition(topic, number)
    except ValueError as exc:
        raise ReadOptionError(option, str(exc)) from None


def _json(option: str, value: str) -> dict[str, Any]:
    try:
        document = json.loads(value)
    except (ValueError, RecursionError) as exc:
        raise ReadOptionError(option, f"is not JSON: {exc}") from None
    if not isinstance(document, dict) or not document:
        raise ReadOptionError(option, "expected a JSON object keyed by topic")
    return document


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _timestamp(option: str, value: str) -> int:
    text = value.strip()
    if not text.isdigit():
        raise ReadOptionError(option, f"{value!r} is not a timestamp in epoch milliseconds")
    if len(text) > 19 or int(text) > _LONG_MAX:  # Spark's source reads it as a Java long
        raise ReadOptionError(option, f"{value[:40]!r} is beyond a timestamp's range (2^63-1 ms)")
    return int(text)


def _flag(given: Mapping[str, str], option: str, *, default: bool) -> bool:
    value = given.get(option.lower())
    if value is None:
        return default
    if value.strip().lower() not in ("true", "false"):
        raise ReadOptionError(option, f"{value!r} is neither true nor false")
    return value.strip().lower() == "true"


def _isolation(given: Mapping[str, str]) -> bool:
    value = given.get("kafka.isolation.level", "read_uncommitted").strip()
    if value not in ("read_committed", "read_uncommitted"):
        raise ReadOptionError(
            "kafka.isolation.level", f"{value!r} is neither read_committed nor read_uncommitted"
        )
    return value == "read_committed"


def _version(given: Mapping[str, str]) -> int | None:
    value = given.get("versionasof")
    if value is None:
        return None
    if not value.strip().isdigit():
        raise ReadOptionError("versionAsOf", f"{value!r} is not a manifest version (a whole number)")
    if "timestampasof" in given:
        raise ReadOptionError("versionAsOf", "give versionAsOf or timestampAsOf, not both")
    return int(value)


def _time(given: Mapping[str, str], option: str) -> int | None:
    value = given.get(option.lower())
    if value is None:
        return None
    try:
        return parse_time_ms(value)
    except TimeFormatError as error:
        raise ReadOptionError(option, str(error)) from None


def _view(given: Mapping[str, str]) -> View:
    value = given.get("view", "all").strip().lower()
    try:
        return View(value)
    except ValueError:
        raise ReadOptionError("view", f"{value!r} is neither all nor latest") from None


def _strategy(given: Mapping[str, str]) -> bool:
    value = given.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if value not in ("error", "latest"):
        raise ReadOptionError("startingOffsetsByTimestampStrategy", f"{value!r} is neither error nor latest")
    return value == "latest"


def _max_bytes(given: Mapping[str, str]) -> int:
    value = given.get("maxbytesperpartition")
    if value is None:
        return DEFAULT_MAX_BYTES_PER_PARTITION
    if not value.strip().isdigit() or int(value) == 0:
        raise ReadOptionError("maxBytesPerPartition", f"{value!r} is not a positive number of bytes")
    return int(value)


def _name(lowered: str) -> str:
    return {"subscribepattern": "subscribePattern"}.get(lowered, lowered)
