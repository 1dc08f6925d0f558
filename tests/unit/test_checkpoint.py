"""Kafka text offset checkpoint files: Kafka's read errors, the written bytes, atomic writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.checkpoint import (
    PartitionLogStart,
    atomic_write,
    format_offset_checkpoint,
    log_start_offsets_to_checkpoint,
    parse_offset_checkpoint,
    read_offset_checkpoint,
)
from kafka_segments.errors import CheckpointFileError
from kafka_segments.topic_partition import TopicPartition

pytestmark = pytest.mark.unit

CHECKPOINTS = Path(__file__).resolve().parents[1] / "data" / "checkpoints"
GOLDEN = {
    TopicPartition("__consumer_offsets", 7): 1024,
    TopicPartition("my-topic", 0): 1234,
    TopicPartition("my-topic", 1): 99,
}
tp = TopicPartition


def test_golden_file_reads_to_its_map() -> None:
    assert read_offset_checkpoint(CHECKPOINTS / "cleaner-offset-checkpoint") == GOLDEN


def test_writing_the_map_gives_the_golden_bytes_sorted_by_topic_then_partition() -> None:
    assert format_offset_checkpoint(GOLDEN) == (CHECKPOINTS / "cleaner-offset-checkpoint").read_bytes()


def test_kafka_hash_order_reads_the_same() -> None:
    assert read_offset_checkpoint(CHECKPOINTS / "hash-order-checkpoint") == GOLDEN


def test_crlf_lines_and_a_missing_final_newline_read_as_java_readline_does() -> None:
    assert read_offset_checkpoint(CHECKPOINTS / "crlf-no-final-newline-checkpoint") == {
        tp("my.topic-with-dash", 12): 2**63 - 1,
        tp("my.topic-with-dash", 3): 0,
    }


def test_empty_map_file() -> None:
    data = (CHECKPOINTS / "empty-map-checkpoint").read_bytes()
    assert data == b"0\n0\n"
    assert parse_offset_checkpoint(data) == {}
    assert format_offset_checkpoint({}) == data


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", {}),  # empty file
        (b"0", {}),  # version line, no count line
        (b"0\n", {}),
        (b"0\r\n", {}),
        (b"0\r1\rt 0 1", {tp("t", 0): 1}),  # lone CR ends a line too
        (b"0\n1\nt 0 1 \n", {tp("t", 0): 1}),  # Java drops trailing empty parts
        (b"0\n1\nt\t0  \x0b1\n", {tp("t", 0): 1}),  # \s+ is any run of Java whitespace
        (b"+0\n+1\nt +0 -5\n", {tp("t", 0): -5}),  # parseInt accepts a sign
        (b"0\n2\nt 0 1\nt 0 2\n", {tp("t", 0): 2}),  # HashMap.put: the last one wins
    ],
)
def test_contents_kafka_accepts(content: bytes, expected: dict[TopicPartition, int]) -> None:
    assert parse_offset_checkpoint(content) == expected


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        (b"1\n0\n", 1, r"Unrecognised version:1, expected version: 0 in checkpoint file at: cp"),
        (b"-1\n", 1, "Unrecognised version:-1"),
        (b"x\n0\n", 1, r"Malformed line in checkpoint file \[cp\]: x"),
        (b" 0\n0\n", 1, "Malformed line"),  # parseInt does not trim
        (b"0 \n0\n", 1, "Malformed line"),
        (b"2147483648\n", 1, "Malformed line"),  # not an int32
        (b"0\nx\n", 2, "Malformed line"),
        (b"0\n\n", 2, "Malformed line"),
        (b"0\n-1\n", 2, "Illegal Capacity: -1"),
        (b"0\n1\nt 0\n", 3, r"Malformed line in checkpoint file \[cp\]: t 0"),
        (b"0\n1\nt 0 1 2\n", 3, "Malformed line"),
        (b"0\n1\n t 0 1\n", 3, "Malformed line"),  # a leading separator gives an empty first part
        (b"0\n1\nt 0 1\n\n", 4, "Malformed line"),  # a blank line is an entry line
        (b"0\n1\nt x 1\n", 3, 'invalid partition: NumberFormatException: For input string: "x"'),
        (b"0\n1\nt 2147483648 1\n", 3, "invalid partition"),
        (b"0\n1\nt 0 1.5\n", 3, 'invalid offset: NumberFormatException: For input string: "1.5"'),
        (b"0\n1\nt 0 9223372036854775808\n", 3, "invalid offset"),
        (b"0\n1\nbad/topic 0 1\n", 3, "illegal"),  # Kafka reads it; a TopicPartition cannot hold it
        (b"0\n1\nt -1 1\n", 3, "partition -1"),
    ],
)
def test_kafka_read_errors_name_the_path_and_line(content: bytes, line: int, message: str) -> None:
    with pytest.raises(CheckpointFileError, match=message) as caught:
        parse_offset_checkpoint(content, path="cp")
    assert caught.value.path == "cp"
    assert caught.value.line == line
    assert str(caught.value).startswith(f"cp line {line}: ")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"0\n2\nt 0 1\n", r"Expected \[2\] entries in checkpoint file \[cp\], but found only \[1\]"),
        (b"0\n1\nt 0 1\nt 1 2\n", r"Expected \[1\] entries in checkpoint file \[cp\], but found only \[2\]"),
        (b"0\n1\n", r"Expected \[1\] entries .* found only \[0\]"),
        (b"0\n1\nt 0 \xff\n", "not valid UTF-8 at byte 8"),
    ],
)
def test_kafka_whole_file_errors_name_the_path(content: bytes, message: str) -> None:
    with pytest.raises(CheckpointFileError, match=message) as caught:
        parse_offset_checkpoint(content, path="cp")
    assert caught.value.line is None


def test_malformed_line_is_reported_before_a_count_mismatch() -> None:
    with pytest.raises(CheckpointFileError, match="Malformed line"):
        parse_offset_checkpoint(b"0\n5\nt 0 1\nbroken\n")


topic_partitions = st.builds(
    TopicPartition,
    st.text(alphabet="ab-_.Z9", min_size=1, max_size=30).filter(lambda t: t not in (".", "..")),
    st.integers(0, 2**31 - 1),
)


@given(st.dictionaries(topic_partitions, st.integers(-(2**63), 2**63 - 1), max_size=30))
def test_round_trip(offsets: dict[TopicPartition, int]) -> None:
    data = format_offset_checkpoint(offsets)
    assert parse_offset_checkpoint(data) == offsets
    assert format_offset_checkpoint(dict(reversed(list(offsets.items())))) == data


def test_format_rejects_what_kafka_cannot_store() -> None:
    with pytest.raises(ValueError, match="int64"):
        format_offset_checkpoint({tp("t", 0): 2**63})
    with pytest.raises(TypeError, match="TopicPartition"):
        format_offset_checkpoint({("t", 0): 1})  # type: ignore[dict-item]


def test_atomic_write_without_sync(tmp_path: Path) -> None:
    atomic_write(tmp_path / "f", b"x", sync=False)
    assert (tmp_path / "f").read_bytes() == b"x"
    assert not (tmp_path / "f.tmp").exists()


def test_missing_file_reads_empty_as_kafka_creates_it_first(tmp_path: Path) -> None:
    assert read_offset_checkpoint(tmp_path / "recovery-point-offset-checkpoint") == {}


def test_log_start_offset_checkpoint_lists_only_partitions_started_past_their_first_segment() -> None:
    logs = {
        tp("a", 0): PartitionLogStart(log_start_offset=100, first_segment_base_offset=100),
        tp("a", 1): PartitionLogStart(log_start_offset=150, first_segment_base_offset=100),
        tp("b", 0): PartitionLogStart(
            log_start_offset=0, first_segment_base_offset=0, remote_log_enabled=True
        ),
    }
    assert log_start_offsets_to_checkpoint(logs) == {tp("a", 1): 150, tp("b", 0): 0}
