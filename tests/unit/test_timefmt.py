"""Times in text output (``kafka_segments.timefmt``): ISO-8601 UTC with milliseconds, never an error."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.cli.times import parse_time_ms
from kafka_segments.timefmt import iso_utc, text_time

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (1_763_700_000_000, "2025-11-21T04:40:00.000Z"),
        (1_763_700_000_123, "2025-11-21T04:40:00.123Z"),
        (0, "1970-01-01T00:00:00.000Z"),
        (999, "1970-01-01T00:00:00.999Z"),
    ],
)
def test_epoch_milliseconds_read_as_iso_8601_utc(ms: int, text: str) -> None:
    assert iso_utc(ms) == text
    assert text_time(ms) == text


@pytest.mark.parametrize("ms", [None, -1, 10**20])
def test_no_calendar_time_is_none(ms: int | None) -> None:
    assert iso_utc(ms) is None


def test_text_reports_never_fail_on_a_strange_value() -> None:
    assert text_time(None) == "unknown"
    assert text_time(-1) == "-1 ms"  # Kafka's "no timestamp"
    assert text_time(10**20) == f"{10**20} ms"


@given(st.integers(min_value=0, max_value=253_402_300_799_999))  # up to 9999-12-31T23:59:59.999Z
def test_the_command_line_parses_what_a_report_prints(ms: int) -> None:
    assert parse_time_ms(text_time(ms)) == ms


@pytest.mark.parametrize("ms", [2_149_284_924_568, 67_950_066_005, 1_763_700_000_001])
def test_parsing_an_iso_time_keeps_every_millisecond(ms: int) -> None:
    """``timestamp() * 1000`` in floating point turned ``…24.568Z`` into …567."""
    assert parse_time_ms(text_time(ms)) == ms


def test_one_parser_for_the_command_line_and_the_reader() -> None:
    """``--now`` and the reader's time options share ``timefmt.parse_time_ms``; the command line's is its
    argparse wrapper, so both refuse the same texts with the same words."""
    import argparse

    from kafka_segments import timefmt

    assert timefmt.parse_time_ms("2025-11-21T04:40:00.123") == 1_763_700_000_123
    for text in ("-5", "soon", "1" * 40):
        with pytest.raises(timefmt.TimeFormatError) as library:
            timefmt.parse_time_ms(text)
        with pytest.raises(argparse.ArgumentTypeError) as command_line:
            parse_time_ms(text)
        assert str(library.value) == str(command_line.value)
