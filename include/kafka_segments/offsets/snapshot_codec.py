"""The JSON form of a consumer-offset snapshot (a public contract), format version 1; the fields and an
example are in docs/retention.md, "Consumer-offset snapshots".

Writing is canonical (sorted groups, offsets, topics and errors; documented field order; UTF-8 with a final
newline): the same snapshot always gives the same bytes, which makes stored snapshots content-addressed.
Reading is strict and every refusal is a ``SnapshotFormatError`` naming the field path
(``groups[1].offsets[0].offset: -5 is negative``; ``offsets/snapshot_fields``). Empty group ids are valid
(``GroupCoordinator.isValidGroupId`` accepts them for offset commits); unknown extra fields are ignored."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from kafka_segments.errors import InvalidTopicError
from kafka_segments.offsets.snapshot_fields import (
    FieldReader,
    SnapshotFormatError,
    UnsupportedSnapshotVersionError,
    decode_document,
    show_value,
)
from kafka_segments.state import (
    GROUP_STATES,
    SNAPSHOT_FORMAT_VERSION,
    CommittedOffset,
    GroupError,
    GroupOffsets,
    GroupType,
    OffsetSnapshot,
)
from kafka_segments.topic_partition import INT32_MAX, validate_topic_name

# ---------------------------------------------------------------------------------------------- writing


def canonical_snapshot(snapshot: OffsetSnapshot) -> OffsetSnapshot:
    """``snapshot`` with groups, offsets, subscribed topics and errors in canonical order (what reading
    the canonical JSON gives back)."""
    groups = tuple(
        replace(
            group,
            subscribed_topics=None
            if group.subscribed_topics is None
            else tuple(sorted(group.subscribed_topics)),
            offsets=tuple(sorted(group.offsets, key=lambda o: (o.topic, o.partition))),
        )
        for group in sorted(snapshot.groups, key=lambda g: g.group_id)
    )
    errors = tuple(sorted(snapshot.errors, key=lambda e: (e.group_id, e.error)))
    return replace(snapshot, groups=groups, errors=errors)


def snapshot_to_dict(snapshot: OffsetSnapshot) -> dict[str, Any]:
    """The canonical JSON document of ``snapshot`` as Python values (field order as in the contract)."""
    canonical = canonical_snapshot(snapshot)
    return {
        "format_version": canonical.format_version,
        "taken_at_ms": canonical.taken_at_ms,
        "source": canonical.source,
        "groups": [_group_to_dict(group) for group in canonical.groups],
        "errors": [{"group_id": error.group_id, "error": error.error} for error in canonical.errors],
    }


def _group_to_dict(group: GroupOffsets) -> dict[str, Any]:
    return {
        "group_id": group.group_id,
        "state": group.state,
        "protocol_type": group.protocol_type,
        "state_timestamp_ms": group.state_timestamp_ms,
        "subscribed_topics": None if group.subscribed_topics is None else list(group.subscribed_topics),
        "offsets": [_offset_to_dict(offset) for offset in group.offsets],
        "group_type": group.group_type.value,
    }


def _offset_to_dict(offset: CommittedOffset) -> dict[str, Any]:
    document: dict[str, Any] = {
        "topic": offset.topic,
        "partition": offset.partition,
        "offset": offset.offset,
        "commit_timestamp_ms": offset.commit_timestamp_ms,
        "expire_timestamp_ms": offset.expire_timestamp_ms,
    }
    if offset.pending_transaction:
        document["pending_transaction"] = True
    return document


def snapshot_to_json(snapshot: OffsetSnapshot) -> bytes:
    """The canonical, deterministic JSON of ``snapshot``: objects one field per line, except offsets and
    errors (one per line); UTF-8 with a final newline.

    Raises:
        SnapshotFormatError: a string that is not valid Unicode (a lone surrogate) cannot be written.
    """
    text = _render(snapshot_to_dict(snapshot), "") + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SnapshotFormatError(
            f"cannot be written as UTF-8: {text[exc.start : exc.end]!r} is not valid Unicode",
            location="snapshot",
        ) from exc


def _render(value: Any, indent: str) -> str:
    """Objects holding a list of objects (the document, a group: also when the list is empty) and lists of
    objects span lines; everything else (an offset, an error, a topic list) is one line of compact JSON."""
    inner = indent + "  "
    if isinstance(value, dict) and any(_holds_objects(v) for v in value.values()):
        fields = [f"{inner}{_inline(name)}: {_render(item, inner)}" for name, item in value.items()]
        return "{\n" + ",\n".join(fields) + "\n" + indent + "}"
    if isinstance(value, list) and value and any(isinstance(v, dict | list) for v in value):
        items = [inner + _render(item, inner) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + indent + "]"
    return _inline(value)


def _holds_objects(value: Any) -> bool:
    return isinstance(value, list) and (not value or any(isinstance(v, dict | list) for v in value))


def _inline(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)


# ---------------------------------------------------------------------------------------------- reading


def snapshot_from_json(data: bytes, *, location: str) -> OffsetSnapshot:
    """Parse and check a snapshot document; the result is in canonical order.

    Raises:
        UnsupportedSnapshotVersionError: ``format_version`` is not 1.
        SnapshotFormatError: anything else wrong, naming ``location`` and the field path.
    """
    top = FieldReader(decode_document(data, location=location, kind="snapshot"), location=location)
    version = top.integer("format_version", minimum=-(2**63))
    if version != SNAPSHOT_FORMAT_VERSION:
        raise UnsupportedSnapshotVersionError(
            f"{version} is not supported; this build reads format_version "
            f"{SNAPSHOT_FORMAT_VERSION} (written by another release of kafka-segments?)",
            location=location,
            field="format_version",
        )
    taken_at_ms = top.integer("taken_at_ms")
    source = top.string("source")
    groups = top.objects("groups", _read_group)
    top.check_unique("groups", (show_value(g.group_id) for g in groups), field="group_id", what="group id")
    errors = top.objects("errors", _read_error)
    top.check_unique("errors", (show_value(e.group_id) for e in errors), field="group_id", what="group id")
    return canonical_snapshot(
        OffsetSnapshot(
            taken_at_ms=taken_at_ms, source=source, groups=groups, errors=errors, format_version=version
        )
    )


_TIMESTAMP_NOTE = " (Kafka's -1 'no timestamp' is written as null)"


def _read_group(reader: FieldReader) -> GroupOffsets:
    group_id = reader.string("group_id", allow_empty=True)
    state = reader.string("state")
    if state not in GROUP_STATES:
        known = ", ".join(GROUP_STATES)
        raise reader.fail("state", f"{show_value(state)} is not a Kafka group state ({known})")
    protocol_type = reader.optional_string("protocol_type")
    state_timestamp_ms = reader.optional_integer("state_timestamp_ms", note=_TIMESTAMP_NOTE)
    subscribed = _read_subscribed_topics(reader)
    offsets = reader.objects("offsets", _read_offset)
    reader.check_unique("offsets", (f"{o.topic}-{o.partition}" for o in offsets), field="", what="partition")
    return GroupOffsets(
        group_id=group_id,
        state=state,
        protocol_type=protocol_type,
        state_timestamp_ms=state_timestamp_ms,
        subscribed_topics=subscribed,
        offsets=offsets,
        group_type=_read_group_type(reader),
    )


def _read_subscribed_topics(reader: FieldReader) -> tuple[str, ...] | None:
    if reader.is_null("subscribed_topics"):
        return None
    topics = reader.array("subscribed_topics")
    for index, topic in enumerate(topics):
        _check_topic(reader, f"subscribed_topics[{index}]", topic)
    reader.check_unique("subscribed_topics", (show_value(t) for t in topics), field="", what="topic")
    return tuple(topics)


def _read_group_type(reader: FieldReader) -> GroupType:
    if not reader.has("group_type"):
        return GroupType.CLASSIC
    value = reader.string("group_type")
    try:
        return GroupType(value)
    except ValueError:
        names = ", ".join(t.value for t in GroupType)
        raise reader.fail("group_type", f"{show_value(value)} is not a group type ({names})") from None


def _check_topic(reader: FieldReader, name: str, topic: object) -> None:
    if not isinstance(topic, str):
        raise reader.fail(name, f"expected a topic name, found {show_value(topic)}")
    try:
        validate_topic_name(topic)
    except InvalidTopicError as exc:
        raise reader.fail(name, str(exc)) from exc


def _read_offset(reader: FieldReader) -> CommittedOffset:
    topic = reader.string("topic", allow_empty=True)
    _check_topic(reader, "topic", topic)
    return CommittedOffset(
        topic=topic,
        partition=reader.integer("partition", maximum=INT32_MAX),
        offset=reader.integer("offset"),
        commit_timestamp_ms=reader.optional_integer("commit_timestamp_ms", note=_TIMESTAMP_NOTE),
        expire_timestamp_ms=reader.optional_integer("expire_timestamp_ms", note=_TIMESTAMP_NOTE),
        pending_transaction=reader.boolean("pending_transaction", default=False),
    )


def _read_error(reader: FieldReader) -> GroupError:
    return GroupError(group_id=reader.string("group_id", allow_empty=True), error=reader.string("error"))


def load_snapshot_file(path: str | Path) -> OffsetSnapshot:
    """Read a snapshot JSON file (the file source of ``offsets snapshot``, and ``run --offsets``).

    Raises:
        SnapshotFormatError: the file cannot be read (missing, a directory, no permission) or is not a valid
            snapshot; the message names the path.
    """
    location = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SnapshotFormatError(
            f"cannot read the snapshot file: {exc.strerror or exc}", location=location
        ) from exc
    return snapshot_from_json(data, location=location)
