"""Command-line times: ``--now`` takes epoch milliseconds or ISO-8601 (README.md, "Command line"), from the
epoch to the end of year 9999, checked where the command line is parsed (argparse exits 2 naming the
option), so a time no Kafka timestamp or ``datetime`` can hold never reaches the rules. The parsing is
``kafka_segments.timefmt.parse_time_ms``, shared with the reader's time options."""

from __future__ import annotations

import argparse

from kafka_segments import timefmt
from kafka_segments.timefmt import MAX_TIME_MS, MIN_TIME_MS

__all__ = ["MAX_TIME_MS", "MIN_TIME_MS", "parse_time_ms"]


def parse_time_ms(text: str) -> int:
    """``timefmt.parse_time_ms`` as an argparse ``type``.

    Raises:
        argparse.ArgumentTypeError: neither form, or out of range.
    """
    try:
        return timefmt.parse_time_ms(text)
    except timefmt.TimeFormatError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
