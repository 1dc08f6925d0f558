"""``kafka_segments.progress``: what a phase shows (done of total, bytes, rate, the item now), redrawn on a
terminal at most every interval, as plain lines for a log, and nothing without a reporter."""

from __future__ import annotations

import io

import pytest
from kafka_segments.progress import LineReporter, TerminalReporter, phase, reporting, terminal_reporter

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_line_is_redrawn_with_counts_bytes_rate_and_the_item_now() -> None:
    clock = Clock()
    stream = io.StringIO()
    reporter = TerminalReporter(stream, "run", interval=0.5, clock=clock)

    with reporting(reporter), phase("compact", items=3, nbytes=3 * 1024 * 1024) as progress:
        clock.now += 1.0
        progress.advance("t-0", nbytes=1024 * 1024)
        clock.now += 0.1
        progress.advance("t-1", nbytes=1024 * 1024)  # within the interval: not drawn
        clock.now += 1.0
        progress.advance("t-2", nbytes=1024 * 1024)

    frames = stream.getvalue().split("\r\x1b[K")[1:]
    assert frames == [
        "[run] compact: 0/3 partitions, 0 B/3.0 MiB",
        "[run] compact: 1/3 partitions, 1.0 MiB/3.0 MiB, 1.0 MiB/s, now t-0",
        "[run] compact: 3/3 partitions, 3.0 MiB/3.0 MiB, 1.4 MiB/s, now t-2",
        "[run] compact: 3/3 partitions, 3.0 MiB/3.0 MiB, 1.4 MiB/s\n",
    ]


def test_log_lines_are_plain_and_spaced_by_the_interval() -> None:
    clock = Clock()
    lines: list[str] = []

    reporter = LineReporter(lines.append, interval=10.0, clock=clock)
    with reporting(reporter), phase("adopt", items=2, unit="segments") as progress:
        clock.now += 4.0
        progress.advance("a.log")
        clock.now += 8.0
        progress.advance("b.log")

    assert lines == [
        "progress: adopt: 0/2 segments (started)",
        "progress: adopt: 2/2 segments, 0.2 segments/s, now b.log",
        "progress: adopt: 2/2 segments, 0.2 segments/s (done)",
    ]
    assert all("\r" not in line for line in lines)


def test_nothing_is_shown_without_a_reporter_or_off_a_terminal() -> None:
    with phase("compact", items=2) as progress:
        progress.advance("t-0", nbytes=10)  # no reporter: a no-op
    assert progress.meter is None

    assert terminal_reporter(io.StringIO(), label="run") is None
    assert terminal_reporter(Tty(), label="run", quiet=True) is None
    assert isinstance(terminal_reporter(Tty(), label="run"), TerminalReporter)
