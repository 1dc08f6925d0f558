"""``kafka_segments.clock`` is the one place the code reads the wall clock: every other module takes a
``Clock`` or calls ``wall_clock_ms``, so a test can pin the time everywhere by passing one clock."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest
from kafka_segments.clock import wall_clock_ms

pytestmark = pytest.mark.unit

INCLUDE = Path(__file__).resolve().parents[2] / "include"
CLOCK = INCLUDE / "kafka_segments" / "clock.py"
WALL_CLOCK_CALLS = frozenset({"time", "time_ns"})
"""``time``'s functions that read the wall clock (``monotonic`` and ``perf_counter`` measure durations)."""


def _wall_clock_reads(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "time"
            and node.attr in WALL_CLOCK_CALLS
        ):
            found.append(f"{path.relative_to(INCLUDE)}:{node.lineno}: time.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "time":
            found.extend(
                f"{path.relative_to(INCLUDE)}:{node.lineno}: from time import {alias.name}"
                for alias in node.names
                if alias.name in WALL_CLOCK_CALLS
            )
    return found


def test_only_the_clock_module_reads_the_wall_clock() -> None:
    offenders = [
        read for path in sorted(INCLUDE.rglob("*.py")) if path != CLOCK for read in _wall_clock_reads(path)
    ]
    assert offenders == []


def test_the_clock_module_is_found_by_the_scan() -> None:
    assert [read.rsplit(": ", 1)[1] for read in _wall_clock_reads(CLOCK)] == ["time.time_ns"]


def test_wall_clock_ms_is_epoch_milliseconds() -> None:
    before = time.time_ns() // 1_000_000
    now = wall_clock_ms()
    assert before <= now <= time.time_ns() // 1_000_000
