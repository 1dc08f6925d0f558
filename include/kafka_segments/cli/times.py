"""Command-line times: ``--now`` and friends take epoch milliseconds or ISO-8601 (README.md, "Command
line")."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime


def parse_time_ms(text: str) -> int:
    """Epoch milliseconds from ``1763700000000`` or ISO-8601 (``2025-11-21T04:40:00Z``; no zone = UTC).

    Raises:
        argparse.ArgumentTypeError: neither form.
    """
    stripped = text.strip()
    if stripped.lstrip("-").isdigit():
        return int(stripped)
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
    return int(moment.timestamp() * 1000)
