"""Building blocks of the retention run tests: the logs of Kafka's UnifiedLogTest in a lake, configs and
snapshots."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from kafka_segments.checkpoint import format_offset_checkpoint
from kafka_segments.clock import Clock
from kafka_segments.config import Config, parse_config
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.pipeline.offsets_input import OffsetsChoice
from kafka_segments.pipeline.retention_run import RunOptions, RunResult, run_retention
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import write_segment
from kafka_segments.state import PartitionState
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import upload_segment

TP = TopicPartition("t", 0)


def single_record_batch(offset: int, *, ts: int, key: bytes | None = None) -> bytes:
    return build_batch([Record(offset, ts, key, b"test")], base_offset=offset)


def record_size() -> int:
    """r: the size of one single-record batch (the unit of Kafka's UnifiedLogTest retention tests)."""
    return len(single_record_batch(0, ts=10))


def upload_fifteen_records(
    store: ObjectStore,
    *,
    ts: int = 10,
    tp: TopicPartition = TP,
    keyed: bool = False,
    per_segment: int = 5,
    segment_ts: Sequence[int] | None = None,
) -> None:
    """15 single-record batches, ``per_segment`` per segment: [0-4], [5-9], [10-14] by default; every record
    at ``ts``, or at ``segment_ts[i]`` in segment i."""
    for index, base in enumerate(range(0, 15, per_segment)):
        stamp = ts if segment_ts is None else segment_ts[index]
        batches = [
            single_record_batch(o, ts=stamp, key=str(o % 3).encode() if keyed else None)
            for o in range(base, base + per_segment)
        ]
        upload_segment(store, tp, write_segment(batches, base_offset=base))


def upload_log_start_checkpoint(store: ObjectStore, offset: int, *, tp: TopicPartition = TP) -> None:
    """A copied log directory's ``log-start-offset-checkpoint`` (applied when the lake bootstraps)."""
    store.put("log-start-offset-checkpoint", format_offset_checkpoint({tp: offset}))


def config(yaml_text: str) -> Config:
    return parse_config(yaml_text, source="test.yaml")


def topic_yaml(**settings: object) -> str:
    """``topics: t: {settings}`` with Kafka's dotted names given as ``retention_ms=…`` keywords."""
    lines = ["topics:", "  t:"]
    for name, value in settings.items():
        dotted = name.replace("_", ".").replace("kafka.segments.", "kafka_segments.")
        lines.append(f"    {dotted}: {json.dumps(value)}")
    if not settings:
        lines[-1] = "  t: {}"
    return "\n".join(lines) + "\n"


def run(
    store: ObjectStore,
    cfg: Config,
    *,
    now_ms: int,
    clock: Clock,
    offsets_file: Path | None = None,
    dry_run: bool = False,
    gc: bool = True,
) -> RunResult:
    options = RunOptions(
        now_ms=now_ms,
        offsets=OffsetsChoice(file=None if offsets_file is None else str(offsets_file)),
        dry_run=dry_run,
        gc=gc,
    )
    return run_retention(store, cfg, options, clock=clock)


def partition(store: ObjectStore, tp: TopicPartition = TP) -> PartitionState:
    state = resolve_manifest(store).partition(tp)
    if state is None:
        raise AssertionError(f"{tp} is not in the head manifest")
    return state


def bases(store: ObjectStore, tp: TopicPartition = TP) -> list[int]:
    return [segment.base_offset for segment in partition(store, tp).segments]


def write_snapshot(
    path: Path, groups: list[dict[str, object]], *, taken_at_ms: int, errors: tuple[object, ...] = ()
) -> Path:
    document = {
        "format_version": 1,
        "taken_at_ms": taken_at_ms,
        "source": "file",
        "groups": groups,
        "errors": list(errors),
    }
    path.write_text(json.dumps(document))
    return path


def group(
    group_id: str,
    offsets: list[tuple[int, int, int | None]],
    *,
    state: str = "Stable",
    protocol_type: str | None = "consumer",
    subscribed: list[str] | None = None,
    state_ts: int | None = None,
    topic: str = "t",
) -> dict[str, object]:
    """A snapshot group; ``offsets`` = (partition, offset, commit timestamp)."""
    return {
        "group_id": group_id,
        "state": state,
        "protocol_type": protocol_type,
        "state_timestamp_ms": state_ts,
        "subscribed_topics": subscribed,
        "offsets": [
            {
                "topic": topic,
                "partition": p,
                "offset": o,
                "commit_timestamp_ms": ts,
                "expire_timestamp_ms": None,
            }
            for p, o, ts in offsets
        ],
    }
