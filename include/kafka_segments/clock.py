"""The wall clock: the one place the library reads the current time (epoch milliseconds, what every
document and snapshot stores). Code that needs ``now`` takes a ``Clock`` (default ``wall_clock_ms``) or a
``now_ms`` so tests can pin it."""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], int]
"""Wall-clock milliseconds since the epoch (injectable for tests)."""


def wall_clock_ms() -> int:
    """Milliseconds since the epoch, now."""
    return time.time_ns() // 1_000_000
