"""Times in text output: epoch milliseconds (what every document, snapshot and JSON report stores) shown as
ISO-8601 UTC, so an operator reads ``2025-11-21T04:40:00.000Z`` instead of ``1763700000000``.

JSON keeps the epoch milliseconds; only text renderings call these. Parsing the other way is
``kafka_segments.cli.times.parse_time_ms``."""

from __future__ import annotations

from datetime import UTC, datetime

UNKNOWN = "unknown"


def iso_utc(ms: int | None) -> str | None:
    """Epoch milliseconds as ISO-8601 UTC with milliseconds (``2025-11-21T04:40:00.000Z``); ``None`` for
    ``None``, a negative value (Kafka's "no timestamp") or a value outside the calendar."""
    if ms is None or ms < 0:
        return None
    try:
        moment = datetime.fromtimestamp(ms // 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def text_time(ms: int | None) -> str:
    """A time for a text report line: ISO-8601 UTC (``2025-11-21T04:40:00.000Z``); ``unknown`` for ``None``;
    a value that is no calendar time (negative, out of range) as it is, ``-1 ms``, never an error."""
    if ms is None:
        return UNKNOWN
    return iso_utc(ms) or f"{ms} ms"
