"""The offsets snapshot a run uses and where it came from (what ``pipeline.offsets_input.resolve_offsets``
returns), and the one line every door prints about it: ``run``/``plan``'s report, ``describe`` and the lake
view all say which snapshot they used and how old it is (docs/retention.md, "Which snapshot a run uses")."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.state import OffsetSnapshot
from kafka_segments.timefmt import text_time

NO_OFFSETS = "no offsets snapshot (consumed retention cannot apply)"


@dataclass(frozen=True, slots=True)
class ResolvedOffsets:
    """The snapshot a run uses and where it came from."""

    snapshot: OffsetSnapshot
    snapshot_id: str | None
    """Its id in the lake (``None`` in a dry run that took or read it fresh)."""
    origin: str
    """``file``, ``pinned`` (the snapshot pinned for this ``now``), ``pinned-earlier`` (the newest earlier
    pin: a backfill, a run without a source that can be asked, a view) or ``taken`` (from the source now)."""
    note: str = ""


def offsets_line(offsets: ResolvedOffsets | None, *, now_ms: int) -> str:
    """Which snapshot, from where, taken when and how long before ``now_ms``; its note last."""
    if offsets is None:
        return NO_OFFSETS
    taken = offsets.snapshot.taken_at_ms
    line = (
        f"offsets snapshot {offsets.snapshot_id or '(not stored)'} ({offsets.origin}, source "
        f"{offsets.snapshot.source}), taken {text_time(taken)} ({age_text(now_ms - taken)})"
    )
    return f"{line}; {offsets.note}" if offsets.note else line


def age_text(age_ms: int) -> str:
    """``age_ms`` as ``3 h 5 min old`` (``… in the future`` for a negative age)."""
    minutes = abs(age_ms) // 60_000
    days, rest = divmod(minutes, 1440)
    hours, mins = divmod(rest, 60)
    parts = [f"{days} d"] if days else []
    parts += [f"{hours} h"] if hours else []
    parts.append(f"{mins} min")
    return " ".join(parts) + (" old" if age_ms >= 0 else " in the future")
