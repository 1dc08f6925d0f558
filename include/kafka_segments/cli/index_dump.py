"""Dumping index files for ``inspect`` (filled in with the segment package's index parsers)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class _Report(Protocol):
    lines: list[str]

    def fail(self, problem: str, **details: object) -> None: ...


def dump_index_file(path: Path, report: _Report) -> None:
    report.fail(f"{path}: not a Kafka segment or index file (expected .log, .index, .timeindex or .txnindex)")
