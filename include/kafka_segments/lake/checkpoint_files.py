"""Kafka text checkpoint files at the lake root (Kafka's ``OffsetCheckpointFile``), for tools that expect a
log dir; rewritten from the head manifest after every commit (``recover`` repairs them).

``log-start-offset-checkpoint`` lists, as ``LogManager.checkpointLogStartOffsetsInDir`` does, the partitions
whose log start offset is above their first segment's base offset, and a partition without live segments
whose log start offset is above 0 (its folder may still hold retired segments). Before the first commit the
files are inputs: ``read_bootstrap_checkpoints``."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.checkpoint import format_offset_checkpoint, parse_offset_checkpoint
from kafka_segments.errors import ObjectNotFoundError
from kafka_segments.lake.layout import CLEANER_OFFSET_CHECKPOINT_KEY, LOG_START_OFFSET_CHECKPOINT_KEY
from kafka_segments.lake.roots import VersionRoot, root_of
from kafka_segments.state import Manifest, PartitionSummary
from kafka_segments.storage.base import ObjectStore, Overwrite
from kafka_segments.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class BootstrapCheckpoints:
    """The checkpoint files found at the root of a lake that has no manifest yet."""

    log_start_offsets: dict[TopicPartition, int]
    cleaner_offsets: dict[TopicPartition, int]


def _lists_log_start(summary: PartitionSummary, first_base_offset: int | None) -> bool:
    if first_base_offset is not None:
        return summary.log_start_offset > first_base_offset
    return summary.log_start_offset > 0


def checkpoint_file_contents(version: VersionRoot | Manifest | None) -> dict[str, bytes]:
    """Key -> bytes of both checkpoint files for ``version`` (empty maps for ``None``), from its root's
    summaries (a root written before they held the first segment's base offset reads those partitions)."""
    root = root_of(version) if isinstance(version, Manifest) else version
    partitions = root.partitions if root is not None else ()
    first_bases = _first_base_offsets(root) if root is not None else {}
    log_start = {
        p.topic_partition: p.summary.log_start_offset
        for p in partitions
        if _lists_log_start(p.summary, first_bases.get(p.topic_partition))
    }
    cleaner = {
        p.topic_partition: p.summary.cleaner_checkpoint
        for p in partitions
        if p.summary.cleaner_checkpoint is not None
    }
    return {
        LOG_START_OFFSET_CHECKPOINT_KEY: format_offset_checkpoint(log_start),
        CLEANER_OFFSET_CHECKPOINT_KEY: format_offset_checkpoint(cleaner),
    }


def _first_base_offsets(root: VersionRoot) -> dict[TopicPartition, int]:
    """Each partition's first segment's base offset (partitions without segments are absent)."""
    found = {
        p.topic_partition: p.summary.first_segment_base_offset
        for p in root.partitions
        if p.summary.first_segment_base_offset is not None
    }
    lacking = {
        p.topic_partition for p in root.partitions if p.summary.segments and p.topic_partition not in found
    }
    if lacking:
        found.update((s.topic_partition, s.segments[0].base_offset) for s in root.load(lacking.__contains__))
    return found


def write_checkpoint_files(store: ObjectStore, version: VersionRoot | Manifest) -> None:
    """Rewrite both checkpoint files for ``version`` (each an atomic overwrite)."""
    for key, data in checkpoint_file_contents(version).items():
        store.put(key, data, mode=Overwrite())


def checkpoint_files_match(store: ObjectStore, version: VersionRoot | Manifest) -> bool:
    """Whether both files at the lake's root hold exactly what ``version`` gives."""
    for key, expected in checkpoint_file_contents(version).items():
        try:
            if store.get(key) != expected:
                return False
        except ObjectNotFoundError:
            return False
    return True


def read_bootstrap_checkpoints(store: ObjectStore) -> BootstrapCheckpoints:
    """The checkpoint files of a copied Kafka log directory (missing files are empty maps).

    Raises:
        CheckpointFileError: a file is malformed (Kafka's reader rules), naming the object and the line.
    """
    return BootstrapCheckpoints(
        log_start_offsets=_read_optional(store, LOG_START_OFFSET_CHECKPOINT_KEY),
        cleaner_offsets=_read_optional(store, CLEANER_OFFSET_CHECKPOINT_KEY),
    )


def _read_optional(store: ObjectStore, key: str) -> dict[TopicPartition, int]:
    try:
        data = store.get(key)
    except ObjectNotFoundError:
        return {}
    return parse_offset_checkpoint(data, path=store.location(key))
