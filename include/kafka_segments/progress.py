"""Progress of long work: partitions (or segments, objects) and bytes done, the rate, what is being done now.

Library code opens a ``phase`` around a loop and ``advance``-s it once per item; a command chooses who
shows it for its duration (``reporting``): a ``TerminalReporter`` redrawing one line of a terminal, a
``LineReporter`` writing plain lines (a Spark job's task log), or nobody (the default: a phase then costs a
context lookup).
The reporter lives in a context variable, so no signature carries it; worker threads do not see it, so a
loop that fans out advances from the thread that collects the results."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol, TextIO


@dataclass(slots=True)
class Meter:
    """One phase's counts: ``done`` of ``total`` items, ``done_bytes`` of ``total_bytes``, the item now."""

    name: str
    total: int
    total_bytes: int
    unit: str
    started: float
    done: int = 0
    done_bytes: int = 0
    current: str = ""

    def text(self, now: float) -> str:
        parts = [f"{self.name}: {self.done}/{self.total} {self.unit}"]
        if self.total_bytes:
            parts.append(f"{_size(self.done_bytes)}/{_size(self.total_bytes)}")
        elapsed = max(now - self.started, 1e-9)
        if self.done_bytes:
            parts.append(f"{_size(self.done_bytes / elapsed)}/s")
        elif self.done:
            parts.append(f"{self.done / elapsed:.1f} {self.unit}/s")
        if self.current:
            parts.append(f"now {self.current}")
        return ", ".join(parts)


class Reporter(Protocol):
    def begin(self, meter: Meter) -> None: ...
    def update(self, meter: Meter) -> None: ...
    def end(self, meter: Meter) -> None: ...


_REPORTER: ContextVar[Reporter | None] = ContextVar("kafka_segments_progress", default=None)


@dataclass(slots=True)
class Phase:
    """A loop's progress: ``advance`` once per item done."""

    meter: Meter | None
    reporter: Reporter | None
    clock: Callable[[], float] = time.monotonic

    def advance(self, item: str = "", *, nbytes: int = 0) -> None:
        if self.meter is None or self.reporter is None:
            return
        self.meter.done += 1
        self.meter.done_bytes += nbytes
        self.meter.current = item
        self.reporter.update(self.meter)


@contextlib.contextmanager
def phase(name: str, *, items: int, nbytes: int = 0, unit: str = "partitions") -> Iterator[Phase]:
    """A phase of ``items`` items (``nbytes`` bytes in all) shown by the current reporter, if any."""
    reporter = _REPORTER.get()
    if reporter is None or items == 0:
        yield Phase(None, None)
        return
    clock: Callable[[], float] = getattr(reporter, "clock", time.monotonic)
    meter = Meter(name, items, nbytes, unit, clock())
    reporter.begin(meter)
    try:
        yield Phase(meter, reporter)
    finally:
        meter.current = ""
        reporter.end(meter)


@contextlib.contextmanager
def reporting(reporter: Reporter | None) -> Iterator[None]:
    """Show the phases opened in this context with ``reporter`` (``None``: show nothing)."""
    token = _REPORTER.set(reporter)
    try:
        yield
    finally:
        _REPORTER.reset(token)


@dataclass(slots=True)
class TerminalReporter:
    """One line of a terminal, redrawn at most every ``interval`` seconds; the phase's last state stays."""

    stream: TextIO
    label: str
    interval: float = 0.1
    clock: Callable[[], float] = time.monotonic
    _drawn: float = field(default=0.0, init=False)

    def _draw(self, meter: Meter, end: str = "") -> None:
        self.stream.write(f"\r\x1b[K[{self.label}] {meter.text(self.clock())}{end}")
        self.stream.flush()

    def begin(self, meter: Meter) -> None:
        self._drawn = self.clock()
        self._draw(meter)

    def update(self, meter: Meter) -> None:
        if self.clock() - self._drawn >= self.interval:
            self._drawn = self.clock()
            self._draw(meter)

    def end(self, meter: Meter) -> None:
        self._draw(meter, "\n")


@dataclass(slots=True)
class LineReporter:
    """Plain lines (a log): the phase's start, one line at most every ``interval`` seconds, its end."""

    write: Callable[[str], None]
    interval: float = 10.0
    clock: Callable[[], float] = time.monotonic
    _written: float = field(default=0.0, init=False)

    def begin(self, meter: Meter) -> None:
        self._written = self.clock()
        self.write(f"progress: {meter.text(self.clock())} (started)")

    def update(self, meter: Meter) -> None:
        if self.clock() - self._written >= self.interval:
            self._written = self.clock()
            self.write(f"progress: {meter.text(self.clock())}")

    def end(self, meter: Meter) -> None:
        self.write(f"progress: {meter.text(self.clock())} (done)")


def terminal_reporter(stream: TextIO, *, label: str, quiet: bool = False) -> TerminalReporter | None:
    """A ``TerminalReporter`` on ``stream`` if it is a terminal and not ``quiet`` (``--json``), else
    ``None``."""
    isatty = getattr(stream, "isatty", None)
    if quiet or isatty is None or not isatty():
        return None
    return TerminalReporter(stream, label)


def _size(value: float) -> str:
    if value < 1024:
        return f"{value:.0f} B"
    for unit in ("KiB", "MiB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} GiB"


__all__ = [
    "LineReporter",
    "Meter",
    "Phase",
    "Reporter",
    "TerminalReporter",
    "phase",
    "reporting",
    "terminal_reporter",
]
