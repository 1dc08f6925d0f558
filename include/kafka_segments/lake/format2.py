"""Manifest format 2 (docs/metadata-format-2.md): a small root per version, at format 1's key, that names one
immutable, content-addressed partition manifest per partition; a partition manifest names its segments'
chunks (immutable, content-addressed, up to ``CHUNK_MAX`` entries). A commit writes the pieces that no
existing piece has, then the root: what it writes follows what changed, not the size of the lake.

The entries inside the pieces are format 1's (``lake.codec``): the same fields, the same checks."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kafka_segments.errors import ManifestFormatError
from kafka_segments.lake.codec import (
    Reader,
    check_partition,
    dump_json,
    load_document,
    open_transaction_to_dict,
    read_open_transaction,
    read_segment,
    retired_to_dict,
    segment_to_dict,
)
from kafka_segments.lake.layout import META_PREFIX
from kafka_segments.state import Manifest, PartitionState, SegmentEntry
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition

FORMAT_2 = 2
PIECES_PREFIX = META_PREFIX + "partitions/"
CHUNK_MAX = 1024
"""At most this many segment entries in a chunk."""
CHUNK_CUT = 512
"""A chunk ends after a segment whose base offset's CRC-32 is a multiple of this (so ~512 entries a chunk on
average): a boundary depends on that segment only, so appending, deleting from the head or rewriting some
segments leaves every other chunk as it was."""
READ_WORKERS = 16


@dataclass(frozen=True, slots=True)
class Piece:
    """A partition manifest or a chunk: its key (under its partition's folder, named by its sha256) and
    bytes."""

    key: str
    data: bytes


@dataclass(frozen=True, slots=True)
class EncodedVersion:
    root: bytes
    pieces: Mapping[str, tuple[Piece, ...]]
    """Per partition manifest key: that manifest first, then its chunks."""


def piece_key(topic_partition: TopicPartition, data: bytes, *, chunk: bool) -> str:
    folder = f"{PIECES_PREFIX}{topic_partition.dir_name}/" + ("chunks/" if chunk else "")
    return f"{folder}{hashlib.sha256(data).hexdigest()}.json"


def is_piece_key(key: str) -> bool:
    return key.startswith(PIECES_PREFIX)


# ---------------------------------------------------------------------------------------------- writing


def encode_version(manifest: Manifest) -> EncodedVersion:
    """``manifest`` as format 2: the root and every piece it names."""
    lines: list[dict[str, Any]] = []
    pieces: dict[str, tuple[Piece, ...]] = {}
    for state in manifest.partitions:
        chunks = tuple(_chunk(state.topic_partition, part) for part in cut_chunks(state.segments))
        partition = _partition_piece(state, chunks)
        pieces[partition.key] = (partition, *(chunk for chunk, _ in chunks))
        lines.append(
            {
                "topic": state.topic_partition.topic,
                "partition": state.topic_partition.partition,
                "manifest": partition.key,
                "summary": summarize(state),
            }
        )
    root = {
        "format_version": FORMAT_2,
        "version": manifest.version,
        "parent_version": manifest.parent_version,
        "run_id": manifest.run_id,
        "operation": manifest.operation,
        "committed_at_ms": manifest.committed_at_ms,
        "now_ms": manifest.now_ms,
        "partitions": lines,
        "retired": [retired_to_dict(retired) for retired in manifest.retired],
    }
    return EncodedVersion(dump_json(root), pieces)


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


def _chunk(topic_partition: TopicPartition, segments: Sequence[SegmentEntry]) -> tuple[Piece, dict[str, Any]]:
    data = dump_json(
        {
            "format_version": FORMAT_2,
            "topic": topic_partition.topic,
            "partition": topic_partition.partition,
            "segments": [segment_to_dict(segment) for segment in segments],
        }
    )
    key = piece_key(topic_partition, data, chunk=True)
    reference = {
        "key": key,
        "first_base_offset": segments[0].base_offset,
        "last_base_offset": segments[-1].base_offset,
        "segments": len(segments),
        "bytes": sum(segment.size for segment in segments),
    }
    return Piece(key, data), reference


def _partition_piece(state: PartitionState, chunks: Sequence[tuple[Piece, dict[str, Any]]]) -> Piece:
    data = dump_json(
        {
            "format_version": FORMAT_2,
            "topic": state.topic_partition.topic,
            "partition": state.topic_partition.partition,
            "log_start_offset": state.log_start_offset,
            "log_end_offset": state.log_end_offset,
            "cleaner_checkpoint": state.cleaner_checkpoint,
            "run_id": state.run_id,
            "open_transactions": [open_transaction_to_dict(t) for t in state.open_transactions],
            "chunks": [reference for _, reference in chunks],
        }
    )
    return Piece(piece_key(state.topic_partition, data, chunk=False), data)


def summarize(state: PartitionState) -> dict[str, Any]:
    """The root's numbers of a partition (docs/metadata-format-2.md, "The summary")."""
    first = state.segments[0] if state.segments else None
    return {
        "log_start_offset": state.log_start_offset,
        "log_end_offset": state.log_end_offset,
        "cleaner_checkpoint": state.cleaner_checkpoint,
        "segments": len(state.segments),
        "bytes": sum(segment.size for segment in state.segments),
        "first_segment_next_offset": None if first is None else first.next_offset,
        "first_segment_max_timestamp_ms": None if first is None else first.max_timestamp_ms,
        "newest_key": None if not state.segments else state.segments[-1].key,
    }


# ---------------------------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class RootLine:
    topic_partition: TopicPartition
    manifest_key: str


def root_lines(reader: Reader) -> tuple[RootLine, ...]:
    """The partition lines of a format 2 root (``load_document`` checked its version)."""
    return reader.objects("partitions", _root_line)


def _root_line(reader: Reader) -> RootLine:
    topic_partition = reader.topic_partition()
    key = reader.string("manifest")
    if not key.startswith(f"{PIECES_PREFIX}{topic_partition.dir_name}/") or "/chunks/" in key:
        raise reader.fail("manifest", f"{key!r} is not a partition manifest of {topic_partition}")
    return RootLine(topic_partition, key)


def read_partitions(
    store: ObjectStore, lines: Sequence[RootLine], *, referenced: set[str] | None = None
) -> tuple[PartitionState, ...]:
    """The partitions a root names, each read from its pieces (concurrently), every piece checked against
    the sha256 its key names. ``referenced`` collects the pieces' keys (gc)."""
    if not lines:
        return ()
    with ThreadPoolExecutor(max_workers=min(READ_WORKERS, len(lines))) as pool:
        states = list(pool.map(lambda line: _read_partition(store, line, referenced), lines))
    return tuple(states)


def _read_partition(store: ObjectStore, line: RootLine, referenced: set[str] | None) -> PartitionState:
    reader = _piece(store, line.manifest_key)
    if reader.topic_partition() != line.topic_partition:
        raise reader.fail("topic", f"the manifest of {line.topic_partition} names another partition")
    chunk_keys = reader.objects("chunks", lambda chunk: chunk.string("key"))
    segments: list[SegmentEntry] = []
    for key in chunk_keys:
        chunk = _piece(store, key)
        if not key.startswith(f"{PIECES_PREFIX}{line.topic_partition.dir_name}/chunks/"):
            raise chunk.fail("key", f"{key!r} is not a chunk of {line.topic_partition}")
        segments.extend(chunk.objects("segments", read_segment))
    if referenced is not None:
        referenced.update((line.manifest_key, *chunk_keys))
    log_start = reader.integer("log_start_offset", minimum=0)
    log_end = reader.integer("log_end_offset", minimum=0)
    state = PartitionState(
        topic_partition=line.topic_partition,
        log_start_offset=log_start,
        log_end_offset=log_end,
        segments=tuple(segments),
        cleaner_checkpoint=reader.optional_integer("cleaner_checkpoint", minimum=0),
        open_transactions=reader.objects("open_transactions", read_open_transaction),
        run_id=reader.string("run_id"),
    )
    check_partition(reader, state)
    return state


def _piece(store: ObjectStore, key: str) -> Reader:
    data = store.get(key)
    location = store.location(key)
    if not key.endswith(f"/{hashlib.sha256(data).hexdigest()}.json"):
        raise ManifestFormatError(
            "the object's bytes do not have the sha256 its key names (changed after it was written)",
            location=location,
        )
    return load_document(data, location=location, supported=FORMAT_2, kind="manifest piece")


def pieces_to_write(encoded: EncodedVersion, existing: Iterable[str]) -> list[Piece]:
    """The pieces of ``encoded`` that are not among the ``existing`` keys (a partition manifest that exists
    brings its chunks with it)."""
    known = set(existing)
    missing: list[Piece] = []
    for manifest_key, pieces in encoded.pieces.items():
        if manifest_key in known:
            continue
        missing.extend(piece for piece in pieces[1:] if piece.key not in known)
        missing.append(pieces[0])  # the partition manifest after its chunks
    return missing
