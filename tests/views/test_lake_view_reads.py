"""The lake view on a format 2 lake (issue 33 point 5; ``views.lake_view_reads``): its partition table comes
from the root's summaries, and it reads the partition manifests of only the partitions the next run may
change (``lake.summary_scope``, the run's own rule) or whose numbers the summary does not hold. Its page
says what the same state says in format 1 (every state read), and its next-run plan what ``plan`` says.
Counted through ``CountingStore`` on both backends: the reads must not grow with the unchanged
partitions."""

from __future__ import annotations

from pathlib import Path

import pytest
from counting_store import PARTITIONS, CountingStore, counting_store
from kafka_segments.config import Config, load_config
from kafka_segments.lake.format2 import PIECES_PREFIX
from kafka_segments.lake.upgrade import upgrade
from kafka_segments.pipeline.compaction.stage import compaction_budget
from kafka_segments.pipeline.stages import next_run_offsets
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kafka_segments.views.describe_compaction import CompactionContext
from kafka_segments.views.lake_view import LakeView, build_lake_view
from kit import FakeClock
from lake.retention_helpers import config, group, run, upload_fifteen_records, write_snapshot
from manifest_files import format_1_commits

from views.lake_view_helpers import ViewLake, build_view_lake

pytestmark = pytest.mark.lake

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
NOW = 1_000_000
QUIET = "quiet"
DUE = "due"
VIEW_CONFIG = f"""\
topics:
  {QUIET}:
    retention.ms: {DAY_MS}
  {DUE}:
    retention.ms: 100
"""


def view(store: ObjectStore, cfg: Config, *, now_ms: int, version: int | None = None) -> LakeView:
    context = CompactionContext(config=cfg, now_ms=now_ms, budget=compaction_budget(cfg))
    offsets = next_run_offsets(store, now_ms=now_ms)
    return build_lake_view(store, now_ms=now_ms, version=version, offsets=offsets, compaction=context)


def what_it_says(page: LakeView) -> tuple[object, ...]:
    """Everything the page says of the partitions (not the version's own fields; of the history, its point
    for the version shown)."""
    return (
        [p.to_dict() for p in page.description.partitions],
        dict(page.retention),
        page.groups,
        [(t, p[-1].size_bytes, p[-1].log_start_offsets) for t, p in page.history.topics.items()],
    )


@pytest.fixture(scope="module")
def upgraded(tmp_path_factory: pytest.TempPathFactory) -> ViewLake:
    """The view tests' lake (a compacted topic, consumed retention, two groups) with version 3: version 2
    again in format 2."""
    with format_1_commits():  # versions 1 and 2 as the previous release wrote them
        lake = build_view_lake(tmp_path_factory.mktemp("lake-view-f2") / "lake")
    upgrade(LocalStore(lake.root), clock=FakeClock(lake.now_ms))
    return lake


@pytest.mark.parametrize("later_ms", [0, HOUR_MS, DAY_MS, 400 * DAY_MS])
def test_the_page_from_summaries_says_what_every_state_says(upgraded: ViewLake, later_ms: int) -> None:
    store = LocalStore(upgraded.root)
    cfg = load_config(upgraded.config)
    now_ms = upgraded.now_ms + later_ms
    from_states = view(store, cfg, now_ms=now_ms, version=2)  # format 1: every state
    from_summaries = view(store, cfg, now_ms=now_ms, version=3)

    assert what_it_says(from_summaries) == what_it_says(from_states)


def _lake(store: ObjectStore, clock: FakeClock, *, quiet: int) -> None:
    """``due``-0 (its segments old enough for retention at NOW + a day) and ``quiet`` partitions of
    ``quiet`` (nothing due), adopted and upgraded to format 2."""
    upload_fifteen_records(store, tp=TopicPartition(DUE, 0), segment_ts=[10, 20, 30])
    for partition in range(quiet):
        upload_fifteen_records(store, tp=TopicPartition(QUIET, partition), ts=NOW)
    run(store, config("topics: {}\n"), now_ms=NOW, clock=clock)
    upgrade(store, clock=clock)


def _pieces_read(store: CountingStore) -> set[str]:
    return {
        call.key[len(PIECES_PREFIX) :].split("/")[0]
        for call in store.calls
        if call.area == PARTITIONS and call.kind == "get"
    }


@pytest.mark.parametrize("quiet", [2, 12])
def test_the_page_reads_only_what_the_next_run_may_change(
    store: ObjectStore, clock: FakeClock, tmp_path: Path, quiet: int
) -> None:
    """A group caught up on every quiet partition (its lag from the summary), one due partition: the page
    reads due-0's pieces and no quiet partition's, with 2 quiet partitions as with 12."""
    _lake(store, clock, quiet=quiet)
    offsets = [(p, 15, NOW) for p in range(quiet)]
    reader = group("reader", offsets, subscribed=[QUIET], topic=QUIET)
    snapshot = write_snapshot(tmp_path / "offsets.json", [reader], taken_at_ms=NOW)
    counted = counting_store(store)
    cfg = config(VIEW_CONFIG)
    now_ms = NOW + DAY_MS
    context = CompactionContext(config=cfg, now_ms=now_ms)
    offsets = next_run_offsets(counted, now_ms=now_ms, file=str(snapshot))
    page = build_lake_view(counted, now_ms=now_ms, offsets=offsets, compaction=context)

    assert _pieces_read(counted) == {f"{DUE}-0"}
    assert len(page.description.partitions) == quiet + 1
    assert page.retention[TopicPartition(DUE, 0)].deleted_segments == 3
    assert page.retention[TopicPartition(QUIET, 0)].deleted_segments == 0
    assert [(p.lag_records, p.lag_bytes) for p in page.groups[0].partitions] == [(0, 0)] * quiet
    planned = run(store, cfg, now_ms=now_ms, clock=clock, offsets_file=snapshot, dry_run=True).plan
    for plan in planned.partitions:  # the partitions the dry run read: the same plan
        shown = page.retention[plan.topic_partition]
        assert shown.deleted_segments == len(plan.deletions)
        assert shown.log_start_offset == plan.new_log_start_offset
