"""A lake where one run deletes by all four passes, the stages before validation, and edits of the staged
manifest that keep it a valid manifest but break one retention invariant.

Partition ``t-0``: six segments of five single-record batches, ``[0-4] … [25-29]``, the first four at
timestamp 10 and the last two at ``NOW``; its copied ``log-start-offset-checkpoint`` says 5. With
retention.bytes = 20 batches, consumed retention after 0 ms and a group at offset 15, and retention.ms =
``NOW - 25``, Kafka's passes delete ``[0-4]`` (log-start-offset: the next segment starts at 5 <= 5), ``[5-9]``
(retention.bytes: 25r - 5r >= 20r), ``[10-14]`` (consumed: 14 < M = 15) and ``[15-19]`` (retention.ms); the
log start offset becomes 20.
Partition ``t-1``: three segments at ``NOW``; nothing goes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from kafka_segments.config import Config
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.codec import manifest_from_json, manifest_to_json
from kafka_segments.lake.layout import staged_manifest_key
from kafka_segments.lake.run_folder import read_run, run_file_key
from kafka_segments.lake.runs import ALL_PARTITIONS, Selection
from kafka_segments.lake.staging import retire
from kafka_segments.pipeline.offsets_input import OffsetsChoice
from kafka_segments.pipeline.stages import INPUT_MANIFEST, execute_run, prepare_run, snapshot_offsets
from kafka_segments.segment.writer import write_segment
from kafka_segments.state import Manifest, PartitionState, RetiredObject, SegmentEntry
from kafka_segments.storage import ObjectStore, Overwrite
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, upload_segment
from lake.retention_helpers import (
    config,
    group,
    record_size,
    single_record_batch,
    topic_yaml,
    upload_log_start_checkpoint,
    write_snapshot,
)

NOW = 1_000_000
TP = TopicPartition("t", 0)
QUIET = TopicPartition("t", 1)
OLD = 10
SEGMENT_TS = (OLD, OLD, OLD, OLD, NOW, NOW)
PER_SEGMENT = 5


def upload_partition(store: ObjectStore, tp: TopicPartition, timestamps: Sequence[int]) -> None:
    for index, ts in enumerate(timestamps):
        base = index * PER_SEGMENT
        batches = [single_record_batch(o, ts=ts) for o in range(base, base + PER_SEGMENT)]
        upload_segment(store, tp, write_segment(batches, base_offset=base))


def four_pass_yaml() -> str:
    return topic_yaml(
        retention_ms=NOW - 25,
        retention_bytes=20 * record_size(),
        retention_commitoffset_enable=True,
        retention_commitoffset_ms=0,
    )


def four_pass_config() -> Config:
    return config(four_pass_yaml())


def four_pass_lake(store: ObjectStore, tmp_path: Path, clock: FakeClock) -> Path:
    """Upload both partitions, adopt them (version 1), and return the offsets snapshot file."""
    upload_partition(store, TP, SEGMENT_TS)
    upload_partition(store, QUIET, (NOW, NOW, NOW))
    upload_log_start_checkpoint(store, PER_SEGMENT, tp=TP)
    adopt(store, now_ms=NOW, clock=clock)
    return write_snapshot(tmp_path / "offsets.json", [group("g", [(0, 15, NOW)])], taken_at_ms=NOW)


def stage(
    store: ObjectStore,
    cfg: Config,
    clock: FakeClock,
    *,
    snapshot: Path | None = None,
    dry_run: bool = False,
    selection: Selection = ALL_PARTITIONS,
) -> str:
    """prepare + execute (the stages before validation); returns the run id."""
    choice = OffsetsChoice(file=None if snapshot is None else str(snapshot))
    offsets = snapshot_offsets(store, choice, now_ms=NOW, dry_run=dry_run)
    request = prepare_run(
        store, now_ms=NOW, offsets=offsets, dry_run=dry_run, selection=selection, clock=clock
    )
    execute_run(store, cfg, request.run_id, clock=clock)
    return request.run_id


def input_segments(store: ObjectStore, run_id: str, tp: TopicPartition = TP) -> tuple[SegmentEntry, ...]:
    """The partition's live segments in the run's input state, oldest first."""
    key = run_file_key(run_id, INPUT_MANIFEST)
    state = manifest_from_json(store.get(key), location=key).partition(tp)
    if state is None:
        raise AssertionError(f"{tp} is not in the run's input")
    return state.segments


def rewrite_staged(store: ObjectStore, run_id: str, edit: Callable[[Manifest], Manifest]) -> None:
    """Replace the staged manifest by ``edit(staged)`` (through the codec: it stays a valid manifest)."""
    key = staged_manifest_key(run_id)
    edited = manifest_to_json(edit(manifest_from_json(store.get(key), location=key)))
    manifest_from_json(edited, location=key)
    store.put(key, edited, mode=Overwrite())


def with_partition(manifest: Manifest, tp: TopicPartition, **changes: object) -> Manifest:
    states = [
        dataclasses.replace(state, **changes) if state.topic_partition == tp else state
        for state in manifest.partitions
    ]
    return dataclasses.replace(manifest, partitions=tuple(states))


def partition_of(manifest: Manifest, tp: TopicPartition = TP) -> PartitionState:
    state = manifest.partition(tp)
    if state is None:
        raise AssertionError(f"{tp} is not in the manifest")
    return state


def retired_entry(
    store: ObjectStore, run_id: str, segment: SegmentEntry, reason: str, tp: TopicPartition = TP
) -> RetiredObject:
    """The entry the run would add to retire ``segment`` for ``reason``."""
    return retire(segment, tp, read_run(store, run_id), reason=reason, delete_delay_ms=60_000)


def with_retired(manifest: Manifest, retired: Sequence[RetiredObject]) -> Manifest:
    """``manifest`` with this run's retired entries replaced by ``retired``."""
    carried = [item for item in manifest.retired if item.retired_in_version != manifest.version]
    return dataclasses.replace(manifest, retired=(*carried, *retired))


def with_reason(manifest: Manifest, key: str, reason: str) -> Manifest:
    retired = [dataclasses.replace(r, reason=reason) if r.key == key else r for r in manifest.retired]
    return dataclasses.replace(manifest, retired=tuple(retired))
