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
from kafka_segments.state import Manifest, PartitionState
from kafka_segments.storage.base import ObjectStore, Overwrite
from kafka_segments.topic_partition import TopicPartition


@dataclass(frozen=True, slots=True)
class BootstrapCheckpoints:
    """The checkpoint files found at the root of a lake that has no manifest yet."""

    log_start_offsets: dict[TopicPartition, int]
    cleaner_offsets: dict[TopicPartition, int]


def _lists_log_start(state: PartitionState) -> bool:
    if state.segments:
        return state.log_start_offset > state.segments[0].base_offset
    return state.log_start_offset > 0


def checkpoint_file_contents(manifest: Manifest | None) -> dict[str, bytes]:
    """Key -> bytes of both checkpoint files for ``manifest`` (empty maps for ``None``)."""
    partitions = manifest.partitions if manifest is not None else ()
    log_start = {s.topic_partition: s.log_start_offset for s in partitions if _lists_log_start(s)}
    cleaner = {
        s.topic_partition: s.cleaner_checkpoint for s in partitions if s.cleaner_checkpoint is not None
    }
    return {
        LOG_START_OFFSET_CHECKPOINT_KEY: format_offset_checkpoint(log_start),
        CLEANER_OFFSET_CHECKPOINT_KEY: format_offset_checkpoint(cleaner),
    }


def write_checkpoint_files(store: ObjectStore, manifest: Manifest) -> None:
    """Rewrite both checkpoint files from ``manifest`` (each an atomic overwrite)."""
    for key, data in checkpoint_file_contents(manifest).items():
        store.put(key, data, mode=Overwrite())


def checkpoint_files_match(store: ObjectStore, manifest: Manifest) -> bool:
    """Whether both files at the root hold exactly what ``manifest`` gives."""
    for key, expected in checkpoint_file_contents(manifest).items():
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
