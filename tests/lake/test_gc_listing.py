"""gc on a format 2 lake lists each partition's tail, not the whole lake, once a pass has recorded the runs it
settled (``lake.gc_listing``, ``lake.gc_record``; docs/metadata-format-2.md, "gc"); it lists the lake whole,
and says why, whenever it cannot prove the tails show everything it may delete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from counting_store import SEGMENTS, counting_store
from kafka_segments.cli.main import main
from kafka_segments.clock import wall_clock_ms
from kafka_segments.lake.gc import collect_garbage
from kafka_segments.lake.gc_record import GC_RECORD_KEY
from kafka_segments.lake.recover import RecoverAction, recover
from kafka_segments.lake.sweep import object_run_id
from kafka_segments.lake.upgrade import upgrade
from kafka_segments.pipeline.offsets_input import OffsetsChoice
from kafka_segments.pipeline.retention_run import run_retention
from kafka_segments.pipeline.sequence import RunOptions
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.storage.base import Overwrite
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock, make_segment, upload_segment

from lake.gc_helpers import crashed_run, start
from lake.retention_helpers import config, topic_yaml

pytestmark = pytest.mark.lake

TP = TopicPartition("t", 0)
OTHER = TopicPartition("t", 1)
CFG = config(topic_yaml())
HOUR_MS = 3_600_000
WHOLE = "listed the whole lake"
SCOPED = "listed each partition's tail"
LISTS = ["", "_kafka_segments/", "_kafka_segments/manifests/", "t-0/", "t-1/"]
"""A scoped pass's list requests: the top level's folders, ``_kafka_segments/``, the versions, each tail."""


def _run(store: ObjectStore, clock: FakeClock) -> None:
    clock.advance(60_000)
    run_retention(store, CFG, RunOptions(now_ms=clock.now_ms, offsets=OffsetsChoice(), gc=False), clock=clock)


def _exists(store: ObjectStore, key: str) -> bool:
    return any(meta.key == key for meta in store.list(key))


def _listed_segment_area(store: ObjectStore, *, later_ms: int = 0) -> tuple[list[str], int]:
    """A pass's list requests and the objects they showed outside ``_kafka_segments/``."""
    counting = counting_store(store)
    _gc(counting, later_ms=later_ms)
    lists = sorted(call.key for call in counting.calls if call.kind == "list")
    return lists, counting.counts().listed[SEGMENTS]


def _gc(store: ObjectStore, *, later_ms: int = 0, full: bool = False, execute: bool = True) -> str:
    """One pass ``later_ms`` after now (orphans an hour old are swept); its listing line."""
    report = collect_garbage(
        store, now_ms=wall_clock_ms() + later_ms, dry_run=not execute, orphan_min_age_ms=HOUR_MS, full=full
    )
    assert report.ok
    assert report.listing is not None
    assert f"listing: {report.listing}" in report.to_text()
    return report.listing


@pytest.fixture
def lake(tmp_path: Path) -> tuple[LocalStore, FakeClock]:
    """A format 2 lake of two partitions of three segments, and no record of a gc pass yet."""
    store = LocalStore(tmp_path / "lake")
    clock = FakeClock(T0 + HOUR_MS)
    for tp in (TP, OTHER):
        for base in (0, 2, 4):
            upload_segment(store, tp, make_segment(base, batches=1), with_indexes=False)
    _run(store, clock)
    upgrade(store, clock=clock)
    return store, clock


def test_the_first_pass_lists_the_whole_lake_then_the_tails(lake: tuple[LocalStore, FakeClock]) -> None:
    store, _ = lake
    assert _gc(store, execute=False) == f"{WHOLE}: no record of a complete gc pass ({GC_RECORD_KEY})"
    assert not _exists(store, GC_RECORD_KEY)  # a dry run records nothing
    assert _gc(store).startswith(WHOLE)
    assert _gc(store).startswith(SCOPED)
    # The folders, the metadata, each tail: the top level's three folders and each partition's newest .log
    # (a whole listing shows all six).
    assert _listed_segment_area(store) == (LISTS, 5)


@pytest.mark.parametrize("record", [b"{not json", b'{"format_version":1}', b'{"format_version":9}'])
def test_a_record_that_cannot_be_read_means_the_whole_listing(
    lake: tuple[LocalStore, FakeClock], record: bytes
) -> None:
    store, _ = lake
    _gc(store)
    store.put(GC_RECORD_KEY, record, mode=Overwrite())
    assert _gc(store).startswith(f"{WHOLE}: the record of the last gc pass is unreadable")
    assert _gc(store).startswith(SCOPED)  # the whole pass wrote a good one


def test_a_run_without_an_outcome_means_the_whole_listing(lake: tuple[LocalStore, FakeClock]) -> None:
    store, clock = lake
    _gc(store)
    run, _ = start(store, clock, operation="run")
    assert _gc(store) == f"{WHOLE}: run {run.run_id} has no outcome (it may still be writing)"
    assert _gc(store).startswith(WHOLE)  # until it has one


def test_full_lists_the_whole_lake(
    lake: tuple[LocalStore, FakeClock], capsys: pytest.CaptureFixture[str]
) -> None:
    store, _ = lake
    _gc(store)
    assert _gc(store, full=True) == f"{WHOLE}: --full"
    assert main(["gc", "--lake", str(store.root), "--full", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["listing"] == f"{WHOLE}: --full"


def test_a_run_s_gc_lists_as_the_run_does(lake: tuple[LocalStore, FakeClock]) -> None:
    """The gc a run ends with lists the lake whole when the run does (``run --full-listing``, the DAG's
    ``full_listing``)."""
    store, clock = lake
    _gc(store)
    for full_listing, listing in ((False, SCOPED), (True, f"{WHOLE}: --full")):
        clock.advance(60_000)
        options = RunOptions(now_ms=clock.now_ms, offsets=OffsetsChoice(), full_listing=full_listing)
        result = run_retention(store, CFG, options, clock=clock)
        assert result.gc is not None
        assert result.gc.listing is not None
        assert result.gc.listing.startswith(listing)


def test_a_crashed_run_s_orphans_below_an_unchanged_tail_are_swept_once_old_enough(
    lake: tuple[LocalStore, FakeClock],
) -> None:
    store, clock = lake
    _gc(store)
    orphan = crashed_run(store, clock, OTHER, base_offset=2)
    upload_segment(store, TP, make_segment(6, batches=1), with_indexes=False)
    _run(store, clock)  # takes the crashed run's version: it can no longer commit
    assert _gc(store).startswith(SCOPED)
    assert _exists(store, orphan)  # too young: left, and the run stays unsettled
    assert _gc(store, later_ms=2 * HOUR_MS).startswith(SCOPED)
    assert not _exists(store, orphan)
    # The run is settled: its partition is listed from its tail again (one .log of three); t-0, which the
    # last run changed, differs between the retained versions and is listed whole (its four .log).
    assert _listed_segment_area(store, later_ms=2 * HOUR_MS) == (sorted([*LISTS, "t-0/"]), 3 + 1 + 4 + 1)


def test_an_object_no_run_folder_names_is_found_by_full_only(lake: tuple[LocalStore, FakeClock]) -> None:
    """An object written by hand below a tail, named as a run's that has no folder: the tails cannot show it
    (what ``--full`` is for)."""
    store, _ = lake
    _gc(store)
    orphan = f"{OTHER.dir_name}/00000000000000000002-20200101T000000Z-0badc0de.log"
    store.put(orphan, make_segment(2, batches=1).log)
    _gc(store, later_ms=2 * HOUR_MS)
    assert _exists(store, orphan)
    _gc(store, later_ms=2 * HOUR_MS, full=True)
    assert not _exists(store, orphan)


def test_recover_discards_a_crashed_run_from_the_partitions_it_adopted(
    lake: tuple[LocalStore, FakeClock],
) -> None:
    """``recover`` finds a discarded run's objects from its ``input-manifest.json``: the pieces and the
    partitions it names, not the whole lake."""
    store, clock = lake
    orphan = crashed_run(store, clock, OTHER, base_offset=2, ended=False)
    upload_segment(store, TP, make_segment(6, batches=1), with_indexes=False)
    _run(store, clock)  # its recover leaves the crashed run (in progress); it commits the run's version
    counting = counting_store(store)
    report = recover(counting)
    assert [run.action for run in report.runs] == [RecoverAction.DISCARDED]
    assert report.runs[0].deleted_keys == (orphan,)
    lists = [call.key for call in counting.calls if call.kind == "list"]
    assert "" not in lists
    assert [key for key in lists if key.startswith("t-")] == [f"{OTHER.dir_name}/"]


def test_a_scoped_pass_keeps_the_folder_of_a_run_whose_objects_it_did_not_sweep_yet(
    lake: tuple[LocalStore, FakeClock],
) -> None:
    """The folder is how a scoped pass finds a run's objects: it outlives them (``--run-folder-retention-ms``
    shorter than ``--orphan-min-age-ms``)."""
    store, clock = lake
    _gc(store)
    orphan = crashed_run(store, clock, OTHER, base_offset=2)
    run_id = object_run_id(orphan)
    upload_segment(store, TP, make_segment(6, batches=1), with_indexes=False)
    _run(store, clock)

    def gc_later(hours: int) -> tuple[bool, bool]:
        """A pass ``hours`` later (orphans 3 hours old, run folders 1 hour); whether the orphan and the
        run's folder are still there."""
        report = collect_garbage(
            store,
            now_ms=wall_clock_ms() + hours * HOUR_MS,
            dry_run=False,
            orphan_min_age_ms=3 * HOUR_MS,
            run_folder_retention_ms=HOUR_MS,
        )
        assert report.ok
        assert report.listing is not None
        assert report.listing.startswith(SCOPED)
        folder = any(True for _ in store.list(f"_kafka_segments/runs/{run_id}/"))
        return _exists(store, orphan), folder

    assert gc_later(2) == (True, True)  # the orphan is too young; its run's folder is due, and kept
    assert gc_later(4) == (False, True)  # swept; the folder goes in a later pass
    assert gc_later(4) == (False, False)
