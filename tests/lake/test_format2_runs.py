"""A format 2 run reads only the partitions its listing or a rule's summary points at, and decides what a
run over every partition decides (issue 33, point 2): the same sequence of uploads and runs on a lake kept
in format 1 (``manifest_files.format_1_commits``: its runs read every partition) and on the same lake in
format 2 gives the same partitions (offsets, segments), the same
retired objects and the same retention decisions after every run. Hypothesis draws the partitions'
timestamps, the retention settings, KIP-68 groups, the uploads between runs and the runs' clocks."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
from counting_store import PARTITIONS as PARTITIONS_AREA
from counting_store import counting_store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_segments.lake.format2 import PIECES_PREFIX
from kafka_segments.lake.history import read_head
from kafka_segments.pipeline.run_result import RunResult
from kafka_segments.segment.writer import write_segment
from kafka_segments.state import MANIFEST_FORMAT_2, Manifest
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, upload_segment
from manifest_files import FORMAT_1, format_1_commits

from lake.retention_helpers import (
    config,
    group,
    run,
    single_record_batch,
    topic_yaml,
    upload_fifteen_records,
    write_snapshot,
)

pytestmark = pytest.mark.lake

PARTITIONS = [TopicPartition("t", p) for p in range(4)]
T = 1_000_000
STEP = 60_000


def _state(manifest: Manifest | None) -> dict[str, Any]:
    """What the two lakes must agree on (run ids and times differ between them)."""
    if manifest is None:
        return {}
    return {
        "partitions": {
            str(s.topic_partition): (
                s.log_start_offset,
                s.log_end_offset,
                [(seg.key, seg.base_offset, seg.size) for seg in s.segments],
            )
            for s in manifest.partitions
        },
        "retired": sorted((r.key, r.reason) for r in manifest.retired),
    }


def _decisions(result: RunResult) -> dict[str, Any]:
    """The partitions a run changed and how (a format 2 run plans fewer partitions: the unchanged ones)."""
    return {
        str(plan.topic_partition): (plan.new_log_start_offset, [d.segment.key for d in plan.deletions])
        for plan in result.plan.partitions
        if plan.changed
    }


def _append(store: ObjectStore, tp: TopicPartition, base: int, ts: int) -> None:
    batches = [single_record_batch(offset, ts=ts) for offset in range(base, base + 5)]
    upload_segment(store, tp, write_segment(batches, base_offset=base))


scenarios = st.fixed_dictionaries(
    {
        "segment_ts": st.lists(st.lists(st.integers(0, 6), min_size=3, max_size=3), min_size=4, max_size=4),
        "retention_ms": st.sampled_from([-1, 2 * STEP, 4 * STEP]),
        "retention_bytes": st.sampled_from([-1, 400, 700]),
        "consumed": st.booleans(),
        "offsets": st.lists(st.integers(0, 20), min_size=4, max_size=4),
        "steps": st.lists(
            st.tuples(st.integers(1, 4), st.lists(st.integers(0, 3), max_size=2, unique=True)),
            min_size=1,
            max_size=3,
        ),
    }
)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenario=scenarios)
def test_a_format_2_run_decides_what_a_run_over_every_partition_decides(
    scenario: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("format2-runs")
    lakes = [LocalStore(folder / "format1"), LocalStore(folder / "format2")]
    clocks = [FakeClock(T), FakeClock(T)]
    settings_ = {"retention_ms": scenario["retention_ms"], "retention_bytes": scenario["retention_bytes"]}
    if scenario["consumed"]:
        settings_.update(retention_commitoffset_enable=True, retention_commitoffset_ms=STEP)
    cfg = config(topic_yaml(**settings_))
    groups = [group("g", [(p, o, T) for p, o in enumerate(scenario["offsets"])], subscribed=["t"])]
    offsets = write_snapshot(Path(folder) / "offsets.json", groups, taken_at_ms=T)
    for store in lakes:
        for tp, stamps in zip(PARTITIONS, scenario["segment_ts"], strict=True):
            upload_fifteen_records(store, tp=tp, segment_ts=[T + s * STEP for s in stamps])
    with format_1_commits():
        run(lakes[0], cfg, now_ms=T, clock=clocks[0], offsets_file=offsets)
    run(lakes[1], cfg, now_ms=T, clock=clocks[1], offsets_file=offsets)
    formats = [read_head(store) for store in lakes]
    assert [None if m is None else m.format_version for m in formats] == [FORMAT_1, MANIFEST_FORMAT_2]

    now = T
    ends = dict.fromkeys(PARTITIONS, 15)
    for advance, appended in scenario["steps"]:
        now += advance * STEP
        for index in appended:
            tp = PARTITIONS[index]
            for store in lakes:
                _append(store, tp, ends[tp], now)
            ends[tp] += 5
        for clock in clocks:
            clock.advance(advance * STEP)
        with format_1_commits():
            over_every_partition = run(lakes[0], cfg, now_ms=now, clock=clocks[0], offsets_file=offsets)
        narrowed = run(lakes[1], cfg, now_ms=now, clock=clocks[1], offsets_file=offsets)
        assert _decisions(narrowed) == _decisions(over_every_partition)
        assert _state(read_head(lakes[1])) == _state(read_head(lakes[0]))


def _offsets_state(manifest: Manifest | None) -> dict[str, Any]:
    """``_state`` without keys: a compaction's output is named after the run that wrote it."""
    if manifest is None:
        return {}
    return {
        str(s.topic_partition): (
            s.log_start_offset,
            s.log_end_offset,
            s.cleaner_checkpoint,
            [(seg.base_offset, seg.last_offset, seg.size, seg.record_count) for seg in s.segments],
        )
        for s in manifest.partitions
    }


def _cleaned(result: RunResult) -> list[str]:
    return sorted(str(p.topic_partition) for p in result.compaction.partitions if p.changed)


def test_a_compacted_topic_reads_only_the_partition_that_got_data(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A compacted topic's partitions the cleaner cleaned up to their active segment are not read again
    until data comes; the one that got a segment is cleaned as a run over every partition cleans it."""
    folder = tmp_path_factory.mktemp("format2-compacted")
    lakes = [LocalStore(folder / "format1"), LocalStore(folder / "format2")]
    clocks = [FakeClock(T), FakeClock(T)]
    cfg = config(topic_yaml(cleanup_policy="compact", min_cleanable_dirty_ratio=0.01))
    for store, clock, commits in zip(lakes, clocks, [format_1_commits, nullcontext], strict=True):
        for tp in PARTITIONS:
            upload_fifteen_records(store, tp=tp, keyed=True, ts=T)
        with commits():
            first = run(store, cfg, now_ms=T + STEP, clock=clock)
        assert _cleaned(first) == [str(tp) for tp in PARTITIONS]
    for store in lakes:
        batches = [single_record_batch(o, ts=T + STEP, key=str(o % 3).encode()) for o in range(15, 20)]
        upload_segment(store, PARTITIONS[2], write_segment(batches, base_offset=15))
    counted = counting_store(lakes[1])
    for clock in clocks:
        clock.advance(2 * STEP)
    with format_1_commits():
        over_every_partition = run(lakes[0], cfg, now_ms=T + 3 * STEP, clock=clocks[0])
    results = [over_every_partition, run(counted, cfg, now_ms=T + 3 * STEP, clock=clocks[1])]

    assert _cleaned(results[1]) == _cleaned(results[0]) == [str(PARTITIONS[2])]
    assert _offsets_state(read_head(lakes[1])) == _offsets_state(read_head(lakes[0]))
    pieces = {
        call.key[len(PIECES_PREFIX) :].split("/")[0]
        for call in counted.calls
        if call.area == PARTITIONS_AREA and call.kind == "get"
    }
    assert pieces == {PARTITIONS[2].dir_name}
