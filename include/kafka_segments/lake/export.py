"""``export``: the committed state as a plain Kafka log directory a broker or Kafka's tools can open
(docs/lake.md, "Export").

Objects this project wrote get Kafka's plain name. Indexes are never copied: they are rebuilt from each
``.log`` by Kafka's recovery rule (``LogSegment.recover``), open transactions carried from segment to
segment. A partition without live segments gets an empty active segment at its log end offset. The target
must not exist or be empty; each file is written atomically, and a failed export removes what it created."""

from __future__ import annotations

import contextlib
import operator
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from kafka_segments.checkpoint import (
    CLEANER_OFFSET_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    PartitionLogStart,
    atomic_write,
    format_offset_checkpoint,
    log_start_offsets_to_checkpoint,
)
from kafka_segments.lake.reader import read_segment, resolve_root
from kafka_segments.lake.roots import VersionRoot
from kafka_segments.progress import phase
from kafka_segments.segment.recovery import rebuild_indexes
from kafka_segments.segment.writer import DEFAULT_INDEX_INTERVAL_BYTES, SegmentFiles, SegmentWriter
from kafka_segments.state import PartitionState, SegmentEntry
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class PartitionExport:
    """What was written for one partition."""

    topic: str
    partition: int
    log_start_offset: int
    log_end_offset: int
    segments: int
    """Segments written (1 for a partition without live segments: its empty active segment)."""
    files: int
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ExportReport:
    """The outcome of an export: where from, where to, and what was written."""

    lake: str
    version: int
    target: Path
    partitions: tuple[PartitionExport, ...]
    files: int
    """Every file written, the two checkpoint files included."""
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        """Keys: ``lake``, ``version``, ``target``, ``files``, ``bytes``, ``partitions`` (one object per
        partition: ``topic``, ``partition``, ``log_start_offset``, ``log_end_offset``, ``segments``,
        ``files``, ``bytes``)."""
        return {
            "lake": self.lake,
            "version": self.version,
            "target": str(self.target),
            "files": self.files,
            "bytes": self.bytes,
            "partitions": [partition.to_dict() for partition in self.partitions],
        }

    def to_text(self) -> str:
        lines = [
            f"{p.topic}-{p.partition}: {p.segments} segment(s), {p.files} files, {p.bytes} bytes "
            f"(log start offset {p.log_start_offset}, log end offset {p.log_end_offset})"
            for p in self.partitions
        ]
        lines.append(
            f"exported version {self.version} of {self.lake} to {self.target}: {len(self.partitions)} "
            f"partition(s), {self.files} files, {self.bytes} bytes"
        )
        return "\n".join(lines) + "\n"


class _Output:
    """Writes files under the target atomically and remembers them, to undo a failed export."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self._directories: list[Path] = []
        self._files: list[Path] = []
        self.bytes = 0

    def prepare(self) -> None:
        """Create the target, or accept it when it is an empty directory.

        Raises:
            FileExistsError: the target exists and is not an empty directory.
        """
        target = self.target
        if target.exists() or target.is_symlink():
            if not target.is_dir():
                raise FileExistsError(f"export target {target} exists and is not a directory")
            if any(target.iterdir()):
                raise FileExistsError(
                    f"export target {target} is not empty; export only writes into a new or empty directory"
                )
            return
        missing = [target, *(p for p in target.parents if not p.exists())]
        target.mkdir(parents=True)
        self._directories.extend(reversed(missing))

    def directory(self, name: str) -> Path:
        path = self.target / name
        path.mkdir()
        self._directories.append(path)
        return path

    def write(self, path: Path, data: bytes) -> None:
        if path.exists():  # only possible if someone writes into the target while we export
            raise FileExistsError(f"{path} appeared during the export; not overwriting it")
        self._files.append(path)
        atomic_write(path, data)
        self.bytes += len(data)

    @property
    def file_count(self) -> int:
        return len(self._files)

    def undo(self) -> None:
        """Remove what this export wrote (files, then the folders it created, deepest first)."""
        for path in reversed(self._files):
            for leftover in (path, path.with_name(path.name + ".tmp")):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()
        for directory in reversed(self._directories):
            with contextlib.suppress(OSError):
                directory.rmdir()


def export_lake(
    store: ObjectStore,
    to: str | os.PathLike[str],
    *,
    version: int | None = None,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
) -> ExportReport:
    """Write the committed state at ``version`` (the head when ``None``) as a Kafka log directory at ``to``.

    Args:
        index_interval_bytes: Kafka's ``index.interval.bytes`` for the rebuilt indexes (default 4096).

    Raises:
        NoCommittedStateError, ManifestVersionNotFoundError: see ``reader.resolve_manifest``.
        FileExistsError: ``to`` exists and is not an empty directory (nothing is written).
        SegmentObjectMismatchError: a segment object does not match the manifest (nothing is left behind).
        CorruptRecordError: a segment's batches are damaged (nothing is left behind).
        OSError: the target cannot be written.
    """
    root = resolve_root(store, version)
    output = _Output(Path(to))
    output.prepare()
    try:
        checkpoints = _Checkpoints()
        partitions = _export_partitions(root, output, checkpoints, index_interval_bytes=index_interval_bytes)
        checkpoints.write(output)
    except BaseException:
        output.undo()
        raise
    return ExportReport(
        lake=store.describe(),
        version=root.version,
        target=output.target,
        partitions=partitions,
        files=output.file_count,
        bytes=output.bytes,
    )


def _export_partitions(
    root: VersionRoot, output: _Output, checkpoints: _Checkpoints, *, index_interval_bytes: int
) -> tuple[PartitionExport, ...]:
    """Partition by partition, each read from the version when its turn comes (a format 2 version holds
    one partition's entries in memory at a time)."""
    store = root.store
    if store is None:
        raise ValueError("export needs the lake's store")
    total = sum(p.summary.bytes for p in root.partitions)
    done = []
    with phase("export", items=len(root.partitions), nbytes=total) as progress:
        for partition in root.partitions:
            (state,) = root.load(partial(operator.eq, partition.topic_partition))
            done.append(_export_partition(store, state, output, index_interval_bytes=index_interval_bytes))
            checkpoints.add(state)
            progress.advance(str(state.topic_partition), nbytes=partition.summary.bytes)
    return tuple(done)


def _export_partition(
    store: ObjectStore, state: PartitionState, output: _Output, *, index_interval_bytes: int
) -> PartitionExport:
    directory = output.directory(state.topic_partition.dir_name)
    files_before, bytes_before = output.file_count, output.bytes
    for files in _segment_files(store, state, index_interval_bytes=index_interval_bytes):
        for name, data in files.files().items():
            output.write(directory / name, data)
    return PartitionExport(
        topic=state.topic_partition.topic,
        partition=state.topic_partition.partition,
        log_start_offset=state.log_start_offset,
        log_end_offset=state.log_end_offset,
        segments=max(len(state.segments), 1),
        files=output.file_count - files_before,
        bytes=output.bytes - bytes_before,
    )


def _segment_files(
    store: ObjectStore, state: PartitionState, *, index_interval_bytes: int
) -> Iterator[SegmentFiles]:
    """The partition's segments with rebuilt indexes, one at a time, in offset order."""
    if not state.segments:
        yield SegmentWriter(base_offset=state.log_end_offset).close()
        return
    ongoing: dict[int, int] = {}
    for segment in state.segments:
        files = rebuild_segment(
            store, segment, ongoing_txns=ongoing, index_interval_bytes=index_interval_bytes
        )
        ongoing = dict(files.ongoing_txns)
        yield files


def rebuild_segment(
    store: ObjectStore,
    segment: SegmentEntry,
    *,
    ongoing_txns: dict[int, int] | None = None,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
) -> SegmentFiles:
    """The segment's checked ``.log`` with its indexes rebuilt as Kafka's ``LogSegment.recover`` does.

    Args:
        ongoing_txns: transactions open when the segment starts (producer id -> first offset), i.e. the
            ``ongoing_txns`` of the previous segment's result.

    Raises:
        SegmentObjectMismatchError: the object does not match the manifest.
        CorruptRecordError: the ``.log`` is damaged (Kafka would truncate it there; export refuses).
    """
    data = read_segment(store, segment)
    recovery = rebuild_indexes(
        data,
        base_offset=segment.base_offset,
        index_interval_bytes=index_interval_bytes,
        ongoing_txns=ongoing_txns,
        segment=store.location(segment.key),
    )
    if recovery.damage is not None:
        raise recovery.damage
    return recovery.segment


class _Checkpoints:
    """The log dir's checkpoint files, gathered partition by partition."""

    def __init__(self) -> None:
        self.logs: dict[TopicPartition, PartitionLogStart] = {}
        self.cleaner: dict[TopicPartition, int] = {}

    def add(self, state: PartitionState) -> None:
        first_base = state.segments[0].base_offset if state.segments else state.log_end_offset
        self.logs[state.topic_partition] = PartitionLogStart(state.log_start_offset, first_base)
        if state.cleaner_checkpoint is not None:
            self.cleaner[state.topic_partition] = state.cleaner_checkpoint

    def write(self, output: _Output) -> None:
        output.write(
            output.target / LOG_START_OFFSET_CHECKPOINT,
            format_offset_checkpoint(log_start_offsets_to_checkpoint(self.logs)),
        )
        output.write(output.target / CLEANER_OFFSET_CHECKPOINT, format_offset_checkpoint(self.cleaner))
