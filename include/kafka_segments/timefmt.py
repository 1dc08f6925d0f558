"""Times in text output: epoch milliseconds (what every document, snapshot and JSON report stores) shown as
ISO-8601 UTC, so an operator reads ``2025-11-21T04:40:00.000Z`` instead of ``1763700000000``.

JSON keeps the epoch milliseconds; only text renderings call these. ``parse_time_ms`` reads the other way:
the one parser of a time a person types (``--now``, the reader's ``startingTimestamp``/``timestampAsOf``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

UNKNOWN = "unknown"
MIN_TIME_MS = 0
"""1970-01-01T00:00:00Z."""
MAX_TIME_MS = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z, the last millisecond ISO-8601 (and Python's ``datetime``) can write."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class TimeFormatError(ValueError):
    """A time a person typed that is neither epoch milliseconds nor ISO-8601, or is out of range; the
    message names the text and the accepted forms."""


def parse_time_ms(text: str) -> int:
    """Epoch milliseconds from ``1763700000000`` or ISO-8601 (``2025-11-21T04:40:00Z``; no zone = UTC),
    within ``MIN_TIME_MS`` .. ``MAX_TIME_MS``.

    Raises:
        TimeFormatError: neither form, or out of range.
    """
    stripped = text.strip()
    if stripped.lstrip("-").isdigit():
        return _in_range(_epoch_ms(stripped), text)
    try:
        moment = datetime.fromisoformat(
            stripped.replace("Z", "+00:00") if stripped.endswith("Z") else stripped
        )
    except ValueError:
        raise TimeFormatError(
            f"{text!r} is neither epoch milliseconds nor an ISO-8601 time (e.g. 2025-11-21T04:40:00Z)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # exact: float seconds * 1000 lost a millisecond (…24.568Z read as …567)
    return _in_range((moment - _EPOCH) // timedelta(milliseconds=1), text)


def _epoch_ms(digits: str) -> int | None:
    """The integer, or ``None`` when it has too many digits to convert (it is out of range anyway)."""
    try:
        return int(digits)
    except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
        return None


def _in_range(ms: int | None, text: str) -> int:
    if ms is None or not MIN_TIME_MS <= ms <= MAX_TIME_MS:
        shown = text if len(text) <= 40 else f"{text[:37]}..."
        raise TimeFormatError(
            f"{shown!r} is out of range: a time must be between {MIN_TIME_MS} (1970-01-01T00:00:00Z) and "
            f"{MAX_TIME_MS} (9999-12-31T23:59:59.999Z) epoch milliseconds"
        )
    return ms


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
