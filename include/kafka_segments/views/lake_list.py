"""The lakes of a deployment, one row each (docs/lake-view.md, "Several lakes"): a lake's name and location,
its last commit (version, time, run, operation, outcome) and its live bytes, from its head manifest and the
head run's report only (no segment is read, nothing is written). A lake that cannot be read gets a row
saying why, so one broken lake does not hide the others."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.errors import KafkaSegmentsError
from kafka_segments.lake.reader import resolve_root
from kafka_segments.storage.base import ObjectStore
from kafka_segments.views.lake_view_history import Commit, history_of, root_summary
from kafka_segments.views.run_report import read_report


@dataclass(frozen=True, slots=True)
class LakeSummary:
    """One lake's row: ``commit`` and ``size_bytes`` are ``None`` when ``problem`` says why it has none."""

    name: str
    location: str
    commit: Commit | None
    size_bytes: int | None
    partitions: int | None
    problem: str | None = None


def summarize_lake(store: ObjectStore, *, name: str) -> LakeSummary:
    """The row of the lake in ``store``, named ``name``; a lake that cannot be read (no committed state, a
    manifest or head run report that is not valid, a store error) gets a row whose ``problem`` says why."""
    location = store.describe()
    try:
        root = resolve_root(store, None)
        report = read_report(store, root.run_id)
    except (KafkaSegmentsError, OSError) as error:
        return LakeSummary(name, location, None, None, None, problem=str(error))
    (commit,) = history_of([root_summary(root)], {root.run_id: report}).commits
    size = sum(p.summary.bytes for p in root.partitions)
    return LakeSummary(name, location, commit, size, len(root.partitions))
