"""``--now`` out of range is a usage error of the command line (exit 2, naming ``--now`` and the range),
on every command that takes it, before any work: nothing is written to the lake."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from cli_harness import cli
from kafka_segments.cli.times import MAX_TIME_MS, parse_time_ms

pytestmark = pytest.mark.e2e

TOO_LATE = "1000000000000000000000000000000"
RANGE = "between 0 (1970-01-01T00:00:00Z) and 253402300799999 (9999-12-31T23:59:59.999Z) epoch milliseconds"


def command_line(command: str, lake: Path, config: Path, now: str) -> list[str]:
    base = ["--lake", str(lake), "--now", now]
    extra = {
        "run": ["--config", str(config)],
        "plan": ["--config", str(config)],
        "delete-records": ["--offset-json-file", str(config)],
        "describe": ["--config", str(config)],
        "adopt": [],
        "gc": [],
    }
    if command == "offsets":
        return ["offsets", "snapshot", "--source", "lake", *base]
    return [command, *base, *extra[command]]


@pytest.mark.parametrize(
    ("command", "now"),
    [
        ("run", TOO_LATE),
        ("run", "-5"),
        ("run", "1969-12-31T23:59:59Z"),
        ("plan", "-5"),
        ("delete-records", TOO_LATE),
        ("describe", "-1"),
        ("adopt", TOO_LATE),
        ("gc", "-5"),
        ("offsets", "1960-01-01"),
    ],
)
def test_now_out_of_range_exits_2_naming_the_option_and_the_range(
    tmp_path: Path, command: str, now: str
) -> None:
    lake = tmp_path / "lake"
    lake.mkdir()
    config = tmp_path / "config.yaml"
    config.write_text("broker: {}\n", encoding="utf-8")
    done = cli(*command_line(command, lake, config, now))
    assert done.returncode == 2, done.stderr
    assert "argument --now:" in done.stderr
    assert RANGE in done.stderr
    assert "Traceback" not in done.stderr
    assert list(lake.iterdir()) == []  # refused before any work


def test_the_bounds_themselves_parse() -> None:
    assert parse_time_ms("0") == 0
    assert parse_time_ms(str(MAX_TIME_MS)) == MAX_TIME_MS
    assert parse_time_ms("9999-12-31T23:59:59.999Z") == MAX_TIME_MS
    assert parse_time_ms("1970-01-01T00:00:00Z") == 0


def test_a_number_with_too_many_digits_to_convert_is_out_of_range_too() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="out of range") as caught:
        parse_time_ms("9" * 5000)
    assert len(str(caught.value)) < 300  # the value is shortened in the message


def test_a_run_before_the_heads_now_is_warned_about_never_a_negative_gauge(tmp_path: Path) -> None:
    """A run whose ``now`` precedes the head's (a backfill of an earlier time, or a schedule whose interval
    ended before the lake's last commit) runs as documented, as of its own ``now``; its report warns,
    naming both times, and ``time-since-last-run-ms`` is left out rather than negative (issue 37)."""
    from kafka_segments.cli.warm import CONFIG, NOW_MS, write_lake

    lake, config = tmp_path / "lake", tmp_path / "config.yaml"
    write_lake(lake)
    config.write_text(CONFIG, encoding="utf-8")
    first = cli("run", "--lake", str(lake), "--config", str(config), "--now", str(NOW_MS), "--json")
    assert first.returncode == 0, first.stderr
    earlier = NOW_MS - 600_000
    argv = ["run", "--lake", str(lake), "--config", str(config), "--now", str(earlier)]
    done = cli(*argv, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["now_ms"], report["base_now_ms"]) == (earlier, NOW_MS)
    assert report["metrics"]["log_cleaner"]["time-since-last-run-ms"] is None
    text = cli(*argv).stdout
    assert f"WARNING: now={earlier} (" in text
    assert f"precedes the now of version 1 ({NOW_MS} (" in text
    assert "by 600000 ms" in text
