"""The cleaner's offset map settings (``log.cleaner.dedupe.buffer.size``,
``log.cleaner.io.buffer.load.factor``, ``log.cleaner.threads``): accepted at broker level, checked as a Kafka
broker checks them at startup."""

from __future__ import annotations

import pytest
from kafka_segments.config import ConfigCheck, check_config, parse_config
from kafka_segments.config.model import OffsetMapCapacity

pytestmark = pytest.mark.unit

MIB = 1024 * 1024


def check(text: str) -> ConfigCheck:
    return check_config(text, source="test.yaml")


def broker(**values: object) -> str:
    lines = "".join(f"  {name.replace('_', '.')}: {value}\n" for name, value in values.items())
    return "broker:\n" + lines


def test_unset_the_map_is_unbounded_whatever_the_other_two_say() -> None:
    config = parse_config(broker(log_cleaner_threads=4), source="t").for_topic("t")
    assert config.dedupe_buffer_size is None
    assert config.offset_map_capacity is None


def test_a_set_buffer_gives_kafkas_map_per_cleaner_thread() -> None:
    text = broker(
        log_cleaner_dedupe_buffer_size=8 * MIB, log_cleaner_threads=2, log_cleaner_io_buffer_load_factor=0.5
    )
    config = parse_config(text, source="t").for_topic("t")
    assert (config.dedupe_buffer_size, config.cleaner_threads, config.dedupe_buffer_load_factor) == (
        8 * MIB,
        2,
        0.5,
    )
    assert config.offset_map_capacity == OffsetMapCapacity(4 * MIB // 24, int(4 * MIB // 24 * 0.5))
    assert parse_config(text, source="t").settings("t")[-1].source.startswith("broker: ")


@pytest.mark.parametrize(
    ("values", "ok"),
    [
        ({"log_cleaner_dedupe_buffer_size": MIB + 1}, True),
        ({"log_cleaner_dedupe_buffer_size": MIB}, False),  # "must be at least 1MB per cleaner thread" (>)
        ({"log_cleaner_dedupe_buffer_size": 2 * MIB + 2, "log_cleaner_threads": 2}, True),
        (
            {"log_cleaner_dedupe_buffer_size": 2 * MIB + 1, "log_cleaner_threads": 2},
            False,
        ),  # integer division
        ({"log_cleaner_dedupe_buffer_size": -1}, False),
        ({"log_cleaner_dedupe_buffer_size": 4 * MIB, "log_cleaner_io_buffer_load_factor": 1.5}, True),
        ({"log_cleaner_dedupe_buffer_size": 4 * MIB, "log_cleaner_io_buffer_load_factor": 0.00001}, True),
        ({"log_cleaner_dedupe_buffer_size": 4 * MIB, "log_cleaner_io_buffer_load_factor": 0.000005}, False),
        ({"log_cleaner_dedupe_buffer_size": 4 * MIB, "log_cleaner_io_buffer_load_factor": 0}, False),
        ({"log_cleaner_threads": 0}, True),  # no buffer: nothing divides by it
        ({"log_cleaner_threads": -1}, False),  # CleanerConfig: atLeast(0)
    ],
)
def test_kafkas_startup_checks_at_their_boundaries(values: dict[str, object], ok: bool) -> None:
    assert check(broker(**values)).ok is ok


@pytest.mark.parametrize(
    ("values", "key", "words"),
    [
        (
            {"log_cleaner_dedupe_buffer_size": 4 * MIB, "log_cleaner_threads": 0},
            "broker.log.cleaner.threads",
            "is divided by log.cleaner.threads (0): it must be at least 1",
        ),
        (
            {"log_cleaner_dedupe_buffer_size": 3 * MIB, "log_cleaner_threads": 3},
            "broker.log.cleaner.dedupe.buffer.size",
            "must be at least 1MB per cleaner thread: 3145728 / 3 thread(s) = 1048576 bytes",
        ),
        (
            {"log_cleaner_dedupe_buffer_size": 4 * MIB, "log_cleaner_io_buffer_load_factor": -0.5},
            "broker.log.cleaner.io.buffer.load.factor",
            "offset map is too small to fit in even a single message: 174762 slots x -0.5",
        ),
    ],
)
def test_each_problem_is_one_line_on_the_setting_to_change(
    values: dict[str, object], key: str, words: str
) -> None:
    (problem,) = check(broker(**values)).problems
    assert problem.key == key
    assert words in problem.rule
    assert "\n" not in problem.as_line()


def test_the_settings_are_broker_only() -> None:
    (problem,) = check("topics:\n  t:\n    log.cleaner.dedupe.buffer.size: 4194304\n").problems
    assert "broker-only" in problem.rule


def test_the_buffer_is_a_long_and_may_be_written_as_null_for_unset() -> None:
    assert check(broker(log_cleaner_dedupe_buffer_size=2**40)).ok
    assert check(broker(log_cleaner_dedupe_buffer_size="null")).ok
    assert not check(broker(log_cleaner_dedupe_buffer_size="1.5")).ok
