"""Seconds per test file, summed over its tests' setup, call and teardown: with ``--dist loadfile`` a whole
file runs on one worker, so these sums say which files bound the suite's wall time (``--durations`` lists
single items only). Printed at the end of a run given ``--durations`` (``.ci/run`` gives it).

The slow files' sums are also kept in ``slow_files.json`` (``--record-slow-files`` rewrites it from a run):
``slowest_first`` puts those files at the head of the collection, slowest first, so that the workers take
them before the many short files, which then even out the end of the run (the longest-first rule: a long
file taken last would run alone on one worker while the other sits idle)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

import pytest

TOP_FILES = 25
"""How many files the summary lists, slowest first."""
SLOW_FILES = Path(__file__).with_name("slow_files.json")
"""The record of slow files: ``{"tests/…/test_x.py": seconds}``, the sums of a whole run with workers."""
SLOW_FILE_S = 15.0
"""A file is recorded as slow from this many seconds (its place among the short ones matters little)."""


class FileDurations:
    """The seconds of every test report, summed by the file its node id names."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)

    def add(self, report: pytest.TestReport) -> None:
        self.seconds[file_of(report.nodeid)] += report.duration

    def lines(self, *, top: int = TOP_FILES) -> list[str]:
        slowest = sorted(self.seconds.items(), key=lambda item: item[1], reverse=True)[:top]
        total = sum(self.seconds.values())
        return [f"{seconds:9.2f}s  {path}" for path, seconds in slowest] + [
            f"{total:9.2f}s  in all {len(self.seconds)} files (the sum over workers)"
        ]

    def slow_files(self, recorded: Mapping[str, float]) -> dict[str, float]:
        """``recorded`` updated with this run's sums: the files it ran are recorded as it measured them
        (dropped when no longer slow), the others are kept; slowest first."""
        merged = {path: seconds for path, seconds in recorded.items() if path not in self.seconds}
        slow = {path: round(seconds, 1) for path, seconds in self.seconds.items() if seconds >= SLOW_FILE_S}
        merged.update(slow)
        return dict(sorted(merged.items(), key=lambda item: (-item[1], item[0])))


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def read_slow_files(path: Path = SLOW_FILES) -> dict[str, float]:
    """The recorded slow files; none when the record is missing."""
    try:
        recorded = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    return {str(name): float(seconds) for name, seconds in recorded.items()}


def write_slow_files(seconds: Mapping[str, float], path: Path = SLOW_FILES) -> None:
    path.write_text(json.dumps(seconds, indent=1) + "\n")


def slowest_first(items: list[pytest.Item], recorded: Mapping[str, float]) -> list[pytest.Item]:
    """``items`` with the recorded slow files' first, slowest file first, each file's items together and in
    their order; the other files after them, in collection order."""
    return sorted(items, key=lambda item: -recorded.get(file_of(item.nodeid), 0.0))
