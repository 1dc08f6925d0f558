"""The commit protocol end to end on both backends: stage objects, commit, conflict, idempotent re-commit."""

from __future__ import annotations

import pytest
from kafka_segments.errors import CommitConflictError
from kafka_segments.lake import (
    PartitionState,
    begin_run,
    build_manifest,
    commit_run,
    read_head,
    stage_manifest,
)
from kafka_segments.lake.history import manifest_versions
from kafka_segments.lake.staging import stage_segment
from kafka_segments.segment.files import FileKind
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment

pytestmark = pytest.mark.lake

TP = TopicPartition("orders", 0)


def test_a_run_commits_once_and_a_concurrent_run_conflicts(store: ObjectStore, clock: FakeClock) -> None:
    run, base = begin_run(store, now_ms=clock(), operation="test", clock=clock)
    assert base is None
    files = make_segment(0)
    entry = stage_segment(
        store, run, topic_partition=TP, base_offset=0, files={FileKind.LOG: files.log}, clock=clock
    )
    state = PartitionState(TP, 0, entry.next_offset, (entry,), run_id=run.run_id)
    stage_manifest(store, run, build_manifest(run, base=base, partitions=[state]))

    committed = commit_run(store, run.run_id, clock=clock)

    assert committed.version == 1
    assert read_head(store) == committed
    assert commit_run(store, run.run_id, clock=clock) == committed  # idempotent
    first, head = (begin_run(store, now_ms=clock(), operation="test", clock=clock) for _ in range(2))
    for other, other_base in (first, head):
        stage_manifest(store, other, build_manifest(other, base=other_base, partitions=committed.partitions))
    assert commit_run(store, first[0].run_id, clock=clock).version == 2
    with pytest.raises(CommitConflictError, match="version 2 was committed by run"):
        commit_run(store, head[0].run_id, clock=clock)
    assert manifest_versions(store) == [1, 2]
