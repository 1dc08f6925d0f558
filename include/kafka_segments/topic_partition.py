"""Topic partitions and Kafka's topic-name rules (``org.apache.kafka.common.internals.Topic.validate``).

A legal topic name is 1 to 249 characters from ``[a-zA-Z0-9._-]`` and is neither ``.`` nor ``..``.
A partition is a non-negative int32. A partition's log directory is ``<topic>-<partition>``; since topics
may contain ``-`` the name is split at its **last** ``-`` (``LocalLog.parseTopicPartitionName``)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from kafka_segments.errors import InvalidTopicError

MAX_TOPIC_NAME_LENGTH = 249
INT32_MAX = 2**31 - 1
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")


def validate_topic_name(topic: str) -> None:
    """Raise ``InvalidTopicError`` (a ``ValueError``) when Kafka would reject ``topic``."""
    if not isinstance(topic, str):
        raise InvalidTopicError(f"Topic name must be a string, not {type(topic).__name__}")
    if not topic:
        raise InvalidTopicError("Topic name is illegal, it can't be empty")
    if topic in (".", ".."):
        raise InvalidTopicError('Topic name cannot be "." or ".."')
    if len(topic) > MAX_TOPIC_NAME_LENGTH:
        raise InvalidTopicError(
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters, "
            f"Topic name: {topic}"
        )
    if not _LEGAL_TOPIC.fullmatch(topic):
        raise InvalidTopicError(
            f'Topic name "{topic}" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'"
        )


def validate_partition(partition: int) -> None:
    """Raise ``InvalidTopicError`` unless ``partition`` is an int in ``[0, 2**31 - 1]``."""
    if isinstance(partition, bool) or not isinstance(partition, int):
        raise InvalidTopicError(f"partition must be an int, not {type(partition).__name__}")
    if not 0 <= partition <= INT32_MAX:
        raise InvalidTopicError(f"partition {partition} is outside [0, {INT32_MAX}]")


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    """A validated (topic, partition) pair; orders by topic, then partition."""

    topic: str
    partition: int

    def __post_init__(self) -> None:
        validate_topic_name(self.topic)
        validate_partition(self.partition)

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def dir_name(self) -> str:
        """The partition's log directory name, ``<topic>-<partition>``."""
        return f"{self.topic}-{self.partition}"

    @classmethod
    def from_dir_name(cls, name: str) -> TopicPartition:
        """Parse ``<topic>-<partition>``, splitting at the last ``-`` (topics may contain ``-``).

        Raises:
            InvalidTopicError: no ``-``, an empty topic, a partition that is not a decimal int32, or an
                illegal topic name.
        """
        if cls is TopicPartition:
            return _parsed_dir_name(name)  # a listing names each partition's folder once per object
        return _parse_dir_name(cls, name)


def _parse_dir_name(cls: type[TopicPartition], name: str) -> TopicPartition:
    topic, sep, partition = name.rpartition("-")
    if not sep or not topic:
        raise InvalidTopicError(f"directory name {name!r} is not in the form <topic>-<partition>")
    if not partition.isascii() or not partition.isdigit():
        raise InvalidTopicError(f"directory name {name!r} does not end in a decimal partition number")
    return cls(topic, int(partition))


@functools.lru_cache(maxsize=1 << 16)
def _parsed_dir_name(name: str) -> TopicPartition:
    """``TopicPartition.from_dir_name``, remembered (the value is immutable; a name that raises is not
    remembered)."""
    return _parse_dir_name(TopicPartition, name)
