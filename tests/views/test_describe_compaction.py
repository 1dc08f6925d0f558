"""``describe`` with a configuration: each compacted partition's dirty ratio, compaction delay and the verdict
a run at ``now`` would reach (``LogCleanerManager.cleanableOffsets``, ``LogToClean``, ``maxCompactionDelay``,
``grabFilthiestCompactedLog``; KIP-354), from the manifest alone.

The lake is the log of ``LogCleanerTest.testLogToClean``: segment.bytes 100, six single-record segments (key
"1", a 25-byte value), so every segment is one 94-byte batch and the ratios can be counted by hand. Segments
0-3 were written two hours before ``T0``, 4-5 at ``T0``. A delete topic sits next to it: it gets no
compaction figures.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from kafka_segments.cli.main import main
from kafka_segments.compaction.eligibility import Eligibility
from kafka_segments.config import Config
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.pipeline.compaction.stage import CompactionStatus, compaction_budget
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import write_segment
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kafka_segments.views.describe import (
    COMPACTION_COLUMNS,
    LakeDescription,
    describe_lake,
    describe_manifest,
)
from kafka_segments.views.describe_compaction import (
    COMPACTION_KEYS,
    CompactionContext,
    CompactionOutlook,
    NextRun,
)
from kit import T0, FakeClock, make_segment, upload_segment
from lake.compaction_run_helpers import config_yaml, read_lake, run_at, topics_config
from lake.read_helpers import commit_states

pytestmark = pytest.mark.lake

COMPACTED = TopicPartition("compacted", 0)
SECOND = TopicPartition("compacted", 1)
DELETED = TopicPartition("deleted", 0)
HOUR = 3_600_000
OLD = T0 - 2 * HOUR
BATCH = 94
"""One single-record batch: the 61-byte v2 header and a 33-byte record (length 1, attributes 1, timestamp
delta 1, offset delta 1, key length 1, key "1", value length 1, 25-byte value, header count 1)."""

A10 = {"cleanup.policy": "compact", "internal.segment.bytes": 100, "min.compaction.lag.ms": HOUR}
DELETE = {"cleanup.policy": "delete", "retention.ms": -1}


def single_record_segment(offset: int, *, ts: int) -> bytes:
    return build_batch([Record(offset, ts, b"1", b"v" * 25)], base_offset=offset)


def upload_a10_log(store: ObjectStore, tp: TopicPartition) -> None:
    for offset in range(6):
        batch = single_record_segment(offset, ts=OLD if offset < 4 else T0)
        upload_segment(store, tp, write_segment([batch], base_offset=offset))


def a10_lake(
    store: ObjectStore, clock: FakeClock, *, checkpoint: int | None = 2, second: bool = False
) -> None:
    """The A10 log (and a delete topic) adopted at ``T0``, the cleaner checkpoint set to ``checkpoint``."""
    upload_a10_log(store, COMPACTED)
    if second:
        upload_a10_log(store, SECOND)
    for base in (0, 6):
        upload_segment(store, DELETED, make_segment(base, timestamp_ms=OLD))
    adopt(store, now_ms=T0, clock=clock)
    manifest = resolve_manifest(store)
    states = [
        dataclasses.replace(s, cleaner_checkpoint=checkpoint) if s.topic_partition == COMPACTED else s
        for s in manifest.partitions
    ]
    commit_states(store, states, clock=clock)


def cfg(broker: dict[str, object] | None = None, **compacted: object) -> Config:
    settings = {**A10, **{name.replace("_", "."): value for name, value in compacted.items()}}
    return topics_config({"compacted": settings, "deleted": DELETE}, broker=broker)


def outlook(description: LakeDescription, tp: TopicPartition = COMPACTED) -> CompactionOutlook | None:
    (found,) = [p for p in description.partitions if (p.topic, p.partition) == (tp.topic, tp.partition)]
    return found.compaction


def describe_at(store: ObjectStore, config: Config, now_ms: int = T0) -> LakeDescription:
    return describe_lake(store, compaction=CompactionContext(config, now_ms))


def test_single_record_batches_are_94_bytes() -> None:
    assert len(single_record_segment(0, ts=T0)) == BATCH


def test_kafka_a10_log_to_clean_ratio_and_the_strict_dirty_ratio_rule(
    store: ObjectStore, clock: FakeClock
) -> None:
    # testLogToClean: firstDirty = seg2.base, uncleanable = seg4.base (min.compaction.lag.ms: seg4 is young).
    a10_lake(store, clock, checkpoint=2)

    found = outlook(describe_at(store, cfg()))

    clean, cleanable = 2 * BATCH, 2 * BATCH  # segments 0-1 / segments 2-3
    assert found == CompactionOutlook(
        first_dirty_offset=2,
        first_uncleanable_offset=4,
        dirty_ratio=cleanable / (clean + cleanable),
        compaction_delay_ms=0,  # max.compaction.lag.ms defaults to Long.MAX
        eligibility=Eligibility.BELOW_DIRTY_RATIO,  # 0.5 is not > min.cleanable.dirty.ratio 0.5
        next_run=NextRun.SKIP,
    )
    assert found.dirty_ratio == 0.5
    below = outlook(describe_at(store, cfg(min_cleanable_dirty_ratio=0.49)))
    assert below is not None
    assert (below.eligibility, below.next_run) == (Eligibility.DIRTY_RATIO, NextRun.CLEAN)


@pytest.mark.parametrize(
    ("checkpoint", "first_dirty", "first_uncleanable", "ratio"),
    [
        pytest.param(None, 0, 5, 5 / 5, id="no-checkpoint-starts-at-the-log-start"),
        pytest.param(0, 0, 5, 5 / 5, id="checkpoint-0"),
        pytest.param(2, 2, 5, 3 / 5, id="checkpoint-2"),
        pytest.param(4, 4, 5, 1 / 5, id="checkpoint-4"),
        pytest.param(5, 5, 5, 0.0, id="kafka_a10_first_dirty_is_the_active_base"),
        pytest.param(6, 6, 5, 0.0, id="checkpoint-at-the-log-end"),
        pytest.param(7, 0, 5, 5 / 5, id="checkpoint-past-the-log-end-resets-to-the-log-start"),
    ],
)
def test_kafka_a10_ratio_over_whole_segments(
    local_store: LocalStore,
    clock: FakeClock,
    checkpoint: int | None,
    first_dirty: int,
    first_uncleanable: int,
    ratio: float,
) -> None:
    # Two hours on, no segment is younger than min.compaction.lag.ms: the active segment (5) bounds the range;
    # clean = segments below the first dirty offset, cleanable = the non-active ones from it: (5 - d) / 5 of
    # the non-active bytes; the active segment never counts (testLogToCleanWithUncleanableSection).
    a10_lake(local_store, clock, checkpoint=None)
    manifest = resolve_manifest(local_store)
    states = tuple(
        dataclasses.replace(s, cleaner_checkpoint=checkpoint) if s.topic_partition == COMPACTED else s
        for s in manifest.partitions
    )
    context = CompactionContext(cfg(), T0 + 2 * HOUR)

    described = describe_manifest(
        dataclasses.replace(manifest, partitions=states), location="x", compaction=context
    )

    found = outlook(described)
    assert found is not None
    assert (found.first_dirty_offset, found.first_uncleanable_offset) == (first_dirty, first_uncleanable)
    assert found.dirty_ratio == ratio
    assert found.eligibility is (Eligibility.DIRTY_RATIO if ratio > 0.5 else Eligibility.BELOW_DIRTY_RATIO)


def test_max_compaction_lag_overdue_makes_it_eligible_below_the_dirty_ratio(
    store: ObjectStore, clock: FakeClock
) -> None:
    # maxCompactionDelay: the dirty non-active segments 2-4 have first batches at OLD, OLD, T0; cleanUntil =
    # T0 - 1h; the earliest (OLD = T0 - 2h) is an hour past it.
    a10_lake(store, clock, checkpoint=2)

    overdue = outlook(describe_at(store, cfg(max_compaction_lag_ms=HOUR)))
    not_yet = outlook(describe_at(store, cfg(max_compaction_lag_ms=3 * HOUR)))

    assert overdue is not None
    assert not_yet is not None
    assert (overdue.dirty_ratio, overdue.compaction_delay_ms) == (0.5, HOUR)
    assert (overdue.eligibility, overdue.next_run) == (Eligibility.MAX_COMPACTION_LAG, NextRun.CLEAN)
    assert (not_yet.compaction_delay_ms, not_yet.eligibility) == (0, Eligibility.BELOW_DIRTY_RATIO)


def test_describe_before_and_after_a_run_matches_what_the_run_did(
    store: ObjectStore, clock: FakeClock
) -> None:
    a10_lake(store, clock, checkpoint=2)
    config = cfg(max_compaction_lag_ms=HOUR)
    before = outlook(describe_at(store, config))

    result = run_at(store, config, T0, clock=clock)

    done = result.compaction.partition(COMPACTED)
    assert before is not None
    assert done is not None
    assert done.status is CompactionStatus.CLEANED
    assert done.eligibility is before.eligibility
    assert (done.first_dirty_offset, done.first_uncleanable_offset) == (
        before.first_dirty_offset,
        before.first_uncleanable_offset,
    )
    assert (done.dirty_ratio_before, done.compaction_delay_ms) == (
        before.dirty_ratio,
        before.compaction_delay_ms,
    )
    # the round kept only the latest "1" below its end offset 4: offsets 3, 4, 5 remain, read by both readers
    lake = read_lake(store, COMPACTED)
    assert (lake.offsets, lake.keys) == ([3, 4, 5], [1, 1, 1])
    assert lake.state.cleaner_checkpoint == 4

    clean = outlook(describe_at(store, config))
    later = outlook(describe_at(store, config, T0 + 2 * HOUR))

    # Clean at T0: the dirty section starts at the young segment 4, nothing is cleanable.
    assert clean == CompactionOutlook(4, 4, 0.0, 0, Eligibility.BELOW_DIRTY_RATIO, NextRun.SKIP)
    assert clean.dirty_ratio == done.dirty_ratio_after
    # Two hours on, segment 4 is old enough: one cleanable batch over the one clean batch (offset 3); its
    # first batch (T0) is an hour past max.compaction.lag.ms.
    assert later == CompactionOutlook(
        4, 5, BATCH / (BATCH + BATCH), HOUR, Eligibility.MAX_COMPACTION_LAG, NextRun.CLEAN
    )


def test_the_run_budget_defers_what_the_run_would_defer(local_store: LocalStore, clock: FakeClock) -> None:
    # Both partitions are an hour overdue (their dirty sections start with OLD batches); compacted-0 from its
    # checkpoint 2 (ratio 0.5), compacted-1 from offset 0 (ratio 1.0). KIP-354's order: most overdue first,
    # then the dirtiest; a budget of one partition per run defers compacted-0.
    a10_lake(local_store, clock, checkpoint=2, second=True)
    config = cfg({"kafka_segments.compaction.max.partitions.per.run": 1}, max_compaction_lag_ms=HOUR)
    context = CompactionContext(config, T0, compaction_budget(config))

    described = describe_lake(local_store, compaction=context)
    result = run_at(local_store, config, T0, clock=clock)

    first, second = outlook(described, COMPACTED), outlook(described, SECOND)
    assert first is not None
    assert second is not None
    assert (first.compaction_delay_ms, second.compaction_delay_ms) == (HOUR, HOUR)
    assert (first.dirty_ratio, second.dirty_ratio) == (0.5, 1.0)
    assert (first.next_run, second.next_run) == (NextRun.DEFER, NextRun.CLEAN)
    statuses = {p.topic_partition: p.status for p in result.compaction.partitions}
    assert statuses == {COMPACTED: CompactionStatus.DEFERRED, SECOND: CompactionStatus.CLEANED}
    assert "; budget per run: -1 bytes, 1 partitions (-1: none)" in described.to_text()


def test_a_disabled_cleaner_still_shows_the_log_figures(local_store: LocalStore, clock: FakeClock) -> None:
    a10_lake(local_store, clock, checkpoint=2)

    found = outlook(describe_at(local_store, cfg({"log.cleaner.enable": False}, max_compaction_lag_ms=HOUR)))

    assert found == CompactionOutlook(2, 4, 0.5, HOUR, Eligibility.CLEANER_DISABLED, NextRun.SKIP)


def test_a_partition_without_segments_is_an_empty_log(local_store: LocalStore, clock: FakeClock) -> None:
    a10_lake(local_store, clock, checkpoint=None)
    manifest = resolve_manifest(local_store)
    emptied = tuple(
        dataclasses.replace(s, segments=(), log_start_offset=6) if s.topic_partition == COMPACTED else s
        for s in manifest.partitions
    )
    context = CompactionContext(cfg(), T0)

    found = outlook(
        describe_manifest(dataclasses.replace(manifest, partitions=emptied), location="x", compaction=context)
    )

    assert found == CompactionOutlook(6, 6, 0.0, 0, Eligibility.EMPTY_LOG, NextRun.SKIP)


def test_without_a_configuration_the_keys_are_null_and_no_table_is_added(
    local_store: LocalStore, clock: FakeClock
) -> None:
    a10_lake(local_store, clock)

    described = describe_lake(local_store)

    assert all(p.compaction is None for p in described.partitions)
    assert all(p[key] is None for p in described.to_dict()["partitions"] for key in COMPACTION_KEYS)
    assert "compaction at now=" not in described.to_text()
    assert len(described.to_text().splitlines()) == 1 + 2 + 1


# --- the command line ---------------------------------------------------------------------------------------


def describe_cli(capsys: pytest.CaptureFixture[str], lake: Path, config: Path, *extra: str) -> str:
    code = main(["describe", "--lake", str(lake), "--config", str(config), "--now", str(T0), *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


@pytest.fixture
def cli_lake(local_store: LocalStore, clock: FakeClock, tmp_path: Path) -> tuple[Path, Path]:
    a10_lake(local_store, clock, checkpoint=2)
    config = tmp_path / "compaction.yaml"
    config.write_text(config_yaml({"compacted": {**A10, "max.compaction.lag.ms": HOUR}, "deleted": DELETE}))
    return local_store.root, config


def test_cli_json_adds_the_compaction_keys(
    capsys: pytest.CaptureFixture[str], cli_lake: tuple[Path, Path]
) -> None:
    lake, config = cli_lake

    document = json.loads(describe_cli(capsys, lake, config, "--json"))

    by_topic = {p["topic"]: p for p in document["partitions"]}
    compacted, deleted = by_topic["compacted"], by_topic["deleted"]
    assert {key: compacted[key] for key in COMPACTION_KEYS} == {
        "first_dirty_offset": 2,
        "first_uncleanable_offset": 4,
        "dirty_ratio": 0.5,
        "compaction_delay_ms": HOUR,
        "compaction_eligibility": "max.compaction.lag.ms",
        "compaction_next_run": "clean",
    }
    assert (compacted["cleaner_checkpoint"], compacted["log_end_offset"], compacted["segment_count"]) == (
        2,
        6,
        6,
    )
    assert {key: deleted[key] for key in COMPACTION_KEYS} == dict.fromkeys(COMPACTION_KEYS)
    assert "holder" in compacted  # the consumed-retention view is still there


def test_cli_text_shows_a_compaction_table_after_the_summary(
    capsys: pytest.CaptureFixture[str], cli_lake: tuple[Path, Path]
) -> None:
    lake, config = cli_lake

    lines = describe_cli(capsys, lake, config).splitlines()

    start = lines.index("compaction at now=1763700000000 (2025-11-21T04:40:00.000Z)")
    assert lines[start - 1] == ""
    assert lines[start - 2].startswith("2 partition(s) of 2 topic(s)")
    assert lines[start + 1].split() == [column.header for column in COMPACTION_COLUMNS]
    assert lines[start + 2].split() == [
        "compacted",
        "0",
        "2",
        "4",
        "0.5000",
        str(HOUR),
        "max.compaction.lag.ms",
        "clean",
    ]
    assert lines[start + 3].split() == ["deleted", "0", "-", "-", "-", "-", "-", "-"]
    assert lines[start + 4] == ""
    assert lines[start + 5].startswith("retention at now=1763700000000")
    assert lines[start + 5].startswith("retention at now=1763700000000 (2025-11-21T04:40:00.000Z; ")
    # the first table is unchanged
    assert lines[0].split()[-1] == "CHANGED-BY-RUN"
