"""A run's offsets are as of its ``now``: a live cluster only knows the present, so a run whose ``now`` is
more than ``max_live_lag_ms`` behind the wall clock uses the snapshot pinned at or before ``now`` and says so
(it never pins newer offsets under an older ``now``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka_segments.offsets import sources
from kafka_segments.offsets.snapshot_store import pin_snapshot, store_snapshot
from kafka_segments.pipeline.offsets_input import OffsetsChoice, resolve_offsets
from kafka_segments.state import OffsetSnapshot
from kafka_segments.storage import LocalStore

pytestmark = pytest.mark.unit

HOUR = 3_600_000
NOW = 1_763_700_000_000
LIVE = "kafka://broker:9092"


def _snapshot(taken_at_ms: int) -> OffsetSnapshot:
    return OffsetSnapshot(taken_at_ms=taken_at_ms, source=LIVE, groups=())


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "lake")


@pytest.fixture
def live_source(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A live cluster: each call answers with the wall clock's offsets; the calls are recorded."""
    calls: list[int] = []

    def take(*_: object, **__: object) -> OffsetSnapshot:
        calls.append(1)
        return _snapshot(NOW + 52 * 60_000)

    monkeypatch.setattr(sources, "take_snapshot", take)
    return calls


def test_a_late_run_uses_the_snapshot_pinned_at_or_before_its_now(
    store: LocalStore, live_source: list[int]
) -> None:
    earlier = store_snapshot(store, _snapshot(NOW - HOUR))
    pin_snapshot(store, now_ms=NOW - HOUR, snapshot_id=earlier.snapshot_id, source=LIVE)

    resolved = resolve_offsets(
        store, OffsetsChoice(source=LIVE), now_ms=NOW, dry_run=False, clock=lambda: NOW + 52 * 60_000
    )

    assert live_source == []  # the cluster is not asked for today's offsets
    assert resolved is not None
    assert resolved.snapshot_id == earlier.snapshot_id
    assert resolved.origin == "pinned-earlier"
    assert "3120000 ms behind the wall clock" in resolved.note


def test_a_late_run_without_an_earlier_pin_has_no_offsets(store: LocalStore, live_source: list[int]) -> None:
    resolved = resolve_offsets(
        store, OffsetsChoice(source=LIVE), now_ms=NOW, dry_run=False, clock=lambda: NOW + HOUR
    )
    assert resolved is None
    assert live_source == []


def test_a_run_on_time_takes_and_pins_the_live_snapshot(store: LocalStore, live_source: list[int]) -> None:
    resolved = resolve_offsets(
        store, OffsetsChoice(source=LIVE), now_ms=NOW, dry_run=False, clock=lambda: NOW + 5_000
    )
    assert live_source == [1]
    assert resolved is not None
    assert resolved.origin == "taken"


def test_the_lag_is_configurable(store: LocalStore, live_source: list[int]) -> None:
    choice = OffsetsChoice(source=LIVE, max_live_lag_ms=2 * HOUR)
    resolve_offsets(store, choice, now_ms=NOW, dry_run=False, clock=lambda: NOW + HOUR)
    assert live_source == [1]
