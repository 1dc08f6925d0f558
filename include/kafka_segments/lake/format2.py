"""Manifest format 2 (docs/metadata-format-2.md): a small root per version, at format 1's key, that names one
immutable partition manifest per partition; a partition manifest names its segments' chunks (immutable, up
to ``CHUNK_MAX`` entries). A commit writes the pieces of the partitions it changed, then the root: what it
writes follows what changed, not the size of the lake. This module owns ``_kafka_segments/partitions/``.

A piece is named ``<sha256 of its bytes>-<run id>.json``: readers check the bytes against the name, and the
run id makes a piece an object of the run that wrote it, swept like that run's segments when it cannot
commit (``lake.sweep``). A later version reuses a piece by reference only (the parent root's line for an
unchanged partition, the parent partition manifest's chunk for an unchanged chunk), never by finding an
object of the same content, so gc never races a writer over a piece.

The entries inside the pieces are format 1's (``lake.codec``): the same fields, the same checks."""

from __future__ import annotations

import contextlib
import hashlib
import re
import zlib
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kafka_segments.errors import ManifestFormatError, ObjectAlreadyExistsError
from kafka_segments.lake.codec import (
    check_partition,
    partition_fields,
    partition_to_dict,
    read_open_transaction,
    read_segment,
    retired_to_dict,
    segment_to_dict,
    version_fields,
)
from kafka_segments.lake.json_document import Reader, dump_json, load_document
from kafka_segments.lake.layout import META_PREFIX, manifest_key
from kafka_segments.state import (
    MANIFEST_FORMAT_2,
    MANIFEST_FORMATS,
    Manifest,
    PartitionState,
    PartitionSummary,
    SegmentEntry,
    summarize,
)
from kafka_segments.storage.base import Create, ObjectStore
from kafka_segments.topic_partition import TopicPartition

FORMAT_2 = MANIFEST_FORMAT_2
PIECES_PREFIX = META_PREFIX + "partitions/"
CHUNK_MAX = 1024
"""At most this many segment entries in a chunk."""
CHUNK_CUT = 512
"""A chunk ends after a segment whose base offset's CRC-32 is a multiple of this (so ~512 entries a chunk on
average): a boundary depends on that segment only, so appending, deleting from the head or rewriting some
segments leaves every other chunk as it was."""
READ_WORKERS = 16
_PIECE_NAME = re.compile(r"([0-9a-f]{64})-([A-Za-z0-9][A-Za-z0-9_-]{0,99})\.json")


@dataclass(frozen=True, slots=True)
class Piece:
    key: str
    data: bytes


def is_piece_key(key: str) -> bool:
    return key.startswith(PIECES_PREFIX)


def piece_run_id(key: str) -> str | None:
    """The run that wrote a piece (``None``: not a piece's key)."""
    if not key.startswith(PIECES_PREFIX):
        return None
    match = _PIECE_NAME.fullmatch(key.rsplit("/", 1)[-1])
    return None if match is None else match.group(2)


def _piece(topic_partition: TopicPartition, data: bytes, run_id: str, *, chunk: bool) -> Piece:
    folder = f"{PIECES_PREFIX}{topic_partition.dir_name}/" + ("chunks/" if chunk else "")
    return Piece(f"{folder}{hashlib.sha256(data).hexdigest()}-{run_id}.json", data)


def state_sha256(state: PartitionState) -> str:
    """What a partition's state is, independent of where its pieces are (a root line's ``state_sha256``)."""
    return hashlib.sha256(dump_json(partition_to_dict(state))).hexdigest()


# ---------------------------------------------------------------------------------------------- writing


@dataclass(frozen=True, slots=True)
class _Parent:
    """What a commit may reuse of its parent version: its root lines and, read on demand, the chunks of a
    partition manifest."""

    store: ObjectStore
    lines: Mapping[TopicPartition, Mapping[str, Any]]

    def chunks(self, topic_partition: TopicPartition) -> dict[str, str]:
        """The parent's chunks of a partition, by content sha256: their keys."""
        line = self.lines.get(topic_partition)
        if line is None:
            return {}
        refs = _read_piece(self.store, str(line["manifest"])).objects("chunks", _chunk_ref)
        return {sha: key for key, sha in refs}


def write_version(
    store: ObjectStore,
    manifest: Manifest,
    *,
    parent_lines: Mapping[TopicPartition, Mapping[str, Any]] | None = None,
) -> bytes:
    """Write the pieces of the partitions ``manifest`` changed since its parent (create-if-absent: a retried
    commit finds its own pieces) and return the root for the commit's conditional PUT. Reads the parent's
    root (unless ``parent_lines`` gives its lines, already read) and the partition manifest of each changed
    partition: reads and writes follow what changed."""
    if parent_lines is None:
        parent = _read_parent(store, manifest.parent_version, carrying=manifest.carries_parent)
    else:
        parent = _Parent(store, parent_lines)
    lines = [_line(store, state, manifest.run_id, parent) for state in manifest.partitions]
    if manifest.carries_parent:
        lines = _with_carried(lines, parent)
    return root_bytes(manifest, lines)


def root_bytes(manifest: Manifest, lines: Sequence[Mapping[str, Any]]) -> bytes:
    """The root of ``manifest`` (its own fields and retired objects; its ``partitions`` are not looked at)
    naming the partitions of ``lines``, in the manifest's order."""
    root = {
        "format_version": FORMAT_2,
        **version_fields(manifest),
        "partitions": list(lines),
        "retired": [retired_to_dict(retired) for retired in manifest.retired],
    }
    return dump_json(root)


def write_partition(store: ObjectStore, state: PartitionState, run_id: str) -> dict[str, Any]:
    """Write the pieces of a partition no parent version has (create-if-absent) and return its root line:
    a bootstrap writes its partitions one at a time (``lake.bootstrap``)."""
    return _line(store, state, run_id, _Parent(store, {}))


def _with_carried(lines: list[dict[str, Any]], parent: _Parent) -> list[dict[str, Any]]:
    """``lines`` plus the parent's lines of every other partition, as they are, in the manifest's order."""
    written = {TopicPartition(str(line["topic"]), int(line["partition"])) for line in lines}
    carried = [dict(line) for tp, line in parent.lines.items() if tp not in written]
    return sorted([*lines, *carried], key=lambda line: (str(line["topic"]), int(line["partition"])))


def _read_parent(store: ObjectStore, version: int | None, *, carrying: bool) -> _Parent:
    if version is None:
        if carrying:
            raise ValueError("a proposal that carries its parent's partitions needs a parent")
        return _Parent(store, {})
    key = manifest_key(version)
    reader = load_document(
        store.get(key), location=store.location(key), supported=MANIFEST_FORMATS, kind="manifest"
    )
    if reader.integer("format_version") != FORMAT_2:
        if carrying:
            raise ManifestFormatError(
                "a proposal that carries its parent's partitions needs a format 2 parent",
                location=reader.location,
            )
        return _Parent(store, {})
    return _Parent(store, {line.topic_partition: line.document for line in root_lines(reader)})


def _line(store: ObjectStore, state: PartitionState, run_id: str, parent: _Parent) -> dict[str, Any]:
    sha = state_sha256(state)
    before = parent.lines.get(state.topic_partition)
    if before is not None and before.get("state_sha256") == sha:
        return dict(before)  # unchanged: the parent's pieces, read and written by nobody
    known = parent.chunks(state.topic_partition) if before is not None else {}
    refs = [
        _write_chunk(store, state.topic_partition, part, run_id, known) for part in cut_chunks(state.segments)
    ]
    manifest = _piece(state.topic_partition, _partition_bytes(state, refs), run_id, chunk=False)
    _create(store, manifest)
    return {
        "topic": state.topic_partition.topic,
        "partition": state.topic_partition.partition,
        "manifest": manifest.key,
        "chunks": len(refs),
        "state_sha256": sha,
        "summary": summarize(state).to_dict(),
    }


def cut_chunks(segments: Sequence[SegmentEntry]) -> list[Sequence[SegmentEntry]]:
    chunks: list[Sequence[SegmentEntry]] = []
    start = 0
    for index, segment in enumerate(segments):
        size = index + 1 - start
        if size >= CHUNK_MAX or zlib.crc32(segment.base_offset.to_bytes(8, "big")) % CHUNK_CUT == 0:
            chunks.append(segments[start : index + 1])
            start = index + 1
    if start < len(segments):
        chunks.append(segments[start:])
    return chunks


def _write_chunk(
    store: ObjectStore,
    topic_partition: TopicPartition,
    segments: Sequence[SegmentEntry],
    run_id: str,
    known: Mapping[str, str],
) -> dict[str, Any]:
    data = dump_json(
        {
            "format_version": FORMAT_2,
            "topic": topic_partition.topic,
            "partition": topic_partition.partition,
            "segments": [segment_to_dict(segment) for segment in segments],
        }
    )
    sha = hashlib.sha256(data).hexdigest()
    key = known.get(sha)
    if key is None:
        piece = _piece(topic_partition, data, run_id, chunk=True)
        _create(store, piece)
        key = piece.key
    return {
        "key": key,
        "first_base_offset": segments[0].base_offset,
        "last_base_offset": segments[-1].base_offset,
        "segments": len(segments),
        "bytes": sum(segment.size for segment in segments),
    }


def _partition_bytes(state: PartitionState, chunks: Sequence[Mapping[str, Any]]) -> bytes:
    return dump_json({"format_version": FORMAT_2, **partition_fields(state), "chunks": list(chunks)})


def _create(store: ObjectStore, piece: Piece) -> None:
    """Create-if-absent: a piece that exists is this run's, with these bytes (its name says both)."""
    with contextlib.suppress(ObjectAlreadyExistsError):
        store.put(piece.key, piece.data, mode=Create())


# ---------------------------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class RootLine:
    topic_partition: TopicPartition
    manifest_key: str
    summary: PartitionSummary
    document: Mapping[str, Any]
    chunks: int | None = None
    """How many chunks the partition manifest names (``None``: a root written before the field)."""


def root_lines(reader: Reader) -> tuple[RootLine, ...]:
    """The partition lines of a format 2 root (``load_document`` checked its version)."""
    return reader.objects("partitions", _root_line)


def _root_line(reader: Reader) -> RootLine:
    topic_partition = reader.topic_partition()
    key = reader.string("manifest")
    folder = f"{PIECES_PREFIX}{topic_partition.dir_name}/"
    if not key.startswith(folder) or "/" in key[len(folder) :] or piece_run_id(key) is None:
        raise reader.fail("manifest", f"{key!r} is not a partition manifest of {topic_partition}")
    reader.string("state_sha256")
    summary = reader.later_object("summary")
    if summary is None:
        raise reader.fail("summary", "missing")
    chunks = reader.later_integer("chunks", minimum=0)
    return RootLine(topic_partition, key, _summary(summary), reader.raw(), chunks)


def _summary(reader: Reader) -> PartitionSummary:
    log_start = reader.integer("log_start_offset", minimum=0)
    log_end = reader.integer("log_end_offset", minimum=0)
    if log_start > log_end:
        raise reader.fail("log_start_offset", f"{log_start} is above log_end_offset {log_end}")
    return PartitionSummary(
        log_start_offset=log_start,
        log_end_offset=log_end,
        cleaner_checkpoint=reader.optional_integer("cleaner_checkpoint", minimum=0),
        segments=reader.integer("segments", minimum=0),
        bytes=reader.integer("bytes", minimum=0),
        first_segment_next_offset=reader.optional_integer("first_segment_next_offset", minimum=0),
        first_segment_max_timestamp_ms=reader.optional_integer("first_segment_max_timestamp_ms", minimum=-1),
        newest_key=reader.optional_string("newest_key"),
        first_segment_base_offset=reader.later_integer("first_segment_base_offset", minimum=0),
        first_segment_last_offset=reader.later_integer("first_segment_last_offset", minimum=0),
        first_segment_bytes=reader.later_integer("first_segment_bytes", minimum=0),
        first_segment_largest_timestamp_ms=reader.later_integer("first_segment_largest_timestamp_ms"),
        live_sha256=reader.later_string("live_sha256"),
        record_count=reader.later_integer("record_count", minimum=0),
        largest_timestamp_min_ms=reader.later_integer("largest_timestamp_min_ms"),
        largest_timestamp_max_ms=reader.later_integer("largest_timestamp_max_ms"),
        last_stable_offset=reader.later_integer("last_stable_offset", minimum=0),
        open_transactions=reader.later_integer("open_transactions", minimum=0),
        run_id=reader.later_string("run_id"),
        active_base_offset=reader.later_integer("active_base_offset", minimum=0),
        tail_sha256=reader.optional_string("tail_sha256"),
    )


def read_partitions(
    store: ObjectStore, lines: Sequence[RootLine], *, referenced: set[str] | None = None
) -> tuple[PartitionState, ...]:
    """The partitions a root names, each read from its pieces (concurrently), every piece checked against
    the sha256 its name carries. ``referenced`` collects the pieces' keys (gc)."""
    if not lines:
        return ()
    with ThreadPoolExecutor(max_workers=min(READ_WORKERS, len(lines))) as pool:
        return tuple(pool.map(lambda line: _read_partition(store, line, referenced), lines))


def _read_partition(store: ObjectStore, line: RootLine, referenced: set[str] | None) -> PartitionState:
    reader = _read_piece(store, line.manifest_key)
    if reader.topic_partition() != line.topic_partition:
        raise reader.fail("topic", f"the manifest of {line.topic_partition} names another partition")
    chunk_keys = [key for key, _ in reader.objects("chunks", _chunk_ref)]
    if line.chunks is not None and line.chunks != len(chunk_keys):
        raise reader.fail("chunks", f"names {len(chunk_keys)} chunks, the root's line says {line.chunks}")
    segments: list[SegmentEntry] = []
    for key in chunk_keys:
        if not key.startswith(f"{PIECES_PREFIX}{line.topic_partition.dir_name}/chunks/"):
            raise reader.fail("chunks", f"{key!r} is not a chunk of {line.topic_partition}")
        segments.extend(_read_piece(store, key).objects("segments", read_segment))
    if referenced is not None:
        referenced.update((line.manifest_key, *chunk_keys))
    state = PartitionState(
        topic_partition=line.topic_partition,
        log_start_offset=reader.integer("log_start_offset", minimum=0),
        log_end_offset=reader.integer("log_end_offset", minimum=0),
        segments=tuple(segments),
        cleaner_checkpoint=reader.optional_integer("cleaner_checkpoint", minimum=0),
        open_transactions=reader.objects("open_transactions", read_open_transaction),
        run_id=reader.string("run_id"),
    )
    check_partition(reader, state)
    if not _summary_agrees(line, state):
        raise ManifestFormatError(
            f"field 'summary' of {line.topic_partition} does not match its partition manifest "
            f"{line.manifest_key}",
            location=reader.location,
        )
    return state


def _summary_agrees(line: RootLine, state: PartitionState) -> bool:
    """Whether the root's summary says what the partition's pieces say (a field a root written before it
    lacks is not compared)."""
    recorded = line.document.get("summary")
    computed = summarize(state).to_dict()
    if not isinstance(recorded, dict):
        return False
    return all(recorded.get(name) == value for name, value in computed.items() if name in recorded)


def _chunk_ref(reader: Reader) -> tuple[str, str]:
    """A chunk's key and the sha256 of its bytes (the first part of its name)."""
    key = reader.string("key")
    match = _PIECE_NAME.fullmatch(key.rsplit("/", 1)[-1])
    if match is None:
        raise reader.fail("key", f"{key!r} is not a chunk's name")
    return key, match.group(1)


def _read_piece(store: ObjectStore, key: str) -> Reader:
    data = store.get(key)
    location = store.location(key)
    match = _PIECE_NAME.fullmatch(key.rsplit("/", 1)[-1])
    if match is None or match.group(1) != hashlib.sha256(data).hexdigest():
        raise ManifestFormatError(
            "the object's bytes do not have the sha256 its name carries (changed after it was written)",
            location=location,
        )
    return load_document(data, location=location, supported=FORMAT_2, kind="manifest piece")
