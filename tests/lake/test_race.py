"""Writers racing for the same version, on every backend (local, moto's S3, ministack's S3): exactly one
wins, every other one gets ``CommitConflictError`` (and is recorded as aborted), nothing of the losers is
visible, and the versions stay contiguous."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from kafka_segments.errors import CommitConflictError
from kafka_segments.lake import Manifest, commit_run, read_head
from kafka_segments.lake.checkpoint_files import checkpoint_files_match
from kafka_segments.lake.history import manifest_versions, read_manifest
from kafka_segments.lake.run_folder import read_outcome
from kafka_segments.lake.runs import Outcome
from kafka_segments.storage import LocalStore, ObjectStore
from kit import FakeClock
from ministack_fixtures import BACKENDS, backend_store

from lake.commit_child import stage_appending_run

pytestmark = pytest.mark.lake


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    return backend_store(request, tmp_path)


WRITERS = 3


@dataclass
class Race:
    run_ids: list[str]
    won: list[Manifest] = field(default_factory=list)
    lost: dict[str, BaseException] = field(default_factory=dict)


def _race(store: ObjectStore, clock: FakeClock, writers: int) -> Race:
    """Stage ``writers`` runs on the current head, then commit them all at once (one thread each)."""
    race = Race([stage_appending_run(store, clock=clock)[0].run_id for _ in range(writers)])
    barrier = threading.Barrier(writers)
    lock = threading.Lock()

    def commit(run_id: str) -> None:
        barrier.wait(timeout=30)
        try:
            manifest = commit_run(store, run_id, clock=clock)
        except BaseException as exc:  # collected, and checked by the test
            with lock:
                race.lost[run_id] = exc
        else:
            with lock:
                race.won.append(manifest)

    threads = [threading.Thread(target=commit, args=(run_id,)) for run_id in race.run_ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    return race


def test_racing_writers_have_exactly_one_winner(store: ObjectStore, clock: FakeClock) -> None:
    trials = 20 if isinstance(store, LocalStore) else 10
    for trial in range(1, trials + 1):
        race = _race(store, clock, WRITERS)

        assert len(race.won) == 1, f"trial {trial}: {len(race.won)} winners"
        (winner,) = race.won
        assert len(race.lost) == WRITERS - 1
        for run_id, error in race.lost.items():
            assert isinstance(error, CommitConflictError), repr(error)
            outcome = read_outcome(store, run_id)
            assert outcome is not None
            assert outcome.outcome is Outcome.ABORTED
        assert winner.version == trial
        assert read_head(store) == winner
        assert manifest_versions(store) == list(range(1, trial + 1))
        assert checkpoint_files_match(store, winner)
        clock.advance(1000)

    # One segment per winner, none of the losers'.
    winners = [read_manifest(store, version).run_id for version in range(1, trials + 1)]
    head = read_head(store)
    assert head is not None
    assert [segment.run_id for segment in head.partitions[0].segments] == winners
