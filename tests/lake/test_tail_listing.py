"""A run on a format 2 lake lists each partition after its newest segment, not the whole lake
(``lake.tail_listing``; docs/metadata-format-2.md, "Adoption without listing the lake"): what it sees, what
it cannot see below a partition's newest segment, and ``--full-listing``, which sees that too."""

from __future__ import annotations

from pathlib import Path

import pytest
from counting_store import SEGMENTS, counting_store
from kafka_segments.clock import wall_clock_ms
from kafka_segments.lake.gc import collect_garbage
from kafka_segments.lake.history import read_head
from kafka_segments.lake.tail_listing import warm_listing
from kafka_segments.lake.upgrade import upgrade
from kafka_segments.pipeline.offsets_input import OffsetsChoice
from kafka_segments.pipeline.retention_run import run_retention
from kafka_segments.pipeline.run_result import RunResult
from kafka_segments.pipeline.sequence import RunOptions
from kafka_segments.state import MANIFEST_FORMAT_2, PartitionState
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock, make_segment, upload_segment

from lake.gc_helpers import crashed_run
from lake.retention_helpers import config, topic_yaml

pytestmark = pytest.mark.lake

TP = TopicPartition("t", 0)
OTHER = TopicPartition("t", 1)
NOW = T0 + 3_600_000
CFG = config(topic_yaml())


def _run(store: ObjectStore, clock: FakeClock, *, full_listing: bool = False, gc: bool = True) -> RunResult:
    clock.advance(60_000)
    options = RunOptions(now_ms=clock.now_ms, offsets=OffsetsChoice(), full_listing=full_listing, gc=gc)
    return run_retention(store, CFG, options, clock=clock)


def _state(store: ObjectStore, tp: TopicPartition = TP) -> PartitionState:
    head = read_head(store)
    assert head is not None
    state = head.partition(tp)
    assert state is not None
    return state


@pytest.fixture
def lake(tmp_path: Path) -> tuple[ObjectStore, FakeClock]:
    """A format 2 lake of two partitions of three segments (offsets 0-5)."""
    store = LocalStore(tmp_path / "lake")
    clock = FakeClock(NOW)
    for tp in (TP, OTHER):
        for base in (0, 2, 4):
            upload_segment(store, tp, make_segment(base, batches=1), with_indexes=False)
    _run(store, clock)
    upgrade(store, clock=clock)
    head = read_head(store)
    assert head is not None
    assert head.format_version == MANIFEST_FORMAT_2
    return store, clock


def test_a_run_lists_each_partition_from_its_newest_segment(lake: tuple[ObjectStore, FakeClock]) -> None:
    store, clock = lake
    counting = counting_store(store)
    _run(counting, clock, gc=False)
    listings = [call.key for call in counting.calls if call.kind == "list"]
    assert sorted(key for key in listings if key.startswith("t-")) == ["t-0/", "t-1/"]
    # The top level's three folders (_kafka_segments/ too) and each partition's newest .log (a whole
    # listing: every .log, 6).
    assert counting.counts().listed[SEGMENTS] == 5


def test_a_new_segment_and_a_new_partition_are_adopted(lake: tuple[ObjectStore, FakeClock]) -> None:
    store, clock = lake
    new = TopicPartition("t", 2)
    upload_segment(store, TP, make_segment(6, batches=1), with_indexes=False)
    upload_segment(store, new, make_segment(0, batches=1), with_indexes=False)
    result = _run(store, clock)
    assert sorted(entry.key for entry in result.adoption.adopted) == [
        "t-0/00000000000000000006.log",
        "t-2/00000000000000000000.log",
    ]
    assert [segment.base_offset for segment in _state(store).segments] == [0, 2, 4, 6]
    assert _state(store, new).log_end_offset == 2
    assert _state(store, OTHER).log_end_offset == 6


def test_a_regrown_active_segment_is_read_again(lake: tuple[ObjectStore, FakeClock]) -> None:
    store, clock = lake
    grown = make_segment(4, batches=2)
    assert grown.log.startswith(make_segment(4, batches=1).log)
    upload_segment(store, TP, grown, with_indexes=False)
    result = _run(store, clock)
    assert [entry.key for entry in result.adoption.regrown] == ["t-0/00000000000000000004.log"]
    assert _state(store).log_end_offset == 8


def test_below_the_newest_segment_only_a_full_listing_sees_a_late_upload_or_a_deleted_segment(
    lake: tuple[ObjectStore, FakeClock],
) -> None:
    """What a format 1 run (or ``--full-listing``) reports and a tail listing cannot see: a segment
    uploaded late below the newest one (adoption quarantines it: it overlaps the log) and a live segment
    deleted (quarantined: missing). The tail run changes nothing there (and loses nothing: the state is
    the committed one); reading the deleted segment fails on its absence."""
    store, clock = lake
    late = make_segment(3, batches=1, records_per_batch=1)
    upload_segment(store, TP, late, with_indexes=False)
    store.delete(f"{OTHER.dir_name}/00000000000000000002.log")
    before = (_state(store), _state(store, OTHER))

    tail = _run(store, clock)
    assert tail.adoption.quarantined == ()
    assert (_state(store), _state(store, OTHER)) == before

    full = _run(store, clock, full_listing=True)
    quarantined = {(item.topic_partition, item.key) for item in full.adoption.quarantined}
    assert quarantined == {
        (TP, "t-0/00000000000000000003.log"),
        (OTHER, "t-1/00000000000000000002.log"),
    }
    assert (_state(store), _state(store, OTHER)) == before


def test_a_full_listing_lists_the_whole_lake_once(lake: tuple[ObjectStore, FakeClock]) -> None:
    store, clock = lake
    counting = counting_store(store)
    _run(counting, clock, full_listing=True)
    assert "t-0/" not in [call.key for call in counting.calls if call.kind == "list"]


def test_gc_still_sweeps_an_orphan_below_the_newest_segment_of_an_unchanged_partition(
    lake: tuple[ObjectStore, FakeClock],
) -> None:
    """A crashed run's output below a partition's newest segment: the runs' tail listing does not see it
    (the partition stays unread), gc's listing must (docs/metadata-format-2.md, "gc"): the run's
    ``input-manifest.json`` names the partition, and gc, which keeps a record of the runs it settled,
    lists that partition whole (``lake.gc_listing``)."""
    store, clock = lake
    orphan = crashed_run(store, clock, OTHER, base_offset=2)
    upload_segment(store, TP, make_segment(6, batches=1), with_indexes=False)
    result = _run(store, clock)  # commits the crashed run's version: it can no longer commit
    assert OTHER not in {state.topic_partition for state in result.adoption.partitions}
    report = collect_garbage(store, now_ms=wall_clock_ms() + 1, orphan_min_age_ms=0)
    assert [item.key for item in report.swept] == [orphan]


def test_the_command_lines_warm_up_lists_what_the_run_will_list(lake: tuple[ObjectStore, FakeClock]) -> None:
    """``kafka-segments run`` lists a local lake on a thread while it loads its modules: a format 2 head's
    tails (``full``: the whole lake, as ``--full-listing`` does)."""
    store, _ = lake
    counting = counting_store(store)
    warm_listing(counting)
    assert counting.counts().listed[SEGMENTS] == 5  # the top level's folders, each partition's newest .log
    whole = counting_store(store)
    warm_listing(whole, full=True)
    assert [call.key for call in whole.calls if call.kind == "list"] == [""]
