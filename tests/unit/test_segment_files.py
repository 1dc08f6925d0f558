"""Segment file names, partition directory names and Kafka's topic-name rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import InvalidFileNameError, InvalidTopicError
from kafka_segments.segment import (
    FileKind,
    SegmentFileName,
    TransientSuffix,
    filename_prefix,
    parse_partition_dir_name,
    parse_segment_file_name,
    partition_dir_name,
    segment_file_name,
)
from kafka_segments.topic_partition import TopicPartition, validate_topic_name

pytestmark = pytest.mark.unit

topics = st.text(alphabet="abcxyzABC019._-", min_size=1, max_size=249).filter(lambda t: t not in (".", ".."))


@pytest.mark.parametrize(
    ("offset", "kind", "expected"),
    [
        (0, FileKind.LOG, "00000000000000000000.log"),
        (5, FileKind.INDEX, "00000000000000000005.index"),
        (1234567, FileKind.TIME_INDEX, "00000000000001234567.timeindex"),
        (2**63 - 1, FileKind.TXN_INDEX, "09223372036854775807.txnindex"),
        (42, FileKind.SNAPSHOT, "00000000000000000042.snapshot"),
    ],
)
def test_file_name_is_the_20_digit_zero_padded_base_offset(
    offset: int, kind: FileKind, expected: str
) -> None:
    assert segment_file_name(offset, kind) == expected
    assert parse_segment_file_name(expected) == SegmentFileName(offset, kind)


def test_transient_suffix_follows_the_kind() -> None:
    name = segment_file_name(7, FileKind.LOG, suffix=TransientSuffix.CLEANED)
    assert name == "00000000000000000007.log.cleaned"
    assert parse_segment_file_name(name) == SegmentFileName(7, FileKind.LOG, TransientSuffix.CLEANED)
    assert (
        str(parse_segment_file_name("00000000000000000007.index.swap")) == "00000000000000000007.index.swap"
    )


@pytest.mark.parametrize(
    "name",
    [
        "leader-epoch-checkpoint",
        "partition.metadata",
        "00000000000000000000",
        "00000000000000000000.idx",
        "00000000000000000000.log.tmp",
        "-0000000000000000001.log",
        "99999999999999999999.log",  # above int64
        "0000000000000000000x.log",
    ],
)
def test_other_names_are_rejected(name: str) -> None:
    with pytest.raises(InvalidFileNameError, match="segment"):
        parse_segment_file_name(name)


@pytest.mark.parametrize("offset", [-1, 2**63])
def test_offset_outside_int64_has_no_file_name(offset: int) -> None:
    with pytest.raises(InvalidFileNameError):
        filename_prefix(offset)


@pytest.mark.parametrize(
    ("name", "topic", "partition"),
    [
        ("my-topic-0", "my-topic", 0),
        ("a-b-c-12", "a-b-c", 12),
        ("__consumer_offsets-49", "__consumer_offsets", 49),
        ("t--1", "t-", 1),
        ("x.y_z-007", "x.y_z", 7),
    ],
)
def test_partition_dir_name_is_split_at_the_last_dash(name: str, topic: str, partition: int) -> None:
    assert parse_partition_dir_name(name) == TopicPartition(topic, partition)


@pytest.mark.parametrize(
    "name", ["topic", "-0", "topic-", "topic-x", "topic-1.5", "top ic-0", "topic-99999999999"]
)
def test_malformed_partition_dir_names_are_rejected(name: str) -> None:
    with pytest.raises(InvalidTopicError):
        parse_partition_dir_name(name)


@given(topics, st.integers(0, 2**31 - 1))
def test_partition_dir_name_round_trip(topic: str, partition: int) -> None:
    tp = TopicPartition(topic, partition)
    assert parse_partition_dir_name(partition_dir_name(tp)) == tp
    assert str(tp) == partition_dir_name(tp)


@pytest.mark.parametrize(
    ("topic", "message"),
    [
        ("", "can't be empty"),
        (".", "cannot be"),
        ("..", "cannot be"),
        ("a" * 250, "longer than 249"),
        ("bad/topic", "character other than"),
        ("caf\u00e9", "character other than"),
        ("with space", "character other than"),
    ],
)
def test_kafka_topic_name_rules(topic: str, message: str) -> None:
    with pytest.raises(InvalidTopicError, match=message):
        validate_topic_name(topic)
    with pytest.raises(ValueError, match=message):
        TopicPartition(topic, 0)


def test_legal_topic_names() -> None:
    for topic in ("a", "a" * 249, "...", "_-.", "Topic_1.2-3"):
        validate_topic_name(topic)


@pytest.mark.parametrize("partition", [-1, 2**31, True])
def test_partition_must_be_a_non_negative_int32(partition: int) -> None:
    with pytest.raises(InvalidTopicError, match="partition"):
        TopicPartition("t", partition)


def test_topic_partitions_order_by_topic_then_partition() -> None:
    unsorted = [TopicPartition("b", 0), TopicPartition("a", 10), TopicPartition("a", 2)]
    assert sorted(unsorted) == [TopicPartition("a", 2), TopicPartition("a", 10), TopicPartition("b", 0)]
