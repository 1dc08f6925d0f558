"""Command-line times: ``--now`` takes epoch milliseconds or ISO-8601 (README.md, "Command line"), from the
epoch to the end of year 9999, checked where the command line is parsed (argparse exits 2 naming the
option), so a time no Kafka timestamp or ``datetime`` can hold never reaches the rules."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

MIN_TIME_MS = 0
"""1970-01-01T00:00:00Z."""
MAX_TIME_MS = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z, the last millisecond ISO-8601 (and Python's ``datetime``) can write."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_time_ms(text: str) -> int:
    """Epoch milliseconds from ``1763700000000`` or ISO-8601 (``2025-11-21T04:40:00Z``; no zone = UTC),
    within ``MIN_TIME_MS`` .. ``MAX_TIME_MS``.

    Raises:
        argparse.ArgumentTypeError: neither form, or out of range.
    """
    stripped = text.strip()
    if stripped.lstrip("-").isdigit():
        return _in_range(_epoch_ms(stripped), text)
    try:
        moment = datetime.fromisoformat(
            stripped.replace("Z", "+00:00") if stripped.endswith("Z") else stripped
        )
    except ValueError:
        raise argparse.ArgumentTypeError(
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
        raise argparse.ArgumentTypeError(
            f"{shown!r} is out of range: a time must be between {MIN_TIME_MS} (1970-01-01T00:00:00Z) and "
            f"{MAX_TIME_MS} (9999-12-31T23:59:59.999Z) epoch milliseconds"
        )
    return ms
