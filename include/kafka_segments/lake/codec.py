"""JSON form of the lake's persisted files (manifests; run records use the same field readers).

The format is docs/lake.md, "The manifest (format version 1)". Every file is a JSON object whose first field
is ``format_version``. Reading is strict: anything else wrong (not UTF-8 JSON, a missing or mistyped field,
a broken invariant) is a ``ManifestFormatError`` / ``UnsupportedFormatVersionError`` naming the object and
the field. Unknown extra fields are ignored, so a later release may add fields without a new format version.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any, TypeVar

from kafka_segments.lake.json_document import Reader, dump_json, load_document
from kafka_segments.lake.layout import parse_segment_file_name, try_parse_segment_key
from kafka_segments.segment.files import FileKind
from kafka_segments.state import (
    MANIFEST_FORMAT_2,
    MANIFEST_FORMAT_VERSION,
    MANIFEST_FORMATS,
    Manifest,
    OpenTransaction,
    PartitionState,
    RetiredObject,
    SegmentEntry,
    SegmentOrigin,
)
from kafka_segments.topic_partition import TopicPartition

T = TypeVar("T")
E = TypeVar("E", bound=Enum)


# ---------------------------------------------------------------------------------------------- writing


def manifest_to_json(manifest: Manifest) -> bytes:
    """The manifest as compact, deterministic UTF-8 JSON, all in one object (format 1's layout; a manifest
    whose commit writes format 2 says so in ``commit_format``: a run's staged copy of it)."""
    document = {
        "format_version": MANIFEST_FORMAT_VERSION,
        **version_fields(manifest),
        "partitions": [partition_to_dict(state) for state in manifest.partitions],
        "retired": [retired_to_dict(retired) for retired in manifest.retired],
    }
    if manifest.format_version != MANIFEST_FORMAT_VERSION:
        document["commit_format"] = manifest.format_version
    if manifest.carries_parent:
        document["carries_parent"] = True
    return dump_json(document)


def version_fields(manifest: Manifest) -> dict[str, Any]:
    """A version's own fields, in either format's document."""
    return {
        "version": manifest.version,
        "parent_version": manifest.parent_version,
        "run_id": manifest.run_id,
        "operation": manifest.operation,
        "committed_at_ms": manifest.committed_at_ms,
        "now_ms": manifest.now_ms,
    }


def partition_to_dict(state: PartitionState) -> dict[str, Any]:
    return {**partition_fields(state), "segments": [segment_to_dict(segment) for segment in state.segments]}


def partition_fields(state: PartitionState) -> dict[str, Any]:
    """A partition's own fields, without its segments (format 2 keeps those in chunks)."""
    return {
        "topic": state.topic_partition.topic,
        "partition": state.topic_partition.partition,
        "log_start_offset": state.log_start_offset,
        "log_end_offset": state.log_end_offset,
        "cleaner_checkpoint": state.cleaner_checkpoint,
        "run_id": state.run_id,
        "open_transactions": [open_transaction_to_dict(t) for t in state.open_transactions],
    }


def open_transaction_to_dict(txn: OpenTransaction) -> dict[str, Any]:
    fields = {
        "producer_id": txn.producer_id,
        "producer_epoch": txn.producer_epoch,
        "first_offset": txn.first_offset,
    }
    # added later (optional): absent when unknown, so a state read from an older manifest is written as it was
    return fields if txn.last_offset is None else {**fields, "last_offset": txn.last_offset}


def segment_to_dict(segment: SegmentEntry) -> dict[str, Any]:
    fields = {
        "key": segment.key,
        "base_offset": segment.base_offset,
        "last_offset": segment.last_offset,
        "size": segment.size,
        "sha256": segment.sha256,
        "etag": segment.etag,
        "record_count": segment.record_count,
        "batch_count": segment.batch_count,
        "max_timestamp_ms": segment.max_timestamp_ms,
        "first_batch_max_timestamp_ms": segment.first_batch_max_timestamp_ms,
        "last_modified_ms": segment.last_modified_ms,
        "origin": segment.origin.value,
        "run_id": segment.run_id,
    }
    # added later (optional): absent when unknown, so a state read from an older manifest is written as it was
    pins = {"time_index_sha256": segment.time_index_sha256, "index_sha256": segment.index_sha256}
    return fields | {name: pin for name, pin in pins.items() if pin is not None}


def retired_to_dict(retired: RetiredObject) -> dict[str, Any]:
    return {
        "key": retired.key,
        "topic": retired.topic_partition.topic,
        "partition": retired.topic_partition.partition,
        "retired_in_version": retired.retired_in_version,
        "retired_at_ms": retired.retired_at_ms,
        "delete_delay_ms": retired.delete_delay_ms,
        "reason": retired.reason,
    }


# ---------------------------------------------------------------------------------------------- reading


def manifest_from_json(data: bytes, *, location: str) -> Manifest:
    """Parse and check a manifest.

    Raises:
        UnsupportedFormatVersionError: an unknown ``format_version``.
        ManifestFormatError: anything else wrong, naming the field.
    """
    reader = load_document(data, location=location, supported=MANIFEST_FORMAT_VERSION, kind="manifest")
    return manifest_from_reader(reader, partitions=reader.objects("partitions", read_partition))


def manifest_from_reader(reader: Reader, *, partitions: tuple[PartitionState, ...]) -> Manifest:
    """A manifest's version fields from ``reader`` (a format 1 manifest or a format 2 root) with its
    ``partitions`` (read from the same object, or from a root's pieces)."""
    version = reader.integer("version", minimum=1)
    parent = reader.optional_integer("parent_version", minimum=1)
    if (parent is None) != (version == 1) or (parent is not None and parent != version - 1):
        raise reader.fail(
            "parent_version", f"version {version} must have parent {version - 1 or None}, found {parent}"
        )
    check_partition_order(reader, [state.topic_partition for state in partitions])
    return Manifest(
        version=version,
        parent_version=parent,
        run_id=reader.string("run_id"),
        operation=reader.string("operation"),
        committed_at_ms=reader.integer("committed_at_ms"),
        now_ms=reader.integer("now_ms"),
        partitions=partitions,
        retired=reader.objects("retired", read_retired),
        format_version=_commit_format(reader),
        carries_parent=_carries_parent(reader),
    )


def _carries_parent(reader: Reader) -> bool:
    """A staged format 2 proposal of some partitions only (``Manifest.carries_parent``)."""
    carries = reader.optional_boolean("carries_parent", default=False)
    staged = reader.integer("format_version") == MANIFEST_FORMAT_VERSION
    if carries and not (staged and _commit_format(reader) == MANIFEST_FORMAT_2):
        raise reader.fail("carries_parent", "only a run's proposal in format 2 may carry its parent")
    return carries


def _commit_format(reader: Reader) -> int:
    """The format a manifest is (or, for a run's staged copy in format 1's layout, is to be) committed in."""
    stored = reader.integer("format_version")
    later = reader.later_integer("commit_format", minimum=MANIFEST_FORMAT_VERSION)
    if later is not None and later not in MANIFEST_FORMATS:
        raise reader.fail("commit_format", f"unknown manifest format {later}")
    return stored if later is None else later


def check_partition_order(reader: Reader, partitions: Sequence[TopicPartition]) -> None:
    """Partitions listed once each, sorted by topic and partition (failing on ``reader``'s object)."""
    seen: set[TopicPartition] = set()
    for topic_partition in partitions:
        if topic_partition in seen:
            raise reader.fail("partitions", f"{topic_partition} is listed twice")
        seen.add(topic_partition)
    order = [(tp.topic, tp.partition) for tp in partitions]
    if order != sorted(order):
        raise reader.fail("partitions", "not sorted by topic and partition")


def read_partition(reader: Reader) -> PartitionState:
    topic_partition = reader.topic_partition()
    log_start = reader.integer("log_start_offset", minimum=0)
    log_end = reader.integer("log_end_offset", minimum=0)
    segments = reader.objects("segments", read_segment)
    state = PartitionState(
        topic_partition=topic_partition,
        log_start_offset=log_start,
        log_end_offset=log_end,
        segments=segments,
        cleaner_checkpoint=reader.optional_integer("cleaner_checkpoint", minimum=0),
        open_transactions=reader.objects("open_transactions", read_open_transaction),
        run_id=reader.string("run_id"),
    )
    check_partition(reader, state)
    return state


def check_partition(reader: Reader, state: PartitionState) -> None:
    """The invariants of a partition's state (its log offsets and segments), failing on ``reader``'s
    object."""
    if state.log_start_offset > state.log_end_offset:
        raise reader.fail(
            "log_start_offset", f"{state.log_start_offset} is above log_end_offset {state.log_end_offset}"
        )
    _check_segments(reader, state.topic_partition, state.segments, state.log_end_offset)


def _check_segments(
    reader: Reader, topic_partition: TopicPartition, segments: tuple[SegmentEntry, ...], log_end: int
) -> None:
    prefix = topic_partition.dir_name + "/"
    previous: SegmentEntry | None = None
    for index, segment in enumerate(segments):
        name = f"segments[{index}]"
        if not segment.key.startswith(prefix) or "/" in segment.key[len(prefix) :]:
            raise reader.fail(name, f"key {segment.key!r} is not in the partition folder {prefix!r}")
        # the folder is the partition's (checked above): only the file name is left to parse
        parsed = parse_segment_file_name(segment.key[len(prefix) :])
        if parsed is None or parsed[1] is not FileKind.LOG:
            raise reader.fail(name, f"key {segment.key!r} is not a segment .log name")
        if parsed[0] != segment.base_offset:
            raise reader.fail(
                name, f"key {segment.key!r} names base offset {parsed[0]}, not {segment.base_offset}"
            )
        if previous is not None and (
            segment.base_offset <= previous.base_offset or segment.base_offset < previous.next_offset
        ):
            raise reader.fail(name, f"base offset {segment.base_offset} overlaps the previous segment")
        previous = segment
    if segments and segments[-1].next_offset > log_end:
        raise reader.fail("log_end_offset", f"{log_end} is below the last segment's next offset")


def read_segment(reader: Reader) -> SegmentEntry:
    base = reader.integer("base_offset", minimum=0)
    last = reader.optional_integer("last_offset", minimum=base)
    return SegmentEntry(
        key=reader.string("key"),
        base_offset=base,
        last_offset=last,
        size=reader.integer("size", minimum=0),
        sha256=reader.string("sha256"),
        etag=reader.string("etag", allow_empty=True),
        record_count=reader.integer("record_count", minimum=0),
        batch_count=reader.integer("batch_count", minimum=0),
        max_timestamp_ms=reader.integer("max_timestamp_ms"),
        first_batch_max_timestamp_ms=reader.integer("first_batch_max_timestamp_ms"),
        last_modified_ms=reader.integer("last_modified_ms"),
        origin=reader.choice("origin", SegmentOrigin),
        run_id=reader.string("run_id"),
        time_index_sha256=reader.later_string("time_index_sha256"),
        index_sha256=reader.later_string("index_sha256"),
    )


def read_open_transaction(reader: Reader) -> OpenTransaction:
    # last_offset may be below first_offset: a log start offset inside the transaction clamps the latter
    return OpenTransaction(
        producer_id=reader.integer("producer_id", minimum=0),
        producer_epoch=reader.integer("producer_epoch"),
        first_offset=reader.integer("first_offset", minimum=0),
        last_offset=reader.later_integer("last_offset", minimum=0),
    )


def read_retired(reader: Reader) -> RetiredObject:
    key = reader.string("key")
    topic_partition = reader.topic_partition()
    parsed = try_parse_segment_key(key)
    if parsed is None or parsed.kind is not FileKind.LOG or parsed.topic_partition != topic_partition:
        # gc deletes this key and its index objects: it must be a segment of the partition, nothing else.
        raise reader.fail("key", f"{key!r} is not a segment .log key of partition {topic_partition}")
    return RetiredObject(
        key=key,
        topic_partition=topic_partition,
        retired_in_version=reader.integer("retired_in_version", minimum=1),
        retired_at_ms=reader.integer("retired_at_ms"),
        delete_delay_ms=reader.integer("delete_delay_ms", minimum=0),
        reason=reader.string("reason"),
    )
