"""The per-file durations summary sums a file's reports and lists the slowest files first; the recorded slow
files are collected first, slowest first."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from file_durations import FileDurations, read_slow_files, slowest_first, write_slow_files


@dataclass(frozen=True)
class Item:
    """What ``slowest_first`` reads of a ``pytest.Item``."""

    nodeid: str


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


def test_the_recorded_slow_files_come_first_slowest_first_each_files_items_together_in_order() -> None:
    items = [
        Item("tests/a.py::test_one"),
        Item("tests/a.py::test_two"),
        Item("tests/b.py::test_one[x::y]"),
        Item("tests/c.py::test_one"),
        Item("tests/c.py::test_two"),
        Item("tests/d.py::test_one"),
    ]
    ordered = slowest_first(items, {"tests/c.py": 20.0, "tests/b.py": 90.0, "tests/gone.py": 200.0})  # type: ignore[arg-type]
    assert [item.nodeid for item in ordered] == [
        "tests/b.py::test_one[x::y]",
        "tests/c.py::test_one",
        "tests/c.py::test_two",
        "tests/a.py::test_one",
        "tests/a.py::test_two",
        "tests/d.py::test_one",
    ]


def test_a_run_records_its_slow_files_and_keeps_those_it_did_not_run(tmp_path: Path) -> None:
    durations = FileDurations()
    for nodeid, seconds in [("tests/a.py::t", 40.0), ("tests/b.py::t", 1.0), ("tests/c.py::t", 16.0)]:
        durations.add(report(nodeid, seconds))
    record = tmp_path / "slow_files.json"
    recorded = {"tests/b.py": 30.0, "tests/a.py": 90.0, "tests/z.py": 20.0}
    write_slow_files(durations.slow_files(recorded), record)
    assert read_slow_files(record) == {"tests/a.py": 40.0, "tests/z.py": 20.0, "tests/c.py": 16.0}
    assert list(read_slow_files(record)) == ["tests/a.py", "tests/z.py", "tests/c.py"]
    assert read_slow_files(tmp_path / "missing.json") == {}
