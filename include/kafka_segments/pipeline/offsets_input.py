"""Which consumer-offset snapshot a run uses, so that a rerun or backfill of the same logical time uses the
same offsets (docs/retention.md, "Which snapshot a run uses").

This is the one rule for "the next run" too: every door that shows what a run would do (``plan``,
``describe``, the lake view, the DAG's dry run) calls it, so all give the same answer.

``--offsets FILE`` is stored and pinned unless a pin exists; otherwise the pin for ``now``; else, with an
``--offsets-source SRC`` that can be asked, a new snapshot as of ``now``; else the newest pin before ``now``
(offsets only grow: older offsets never let a run delete unread data), saying so; else none. A live cluster
is not asked by a run more than ``max_live_lag_ms`` behind (it only knows the present) nor by a view
(``ask_live``); ``earlier_pin`` (backfills) never asks a source. A dry run stores and pins nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafka_segments.clock import wall_clock_ms
from kafka_segments.offsets.resolved import ResolvedOffsets
from kafka_segments.offsets.snapshot_codec import load_snapshot_file
from kafka_segments.offsets.snapshot_store import (
    pin_snapshot,
    read_pin,
    read_pin_at_or_before,
    read_snapshot,
    store_snapshot,
)
from kafka_segments.redaction import redact_uri
from kafka_segments.state import Manifest
from kafka_segments.storage.base import ObjectStore
from kafka_segments.timefmt import text_time

__all__ = [
    "DEFAULT_MAX_LIVE_LAG_MS",
    "LIVE_LAG_NOTE",
    "OffsetsChoice",
    "ResolvedOffsets",
    "resolve_offsets",
]

DEFAULT_MAX_LIVE_LAG_MS = 600_000
"""10 minutes: a scheduled run starts seconds after its data interval ends; one later than this is late."""

LIVE_LAG_NOTE = (
    "now is {lag} ms behind the wall clock (more than {limit}): a live cluster only knows the present, so "
    "{what}"
)


@dataclass(frozen=True, slots=True)
class OffsetsChoice:
    """What the user asked for (at most one of ``file`` and ``source``)."""

    file: str | None = None
    source: str | None = None
    groups: tuple[str, ...] | None = None
    """For a live source: only these groups (skips group discovery)."""
    earlier_pin: bool = False
    """Use the pin for ``now`` or else the newest earlier one, and never take a new snapshot (backfills)."""
    max_live_lag_ms: int = DEFAULT_MAX_LIVE_LAG_MS
    """How far ``now`` may be behind the wall clock for a live cluster's offsets to stand for it."""
    ask_live: bool = True
    """``False``: never ask a live cluster (a view: it uses the newest pin and says so)."""

    def __post_init__(self) -> None:
        if self.file is not None and self.source is not None:
            raise ValueError("give either an offsets snapshot file or an offsets source, not both")


def resolve_offsets(  # noqa: PLR0911 - one early return per offsets source, in their documented precedence (docs/retention.md)
    store: ObjectStore,
    choice: OffsetsChoice,
    *,
    now_ms: int,
    dry_run: bool,
    topics: Sequence[str] | None = None,
    lake_view: Callable[[], Manifest | None] | None = None,
    clock: Callable[[], int] | None = None,
) -> ResolvedOffsets | None:
    """The run's snapshot (``None``: no offsets at all). ``lake_view`` builds the run's adopted state, which
    the ``lake`` source reads (it may hold ``__consumer_offsets`` segments not committed yet); it is called
    only when a snapshot is taken from that source."""
    if choice.file is not None:
        return _from_file(store, choice.file, now_ms=now_ms, dry_run=dry_run)
    pin = read_pin(store, now_ms)
    if pin is not None:
        return ResolvedOffsets(read_snapshot(store, pin.snapshot_id), pin.snapshot_id, "pinned")
    if choice.earlier_pin or choice.source is None:
        return _earlier_pin(store, now_ms, why="no offsets source is asked")
    from kafka_segments.offsets.sources import source_kind, take_snapshot

    kind = source_kind(choice.source)
    lag = (wall_clock_ms() if clock is None else clock()) - now_ms
    if kind == "kafka" and (lag > choice.max_live_lag_ms or not choice.ask_live):
        from kafka_segments.offsets.kafka_source import parse_kafka_uri

        parse_kafka_uri(choice.source)  # a malformed source is refused whether or not it is asked
        if not choice.ask_live:
            why = f"a view does not ask the live cluster {redact_uri(choice.source)}"
            return _earlier_pin(store, now_ms, why=why)
        return _late_for_live(store, now_ms, lag=lag, limit=choice.max_live_lag_ms)
    view = lake_view() if lake_view is not None and kind == "lake" else None
    snapshot = take_snapshot(
        store,
        source=choice.source,
        groups=choice.groups,
        topics=topics,
        lake_view=view,
        as_of_ms=now_ms if kind == "lake" else None,
    )
    if dry_run:
        return ResolvedOffsets(snapshot, None, "taken")
    stored = store_snapshot(store, snapshot)
    if snapshot.errors:
        # A pin is never replaced: an incomplete snapshot must not become the offsets of this time forever.
        note = "not pinned for this time: some groups could not be read (a rerun takes a new snapshot)"
        return ResolvedOffsets(snapshot, stored.snapshot_id, "taken", note)
    pin = pin_snapshot(store, now_ms=now_ms, snapshot_id=stored.snapshot_id, source=choice.source)
    if pin.snapshot_id != stored.snapshot_id:
        note = f"another run pinned snapshot {pin.snapshot_id} for this time first; using it"
        return ResolvedOffsets(read_snapshot(store, pin.snapshot_id), pin.snapshot_id, "pinned", note)
    return ResolvedOffsets(snapshot, stored.snapshot_id, "taken")


def _late_for_live(store: ObjectStore, now_ms: int, *, lag: int, limit: int) -> ResolvedOffsets | None:
    """A late run with a live source: the snapshot pinned at or before ``now``, never today's offsets
    (``None`` when there is none: the run has no offsets, and consumed retention says so)."""
    pinned = _earlier_pin(store, now_ms, why="")
    if pinned is None:
        return None
    what = f"its offsets are the snapshot pinned at or before now ({pinned.note or pinned.origin})"
    note = LIVE_LAG_NOTE.format(lag=lag, limit=limit, what=what)
    return ResolvedOffsets(pinned.snapshot, pinned.snapshot_id, pinned.origin, note)


def _earlier_pin(store: ObjectStore, now_ms: int, *, why: str) -> ResolvedOffsets | None:
    pin = read_pin_at_or_before(store, now_ms)
    if pin is None:
        return None
    reason = f"{why} and no" if why else "no"
    note = (
        f"{reason} snapshot is pinned for this time; using the one pinned for {pin.now_ms} "
        f"({text_time(pin.now_ms)}, the newest earlier)"
    )
    return ResolvedOffsets(read_snapshot(store, pin.snapshot_id), pin.snapshot_id, "pinned-earlier", note)


def _from_file(store: ObjectStore, path: str, *, now_ms: int, dry_run: bool) -> ResolvedOffsets:
    snapshot = load_snapshot_file(path)
    if dry_run:
        return ResolvedOffsets(snapshot, None, "file")
    stored = store_snapshot(store, snapshot)
    pin = pin_snapshot(store, now_ms=now_ms, snapshot_id=stored.snapshot_id, source="file")
    note = ""
    if pin.snapshot_id != stored.snapshot_id:
        note = f"snapshot {pin.snapshot_id} is pinned for this time; the explicit file is used instead"
    return ResolvedOffsets(snapshot, stored.snapshot_id, "file", note)
