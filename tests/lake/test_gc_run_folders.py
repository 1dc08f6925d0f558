"""gc's run folder retention on both backends (``lake.run_folders``): off by default; with it, the folders of
ended runs go once unchanged for the retention, never the folder of a run that committed a retained manifest
or of a run without an outcome; the run record is deleted first and the outcome last, so an interrupted pass
is finished by the next one; a retention under an hour is refused. A run's gc takes this retention and the
number of manifests to keep from the configuration (``pipeline.run_gc``)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from forwarding_store import ForwardingStore
from kafka_segments.clock import wall_clock_ms
from kafka_segments.config import Config, parse_config
from kafka_segments.config.catalogue import MIN_RUN_FOLDER_RETENTION_MS
from kafka_segments.lake.commit import abort_run
from kafka_segments.lake.gc import collect_garbage
from kafka_segments.lake.gc_report import GcReport
from kafka_segments.lake.history import manifest_versions
from kafka_segments.lake.layout import RUNS_PREFIX, manifest_key, outcome_key, run_prefix, run_record_key
from kafka_segments.lake.recover import recover
from kafka_segments.lake.run_folders import expired_run_folders
from kafka_segments.pipeline.run_gc import collect_run_garbage
from kafka_segments.storage import ObjectStore
from kafka_segments.storage.base import ObjectMeta
from kit import FakeClock

from lake.gc_helpers import FailingDeletes, append, head_of, keys, stage, start, write

pytestmark = pytest.mark.lake

RETENTION_MS = 7 * 86_400_000


def folder(store: ObjectStore, run_id: str) -> set[str]:
    return {key for key in keys(store) if key.startswith(run_prefix(run_id))}


def run_ids(store: ObjectStore) -> set[str]:
    return {key[len(RUNS_PREFIX) :].split("/")[0] for key in keys(store) if key.startswith(RUNS_PREFIX)}


def gc(store: ObjectStore, now_ms: int, *, dry_run: bool = False, retain_manifests: int = 1) -> GcReport:
    return collect_garbage(
        store,
        now_ms=now_ms,
        dry_run=dry_run,
        retain_manifests=retain_manifests,
        run_folder_retention_ms=RETENTION_MS,
    )


def lake_with_history(store: ObjectStore, clock: FakeClock) -> tuple[list[str], str]:
    """Three committed runs and one staged that never ended: (the committed run ids, the staged one)."""
    committed = [append(store, clock).run_id for _ in range(3)]
    run, base = start(store, clock)
    assert base is not None
    stage(store, run, base, [*base.partitions[0].segments, write(store, clock, run, 30)])
    return committed, run.run_id


def test_every_run_folder_is_kept_without_a_retention(store: ObjectStore, clock: FakeClock) -> None:
    committed, staged = lake_with_history(store, clock)

    report = collect_garbage(store, now_ms=wall_clock_ms() + 100 * RETENTION_MS, dry_run=False)

    assert run_ids(store) == {*committed, staged}
    assert (report.run_folder_retention_ms, report.expired_runs) == (None, ())
    assert "run folders: all kept" in report.to_text()


def test_ended_runs_folders_go_after_the_retention_but_not_the_heads_or_an_unended_runs(
    store: ObjectStore, clock: FakeClock
) -> None:
    committed, staged = lake_with_history(store, clock)
    written = wall_clock_ms()  # objects carry the real time of their writes

    assert gc(store, written).expired_runs == ()  # nothing is a week old yet
    report = gc(store, written + RETENTION_MS + 60_000)

    head_run = head_of(store).run_id
    assert head_run == committed[-1]
    assert {run.run_id for run in report.expired_runs} == set(committed[:2])
    assert run_ids(store) == {head_run, staged}
    assert report.ok
    settled = recover(store, clock=clock)
    assert ([r.run_id for r in settled.runs], settled.changed) == ([staged], False)  # still in progress
    assert append(store, clock).version == len(committed) + 1  # the lake goes on


def test_a_dry_run_reports_the_folders_and_deletes_nothing(store: ObjectStore, clock: FakeClock) -> None:
    committed, _ = lake_with_history(store, clock)
    first = folder(store, committed[0])
    before = keys(store)

    report = gc(store, wall_clock_ms() + RETENTION_MS + 60_000, dry_run=True)

    assert keys(store) == before
    expired = report.to_dict()["expired_runs"]
    assert {run["run_id"] for run in expired} == set(committed[:2])
    (oldest,) = (run for run in expired if run["run_id"] == committed[0])
    assert set(oldest["keys"]) == first
    assert oldest["folder"] == run_prefix(committed[0])
    assert report.to_dict()["run_folder_retention_ms"] == RETENTION_MS
    assert f"would delete  {run_prefix(committed[0])}" in report.to_text()
    assert set(report.deleted_keys) >= first


class RecordingDeletes(ForwardingStore):
    """Records every ``delete_many`` batch."""

    def __init__(self, inner: ObjectStore) -> None:
        super().__init__(inner)
        self.batches: list[list[str]] = []

    def delete_many(self, keys: Iterable[str]) -> None:
        batch = list(keys)
        self.batches.append(batch)
        self.inner.delete_many(batch)


def test_the_run_record_goes_first_and_the_outcome_last(store: ObjectStore, clock: FakeClock) -> None:
    committed, _ = lake_with_history(store, clock)
    recording = RecordingDeletes(store)

    gc(recording, wall_clock_ms() + RETENTION_MS + 60_000)

    records, rest, outcomes = recording.batches[-3:]
    assert sorted(records) == sorted(run_record_key(run_id) for run_id in committed[:2])
    assert sorted(outcomes) == sorted(outcome_key(run_id) for run_id in committed[:2])
    assert {key[: len(run_prefix(committed[0]))] for key in rest} == {run_prefix(r) for r in committed[:2]}
    assert not set(rest) & {*records, *outcomes}


def test_a_folder_not_deleted_whole_keeps_its_outcome_and_the_next_pass_finishes_it(
    store: ObjectStore, clock: FakeClock
) -> None:
    committed, _ = lake_with_history(store, clock)
    stuck = run_prefix(committed[0]) + "manifest.json"
    assert stuck in keys(store)
    now = wall_clock_ms() + RETENTION_MS + 60_000

    report = gc(FailingDeletes(store, [stuck]), now)

    assert [failure.key for failure in report.failures] == [stuck]
    assert [run.run_id for run in report.expired_runs] == [committed[1]]
    assert folder(store, committed[0]) == {stuck, outcome_key(committed[0])}
    assert committed[0] not in {r.run_id for r in recover(store, clock=clock).runs}  # no record: no run

    again = gc(store, now)

    assert [run.run_id for run in again.expired_runs] == [committed[0]]
    assert folder(store, committed[0]) == set()


def test_an_old_manifest_that_cannot_be_deleted_holds_the_run_folders_back(
    store: ObjectStore, clock: FakeClock
) -> None:
    committed, _ = lake_with_history(store, clock)
    first_manifest = manifest_key(1)
    assert first_manifest in keys(store)

    report = gc(FailingDeletes(store, [first_manifest]), wall_clock_ms() + RETENTION_MS + 60_000)

    assert report.expired_runs == ()
    assert set(committed) <= run_ids(store)


@pytest.mark.parametrize("retention_ms", [0, MIN_RUN_FOLDER_RETENTION_MS - 1])
def test_a_retention_under_an_hour_is_refused(store: ObjectStore, retention_ms: int) -> None:
    with pytest.raises(ValueError, match="at least 3600000"):
        collect_garbage(store, run_folder_retention_ms=retention_ms)


def test_a_runs_gc_takes_the_retention_from_the_configuration(store: ObjectStore, clock: FakeClock) -> None:
    committed, _ = lake_with_history(store, clock)
    aborted, _ = start(store, clock)
    abort_run(store, aborted.run_id, reason="validation failed", clock=clock)
    two_hours_later = wall_clock_ms() + 2 * MIN_RUN_FOLDER_RETENTION_MS
    config = parse_config("broker:\n  kafka_segments.run.folder.retention.ms: 3600000\n", source="t.yaml")

    default = collect_run_garbage(store, Config.default(), dry_run=False, clock=lambda: two_hours_later)
    report = collect_run_garbage(store, config, dry_run=False, clock=lambda: two_hours_later)

    assert (default.run_folder_retention_ms, default.expired_runs) == (None, ())
    assert report.run_folder_retention_ms == MIN_RUN_FOLDER_RETENTION_MS
    assert [run.run_id for run in report.expired_runs] == [aborted.run_id]  # the others made kept manifests
    assert set(committed) <= run_ids(store)


def test_only_an_outcome_directly_in_the_folder_ends_a_run() -> None:
    def meta(key: str, modified_ms: int = 0) -> ObjectMeta:
        return ObjectMeta(RUNS_PREFIX + key, 1, "e", modified_ms)

    listing = [
        meta("ended/run.json"),
        meta("ended/outcome.json"),
        meta("ended/docs/page.html", modified_ms=5),
        meta("open/run.json"),
        meta("open/docs/outcome.json"),  # a file named so deeper in the folder ends nothing
        meta("kept/outcome.json"),
    ]

    (ended,) = expired_run_folders(listing, kept_run_ids=frozenset({"kept"}), now_ms=10, retention_ms=5)

    assert ended.run_id == "ended"
    assert ended.last_modified_ms == 5
    assert ended.keys == tuple(
        RUNS_PREFIX + k for k in ("ended/run.json", "ended/docs/page.html", "ended/outcome.json")
    )
    assert (
        expired_run_folders(listing, kept_run_ids=frozenset(), now_ms=9, retention_ms=5)[0].run_id == "kept"
    )


def test_a_runs_gc_keeps_the_configured_number_of_manifests(store: ObjectStore, clock: FakeClock) -> None:
    for _ in range(4):
        append(store, clock)
    config = parse_config("broker:\n  kafka_segments.retain.manifests: 2\n", source="t.yaml")

    default = collect_run_garbage(store, Config.default(), dry_run=True)
    report = collect_run_garbage(store, config, dry_run=False)

    assert (default.retained_versions, default.deleted_manifests) == ((1, 2, 3, 4), ())
    assert (report.retained_versions, report.deleted_manifests) == ((3, 4), (1, 2))
    assert manifest_versions(store) == [3, 4]
