"""The run's ``tables`` stage (``sequence.Stage.TABLES``, docs/tables.md "After every run"): after the commit,
bring the topics' Iceberg tables to the lake's head. The sync itself lives in ``kafka_segments.tables``, a
layer above this one, so a run's caller (the command line, the maintenance DAG) supplies it as a
``TablesSync``. A sync failure never undoes or hides the lake's commit: the outcome says the lake committed
and the tables did not, and the next sync catches up (the table is derived data)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka_segments.config import Config
from kafka_segments.storage.base import ObjectStore


@dataclass(frozen=True, slots=True)
class TablesOutcome:
    """What the ``tables`` stage did: the sync's lines and JSON report, or why it failed."""

    lines: tuple[str, ...] = ()
    report: Mapping[str, Any] | None = field(default=None)
    """``TablesSyncReport.to_json()`` (``None``: the sync failed)."""
    failure: str | None = None

    @property
    def synced(self) -> bool:
        return self.failure is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "synced": self.synced,
            "failure": self.failure,
            "lines": list(self.lines),
            "report": None if self.report is None else dict(self.report),
        }


TablesSync = Callable[[ObjectStore, Config], "TablesOutcome | None"]
"""Bring the tables the configuration enables to the lake's head; ``None``: it enables none. Whatever it
raises, the stage reports as a failed ``TablesOutcome`` (``failed_tables``): the lake's commit stands."""


def sync_after_commit(
    sync: TablesSync, store: ObjectStore, config: Config, *, version: int | None
) -> TablesOutcome | None:
    """Run ``sync`` after the lake's commit of ``version`` (``None``: the run committed nothing new; the
    sync still catches up). Any failure becomes the outcome's one line: the lake's commit stands."""
    try:
        return sync(store, config)
    except Exception as exc:  # whatever failed, the lake's commit stands and is reported
        return failed_tables(f"{type(exc).__name__}: {exc}", version=version)


def failed_tables(reason: str, *, version: int | None) -> TablesOutcome:
    """The outcome of a sync that failed after the lake committed ``version`` (``None``: nothing new)."""
    committed = "nothing new committed" if version is None else f"the lake committed version {version}"
    line = f"tables: NOT synced ({committed}; the next run or `tables sync` catches up): {reason}"
    return TablesOutcome(lines=(line,), failure=reason)


def tables_lines(document: Mapping[str, Any] | None) -> list[str]:
    """The ``tables`` lines of a run's report document (nothing when the stage did not run)."""
    if document is None:
        return []
    return [f"tables: {line}" if not line.startswith("tables:") else line for line in document["lines"]]
