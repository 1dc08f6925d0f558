"""Where everything lives in a lake (docs/lake.md, "Layout"), as object keys relative to the lake root.

Objects this project writes carry the run id in their name, so a committed object is never overwritten and
the objects of a failed run can be found and swept."""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass

from kafka_segments.clock import wall_clock_ms
from kafka_segments.errors import InvalidFileNameError, InvalidRunIdError, InvalidTopicError
from kafka_segments.segment.files import OFFSET_DIGITS, FileKind, filename_prefix
from kafka_segments.topic_partition import TopicPartition

META_PREFIX = "_kafka_segments/"
MANIFESTS_PREFIX = META_PREFIX + "manifests/"
RUNS_PREFIX = META_PREFIX + "runs/"
LOG_START_OFFSET_CHECKPOINT_KEY = "log-start-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT_KEY = "cleaner-offset-checkpoint"
CHECKPOINT_KEYS = (LOG_START_OFFSET_CHECKPOINT_KEY, CLEANER_OFFSET_CHECKPOINT_KEY)

RUN_RECORD_NAME = "run.json"
STAGED_MANIFEST_NAME = "manifest.json"
OUTCOME_NAME = "outcome.json"

INDEX_KINDS = (FileKind.INDEX, FileKind.TIME_INDEX, FileKind.TXN_INDEX)
"""The accelerator files that travel with a segment's ``.log`` (and are deleted with it)."""

# Matched with fullmatch: ``$`` would accept a trailing newline, and ``\d`` without ASCII any Unicode digit.
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_MANIFEST_NAME = re.compile(r"([0-9]{20})\.json")
_SEGMENT_NAME = re.compile(r"([0-9]{20})(?:-([A-Za-z0-9][A-Za-z0-9_-]{0,99}))?(\.[a-z]+)")
_KINDS = {kind.value: kind for kind in FileKind}


def validate_run_id(run_id: str) -> str:
    """``run_id`` if it is usable in object names, else ``InvalidRunIdError``."""
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise InvalidRunIdError(
            f"invalid run id {run_id!r}: use 1-100 characters of [A-Za-z0-9_-], starting with a letter/digit",
            location="run id",
        )
    return run_id


def new_run_id(*, wall_ms: int | None = None) -> str:
    """A fresh run id: the UTC wall time and 8 random hex digits (``20261121T093000Z-1f2e3d4c``)."""
    seconds = (wall_clock_ms() if wall_ms is None else wall_ms) / 1000
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(seconds)) + "-" + secrets.token_hex(4)


def manifest_key(version: int) -> str:
    """The key of manifest ``version`` (versions start at 1)."""
    if version < 1:
        raise ValueError(f"manifest versions start at 1, got {version}")
    return f"{MANIFESTS_PREFIX}{filename_prefix(version)}.json"


def parse_manifest_key(key: str) -> int | None:
    """The version a manifest key names, or ``None`` when ``key`` is not a manifest key."""
    if not key.startswith(MANIFESTS_PREFIX):
        return None
    match = _MANIFEST_NAME.fullmatch(key[len(MANIFESTS_PREFIX) :])
    if match is None:
        return None
    version = int(match.group(1))
    return version if version >= 1 else None


def run_prefix(run_id: str) -> str:
    return f"{RUNS_PREFIX}{validate_run_id(run_id)}/"


def run_record_key(run_id: str) -> str:
    return run_prefix(run_id) + RUN_RECORD_NAME


def staged_manifest_key(run_id: str) -> str:
    return run_prefix(run_id) + STAGED_MANIFEST_NAME


def outcome_key(run_id: str) -> str:
    return run_prefix(run_id) + OUTCOME_NAME


def parse_run_record_key(key: str) -> str | None:
    """The run id of a ``run.json`` key, else ``None``."""
    parsed = parse_run_folder_key(key)
    return parsed[0] if parsed is not None and parsed[1] == RUN_RECORD_NAME else None


def parse_run_folder_key(key: str) -> tuple[str, str] | None:
    """The run id and the path inside the folder of a key in a run's folder (``runs/<run id>/<path>``),
    else ``None``."""
    if not key.startswith(RUNS_PREFIX):
        return None
    run_id, slash, path = key[len(RUNS_PREFIX) :].partition("/")
    if not slash or not path or not _RUN_ID.fullmatch(run_id):
        return None
    return run_id, path


@dataclass(frozen=True, slots=True)
class SegmentObjectName:
    """A parsed segment object key: ``<topic>-<partition>/<20-digit base>[-<run id>]<kind>``.

    ``run_id`` is ``None`` for Kafka's plain names (objects that come from outside and get adopted) and the
    writing run for objects this project wrote."""

    topic_partition: TopicPartition
    base_offset: int
    kind: FileKind
    run_id: str | None = None

    @property
    def key(self) -> str:
        return segment_key(self.topic_partition, self.base_offset, self.kind, run_id=self.run_id)

    @property
    def is_plain(self) -> bool:
        return self.run_id is None


def segment_key(
    topic_partition: TopicPartition,
    base_offset: int,
    kind: FileKind = FileKind.LOG,
    *,
    run_id: str | None = None,
) -> str:
    """``<topic>-<partition>/<base>[-<run id>]<kind>``: Kafka's name, or a written object's unique name."""
    stem = filename_prefix(base_offset)
    if run_id is not None:
        stem += "-" + validate_run_id(run_id)
    return f"{topic_partition.dir_name}/{stem}{kind.value}"


def parse_segment_file_name(name: str) -> tuple[int, FileKind, str | None] | None:
    """``(base offset, kind, run id or None)`` of a segment file name, or ``None`` when it is not one."""
    match = _SEGMENT_NAME.fullmatch(name)
    if match is None or match.group(3) not in _KINDS:
        return None
    return int(match.group(1)), _KINDS[match.group(3)], match.group(2)


def parse_segment_key(key: str) -> SegmentObjectName:
    """Parse a segment object key.

    Raises:
        InvalidFileNameError: ``key`` is not ``<partition dir>/<segment file name>``.
        InvalidTopicError: the partition directory names a topic Kafka would not allow.
    """
    directory, _, name = key.rpartition("/")
    if not directory or "/" in directory:
        raise InvalidFileNameError(f"{key!r} is not <topic>-<partition>/<segment file>")
    parsed = parse_segment_file_name(name)
    if parsed is None:
        raise InvalidFileNameError(
            f"{key!r}: {name!r} is not a segment file name (<20-digit offset>[-<run>].<kind>)"
        )
    base_offset, kind, run_id = parsed
    topic_partition = TopicPartition.from_dir_name(directory)
    return SegmentObjectName(
        topic_partition=topic_partition, base_offset=base_offset, kind=kind, run_id=run_id
    )


def try_parse_segment_key(key: str) -> SegmentObjectName | None:
    """``parse_segment_key`` that returns ``None`` instead of raising."""
    try:
        return parse_segment_key(key)
    except (InvalidFileNameError, InvalidTopicError):
        return None


def index_keys(log_key: str) -> tuple[str, ...]:
    """The keys of the ``.index``, ``.timeindex`` and ``.txnindex`` objects that belong to ``log_key``."""
    if not log_key.endswith(FileKind.LOG.value):
        raise InvalidFileNameError(f"{log_key!r} is not a .log key")
    stem = log_key[: -len(FileKind.LOG.value)]
    return tuple(stem + kind.value for kind in INDEX_KINDS)


def is_meta_key(key: str) -> bool:
    """Keys under ``_kafka_segments/`` belong to the lake's own bookkeeping."""
    return key.startswith(META_PREFIX)


__all__ = [
    "CHECKPOINT_KEYS",
    "CLEANER_OFFSET_CHECKPOINT_KEY",
    "INDEX_KINDS",
    "LOG_START_OFFSET_CHECKPOINT_KEY",
    "MANIFESTS_PREFIX",
    "META_PREFIX",
    "OFFSET_DIGITS",
    "RUNS_PREFIX",
    "SegmentObjectName",
    "index_keys",
    "is_meta_key",
    "manifest_key",
    "new_run_id",
    "outcome_key",
    "parse_manifest_key",
    "parse_run_folder_key",
    "parse_run_record_key",
    "parse_segment_key",
    "run_prefix",
    "run_record_key",
    "segment_key",
    "staged_manifest_key",
    "try_parse_segment_key",
    "validate_run_id",
]
