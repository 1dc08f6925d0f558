"""The per-file durations summary sums a file's reports and lists the slowest files first."""

from __future__ import annotations

import pytest
from file_durations import FileDurations


def report(nodeid: str, duration: float) -> pytest.TestReport:
    return pytest.TestReport(nodeid, ("f", 0, "t"), {}, "passed", None, "call", duration=duration)


def test_a_files_setup_call_and_teardown_are_summed_and_the_slowest_file_comes_first() -> None:
    durations = FileDurations()
    for nodeid, seconds in [
        ("tests/a.py::test_one", 1.0),
        ("tests/b.py::test_two[x::y]", 2.5),
        ("tests/a.py::test_three", 0.5),
        ("tests/b.py::test_two[x::y]", 0.25),
    ]:
        durations.add(report(nodeid, seconds))
    assert dict(durations.seconds) == {"tests/a.py": 1.5, "tests/b.py": 2.75}
    lines = durations.lines(top=1)
    assert lines[0].split() == ["2.75s", "tests/b.py"]
    assert lines[-1].split()[:3] == ["4.25s", "in", "all"]
    assert len(lines) == 2
