"""Kafka's text offset checkpoint files (``CheckpointFile``, ``OffsetCheckpointFile``), e.g.
``cleaner-offset-checkpoint`` and ``log-start-offset-checkpoint``: a version line (0), an entry-count line,
then ``<topic> <partition> <offset>`` per entry, in UTF-8.

Writing: single spaces, ``\\n`` after every line (``BufferedWriter.newLine`` on Linux), sorted by topic then
partition (Kafka writes hash order) so the bytes are deterministic; atomic through ``<file>.tmp``, fsynced,
then renamed (``Utils.atomicMoveWithFallback``).

Reading replicates ``CheckpointReadBuffer.read`` and ``OffsetCheckpointFile.Formatter.fromString``:

* lines end at ``\\n``, ``\\r`` or ``\\r\\n`` (``BufferedReader.readLine``); invalid UTF-8 is an error;
* an empty file, or a version line without a count line, is an empty map;
* version and count are ``Integer.parseInt`` (else "Malformed line"); a version other than 0 is "Unrecognised
  version"; a negative count fails (Java's ``new ArrayList<>(-1)``);
* every following line (a blank one included) is split on ``\\s+`` as Java does and must have exactly 3 parts,
  else "Malformed line"; partition and offset are ``Integer.parseInt`` / ``Long.parseLong``;
* the number of entry lines must equal the count; a repeated partition keeps its last offset.

Every error is a ``CheckpointFileError`` naming the path and the 1-based line. One deliberate deviation:
entries that are not a valid ``TopicPartition`` (an illegal topic name, a negative partition) are errors."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kafka_segments.errors import CheckpointFileError, InvalidTopicError
from kafka_segments.topic_partition import TopicPartition

CURRENT_VERSION = 0
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"

INT32_BITS = 32
INT64_BITS = 64
_JAVA_INTEGER = re.compile(r"[+-]?\d+")  # Character.digit accepts any Unicode decimal digit, as does \d
_JAVA_LINE_END = re.compile(r"\r\n|\r|\n")
_JAVA_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]+")  # java.util.regex \s

PathLike = str | os.PathLike[str]


@dataclass(frozen=True, slots=True)
class PartitionLogStart:
    """What ``LogManager.checkpointLogStartOffsetsInDir`` looks at for one partition."""

    log_start_offset: int
    first_segment_base_offset: int
    remote_log_enabled: bool = False


def parse_offset_checkpoint(data: bytes | str, *, path: str = "<memory>") -> dict[TopicPartition, int]:
    """The (topic partition -> offset) map of a checkpoint file's content.

    Raises:
        CheckpointFileError: any of the errors Kafka raises (see the module docstring).
    """
    text = _decode(data, path)
    return dict(_read_container(text, path=path))


def read_offset_checkpoint(path: PathLike) -> dict[TopicPartition, int]:
    """Read a checkpoint file; a missing file reads as empty (Kafka creates it empty before reading)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return {}
    return parse_offset_checkpoint(data, path=os.fspath(path))


def format_offset_checkpoint(offsets: Mapping[TopicPartition, int]) -> bytes:
    """The file's bytes: version 0, the count, then ``topic partition offset`` lines sorted by partition.

    Raises:
        TypeError: a key that is not a ``TopicPartition``.
        ValueError: an offset that is not an int64.
    """
    lines = [str(CURRENT_VERSION), str(len(offsets))]
    for topic_partition in sorted(offsets):
        if not isinstance(topic_partition, TopicPartition):
            raise TypeError(f"checkpoint keys must be TopicPartition, not {type(topic_partition).__name__}")
        offset = offsets[topic_partition]
        if isinstance(offset, bool) or not isinstance(offset, int) or not _fits(offset, INT64_BITS):
            raise ValueError(f"offset of {topic_partition} must be an int64, not {offset!r}")
        lines.append(f"{topic_partition.topic} {topic_partition.partition} {offset}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def atomic_write(path: PathLike, data: bytes, *, sync: bool = True) -> None:
    """Write ``<path>.tmp``, fsync it (when ``sync``), rename it over ``path`` and fsync the directory."""
    target = Path(path)
    temporary = target.with_name(target.name + ".tmp")
    with temporary.open("wb") as file:
        file.write(data)
        file.flush()
        if sync:
            os.fsync(file.fileno())
    temporary.replace(target)
    if sync:
        directory = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def log_start_offsets_to_checkpoint(
    logs: Mapping[TopicPartition, PartitionLogStart],
) -> dict[TopicPartition, int]:
    """The entries of ``log-start-offset-checkpoint``: only partitions whose log start offset is above the
    base offset of their first segment (or that use remote storage) are listed."""
    return {
        topic_partition: state.log_start_offset
        for topic_partition, state in logs.items()
        if state.remote_log_enabled or state.log_start_offset > state.first_segment_base_offset
    }


def _decode(data: bytes | str, path: str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CheckpointFileError(f"not valid UTF-8 at byte {exc.start}: {exc.reason}", path=path) from exc


def _read_container(text: str, *, path: str) -> list[tuple[TopicPartition, int]]:
    """``CheckpointReadBuffer.read``: version line, count line, one entry per remaining line."""
    lines = _JAVA_LINE_END.split(text)
    if lines[-1] == "":
        lines.pop()  # readLine returns null after a final line terminator
    if not lines:
        return []
    read_version = _java_int(lines[0], INT32_BITS, path=path, line=1)
    if read_version != CURRENT_VERSION:
        expected_version = f"expected version: {CURRENT_VERSION} in checkpoint file at: {path}"
        raise CheckpointFileError(
            f"Unrecognised version:{read_version}, {expected_version}", path=path, line=1
        )
    if len(lines) == 1:
        return []
    expected = _java_int(lines[1], INT32_BITS, path=path, line=2)
    if expected < 0:
        raise CheckpointFileError(f"Illegal Capacity: {expected} (a negative entry count)", path=path, line=2)
    entries = [_parse_offset_entry(line, path, number) for number, line in enumerate(lines[2:], start=3)]
    if len(entries) != expected:
        raise CheckpointFileError(
            f"Expected [{expected}] entries in checkpoint file [{path}], but found only [{len(entries)}]",
            path=path,
        )
    return entries


def _parse_offset_entry(line: str, path: str, number: int) -> tuple[TopicPartition, int]:
    parts = _java_split(line)
    if len(parts) != 3:
        raise _malformed(line, path, number)
    topic, partition_text, offset_text = parts
    partition = _entry_number(partition_text, INT32_BITS, "partition", path=path, line=number)
    offset = _entry_number(offset_text, INT64_BITS, "offset", path=path, line=number)
    try:
        return TopicPartition(topic, partition), offset
    except InvalidTopicError as exc:
        raise CheckpointFileError(f"invalid entry {line!r}: {exc}", path=path, line=number) from exc


def _entry_number(text: str, bits: int, what: str, *, path: str, line: int) -> int:
    value = _java_number(text, bits)
    if value is None:
        reason = f'invalid {what}: NumberFormatException: For input string: "{text}"'
        raise CheckpointFileError(reason, path=path, line=line)
    return value


def _java_split(line: str) -> list[str]:
    """``Pattern.split`` with limit 0: trailing empty strings are removed."""
    parts = _JAVA_WHITESPACE.split(line)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _java_int(text: str, bits: int, *, path: str, line: int) -> int:
    value = _java_number(text, bits)
    if value is None:
        raise _malformed(text, path, line)
    return value


def _java_number(text: str, bits: int) -> int | None:
    """``Integer.parseInt`` / ``Long.parseLong``: the value, or ``None`` where Java throws."""
    if not _JAVA_INTEGER.fullmatch(text):
        return None
    value = int(text)
    return value if _fits(value, bits) else None


def _fits(value: int, bits: int) -> bool:
    bound: int = 1 << (bits - 1)
    return -bound <= value < bound


def _malformed(line: str, path: str, number: int) -> CheckpointFileError:
    return CheckpointFileError(f"Malformed line in checkpoint file [{path}]: {line}", path=path, line=number)
