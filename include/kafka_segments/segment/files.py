"""Names of the files in a partition directory (``LogFileUtils``, ``LocalLog``): the base offset zero-padded
to 20 digits plus ``.log``, ``.index``, ``.timeindex``, ``.txnindex`` or ``.snapshot``, optionally with a
transient ``.cleaned``, ``.swap`` or ``.deleted`` suffix."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from kafka_segments.errors import InvalidFileNameError
from kafka_segments.topic_partition import TopicPartition

OFFSET_DIGITS = 20
INT64_MAX = 2**63 - 1


class FileKind(Enum):
    """The suffix naming what a segment file holds."""

    LOG = ".log"
    INDEX = ".index"
    TIME_INDEX = ".timeindex"
    TXN_INDEX = ".txnindex"
    SNAPSHOT = ".snapshot"


class TransientSuffix(Enum):
    """Suffixes Kafka adds while a file is being built, swapped in or deleted."""

    CLEANED = ".cleaned"
    SWAP = ".swap"
    DELETED = ".deleted"


_KINDS = {kind.value: kind for kind in FileKind}
_SUFFIXES = {suffix.value: suffix for suffix in TransientSuffix}


@dataclass(frozen=True, slots=True)
class SegmentFileName:
    """A parsed segment file name: ``<base offset><kind>[<transient suffix>]``."""

    base_offset: int
    kind: FileKind
    suffix: TransientSuffix | None = None

    def __str__(self) -> str:
        return segment_file_name(self.base_offset, self.kind, suffix=self.suffix)


def filename_prefix(offset: int) -> str:
    """The 20-digit zero-padded offset that starts every segment file name."""
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset <= INT64_MAX:
        raise InvalidFileNameError(f"a segment base offset must be an int in [0, 2**63 - 1], not {offset!r}")
    return f"{offset:0{OFFSET_DIGITS}d}"


def segment_file_name(base_offset: int, kind: FileKind, *, suffix: TransientSuffix | None = None) -> str:
    """E.g. ``segment_file_name(5, FileKind.INDEX)`` is ``"00000000000000000005.index"``."""
    return filename_prefix(base_offset) + kind.value + (suffix.value if suffix is not None else "")


def parse_segment_file_name(name: str) -> SegmentFileName:
    """Parse ``<offset>.<kind>[.<suffix>]`` (a bare name, not a path).

    Kafka reads the offset with ``Long.parseLong`` of everything before the first ``.``; this accepts the
    same (ASCII digits, within int64) and additionally requires a known kind and suffix.

    Raises:
        InvalidFileNameError: anything else.
    """
    prefix, dot, rest = name.partition(".")
    if not dot or not prefix.isascii() or not prefix.isdigit() or int(prefix) > INT64_MAX:
        raise InvalidFileNameError(f"{name!r} does not start with a segment base offset")
    kind_text, dot, suffix_text = rest.partition(".")
    kind = _KINDS.get("." + kind_text)
    suffix = _SUFFIXES.get("." + suffix_text) if dot else None
    if kind is None or (dot and suffix is None):
        raise InvalidFileNameError(f"{name!r} is not a segment file name (<offset>.<kind>[.<suffix>])")
    return SegmentFileName(int(prefix), kind, suffix)


def partition_dir_name(topic_partition: TopicPartition) -> str:
    """``<topic>-<partition>``."""
    return topic_partition.dir_name


def parse_partition_dir_name(name: str) -> TopicPartition:
    """Parse ``<topic>-<partition>`` from the right (topics may contain ``-``).

    Raises:
        InvalidTopicError: not of that form, or an illegal topic name.
    """
    return TopicPartition.from_dir_name(name)
