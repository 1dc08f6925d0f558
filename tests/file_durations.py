"""Seconds per test file, summed over its tests' setup, call and teardown: with ``--dist loadfile`` a whole
file runs on one worker, so these sums say which files bound the suite's wall time (``--durations`` lists
single items only). Printed at the end of a run given ``--durations`` (``.ci/run`` gives it)."""

from __future__ import annotations

from collections import defaultdict

import pytest

TOP_FILES = 25
"""How many files the summary lists, slowest first."""


class FileDurations:
    """The seconds of every test report, summed by the file its node id names."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)

    def add(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid.split("::", 1)[0]] += report.duration

    def lines(self, *, top: int = TOP_FILES) -> list[str]:
        slowest = sorted(self.seconds.items(), key=lambda item: item[1], reverse=True)[:top]
        total = sum(self.seconds.values())
        return [f"{seconds:9.2f}s  {path}" for path, seconds in slowest] + [
            f"{total:9.2f}s  in all {len(self.seconds)} files (the sum over workers)"
        ]
