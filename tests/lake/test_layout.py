"""Where things live in a lake: manifest keys, segment keys with and without a run id, run ids."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import InvalidFileNameError, InvalidRunIdError, InvalidTopicError
from kafka_segments.lake.layout import (
    MANIFESTS_PREFIX,
    SegmentObjectName,
    index_keys,
    is_meta_key,
    manifest_key,
    new_run_id,
    outcome_key,
    parse_manifest_key,
    parse_run_folder_key,
    parse_run_record_key,
    parse_segment_key,
    run_record_key,
    segment_key,
    staged_manifest_key,
    try_parse_segment_key,
    validate_run_id,
)
from kafka_segments.segment.files import FileKind
from kafka_segments.topic_partition import TopicPartition

pytestmark = pytest.mark.unit

INT64_MAX = 2**63 - 1
TP = TopicPartition("orders", 0)
RUN = "20251121T044000Z-0a1b2c3d"

topics = st.from_regex(r"[a-zA-Z0-9._-]{1,40}", fullmatch=True).filter(lambda t: t not in {".", ".."})
topic_partitions = st.builds(TopicPartition, topics, st.integers(0, 2**31 - 1))
run_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}", fullmatch=True)
versions = st.integers(1, INT64_MAX)


# -------------------------------------------------------------------------------------------------- manifests


def test_manifest_key_is_the_zero_padded_version() -> None:
    assert manifest_key(7) == "_kafka_segments/manifests/00000000000000000007.json"
    assert parse_manifest_key(manifest_key(7)) == 7
    assert is_meta_key(manifest_key(7))


@given(versions, versions)
def test_manifest_keys_sort_in_version_order(first: int, second: int) -> None:
    assert (manifest_key(first) < manifest_key(second)) == (first < second)
    assert parse_manifest_key(manifest_key(first)) == first


@pytest.mark.parametrize("version", [0, -1])
def test_manifest_versions_start_at_1(version: int) -> None:
    with pytest.raises(ValueError, match="manifest versions start at 1"):
        manifest_key(version)


@pytest.mark.parametrize(
    "key",
    [
        "_kafka_segments/manifests/00000000000000000000.json",  # version 0 does not exist
        "_kafka_segments/manifests/7.json",
        "_kafka_segments/manifests/00000000000000000007.json.tmp",
        "_kafka_segments/manifests/00000000000000000007.json\n",
        "_kafka_segments/manifests/0000000000000000000\u0667.json",  # a non-ASCII digit
        "_kafka_segments/manifests/sub/00000000000000000007.json",
        "_kafka_segments/runs/00000000000000000007.json",
        "00000000000000000007.json",
    ],
)
def test_other_keys_are_not_manifest_keys(key: str) -> None:
    assert parse_manifest_key(key) is None


# --------------------------------------------------------------------------------------------------- segments


def test_segment_keys_follow_kafka_names() -> None:
    assert segment_key(TP, 0) == "orders-0/00000000000000000000.log"
    assert segment_key(TP, 100, FileKind.INDEX, run_id=RUN) == f"orders-0/00000000000000000100-{RUN}.index"
    assert index_keys(f"orders-0/00000000000000000100-{RUN}.log") == (
        f"orders-0/00000000000000000100-{RUN}.index",
        f"orders-0/00000000000000000100-{RUN}.timeindex",
        f"orders-0/00000000000000000100-{RUN}.txnindex",
    )
    assert not is_meta_key(segment_key(TP, 0))


@given(
    topic_partitions,
    st.integers(0, INT64_MAX),
    st.sampled_from(FileKind),
    st.none() | run_ids,
)
def test_segment_keys_parse_back(
    topic_partition: TopicPartition, base_offset: int, kind: FileKind, run_id: str | None
) -> None:
    key = segment_key(topic_partition, base_offset, kind, run_id=run_id)
    parsed = parse_segment_key(key)
    assert parsed == SegmentObjectName(topic_partition, base_offset, kind, run_id)
    assert parsed.key == key
    assert parsed.is_plain == (run_id is None)


def test_a_topic_with_dashes_splits_at_the_last_dash() -> None:
    parsed = parse_segment_key(f"my-topic-v2-12/00000000000000000042-{RUN}.timeindex")
    assert parsed == SegmentObjectName(TopicPartition("my-topic-v2", 12), 42, FileKind.TIME_INDEX, RUN)


@pytest.mark.parametrize(
    "key",
    [
        "../orders-0/00000000000000000000.log",
        "orders-0/../00000000000000000000.log",
        "orders-0/../../etc/00000000000000000000.log",
        "/orders-0/00000000000000000000.log",
        "/00000000000000000000.log",
        "00000000000000000000.log",
        "orders-0//00000000000000000000.log",
        "orders-0\\00000000000000000000.log",
        "orders-0/..\\00000000000000000000.log",
        "orders-0/00000000000000000000.log/",
        "orders-0/00000000000000000000.log\n",
        "orders-0/0000000000000000000\u0660.log",
        "orders-0/00000000000000000000.log.deleted",
        "orders-0/00000000000000000000.unknown",
        "orders-0/0000000000000000000.log",
        "orders-0/00000000000000000000-.log",
        "orders-0/00000000000000000000-bad/run.log",
        "orders-0/00000000000000000000--run.log",
    ],
)
def test_keys_that_are_not_segment_names_are_refused(key: str) -> None:
    with pytest.raises(InvalidFileNameError, match="is not"):
        parse_segment_key(key)
    assert try_parse_segment_key(key) is None


@pytest.mark.parametrize(
    "key",
    [
        "..-0/00000000000000000000.log",
        ".-0/00000000000000000000.log",
        "ord\\ers-0/00000000000000000000.log",
        "ord ers-0/00000000000000000000.log",
        "orders-/00000000000000000000.log",
        "orders/00000000000000000000.log",
        "-0/00000000000000000000.log",
        "orders-99999999999/00000000000000000000.log",
        f"{'t' * 250}-0/00000000000000000000.log",
    ],
)
def test_keys_naming_an_illegal_topic_partition_are_refused(key: str) -> None:
    with pytest.raises(InvalidTopicError):
        parse_segment_key(key)
    assert try_parse_segment_key(key) is None


def test_index_keys_need_a_log_key() -> None:
    with pytest.raises(InvalidFileNameError, match=r"is not a \.log key"):
        index_keys("orders-0/00000000000000000000.index")


# ---------------------------------------------------------------------------------------------------- run ids


def test_run_keys_live_in_the_run_folder() -> None:
    assert run_record_key(RUN) == f"_kafka_segments/runs/{RUN}/run.json"
    assert staged_manifest_key(RUN) == f"_kafka_segments/runs/{RUN}/manifest.json"
    assert outcome_key(RUN) == f"_kafka_segments/runs/{RUN}/outcome.json"
    assert parse_run_record_key(run_record_key(RUN)) == RUN
    assert parse_run_record_key(staged_manifest_key(RUN)) is None
    assert parse_run_record_key("_kafka_segments/runs/a/b/run.json") is None
    assert parse_run_record_key("_kafka_segments/runs/bad\n/run.json") is None
    assert parse_run_folder_key(outcome_key(RUN)) == (RUN, "outcome.json")
    assert parse_run_folder_key(run_record_key(RUN)) == (RUN, "run.json")
    assert parse_run_folder_key(f"_kafka_segments/runs/{RUN}/docs/index.html") == (RUN, "docs/index.html")
    assert parse_run_folder_key(f"_kafka_segments/runs/{RUN}/") is None
    assert parse_run_folder_key(f"_kafka_segments/manifests/{RUN}/run.json") is None


@given(run_ids)
def test_valid_run_ids_are_accepted(run_id: str) -> None:
    assert validate_run_id(run_id) == run_id
    assert parse_run_record_key(run_record_key(run_id)) == run_id


@pytest.mark.parametrize(
    "run_id",
    [
        "",
        "-starts-with-dash",
        "_starts-with-underscore",
        "has/slash",
        "has.dot",
        "..",
        "has space",
        "trailing-newline\n",
        "ümlaut",
        "\u0661\u0662",  # non-ASCII digits
        "a" * 101,
        None,
        7,
    ],
)
def test_invalid_run_ids_are_refused(run_id: object) -> None:
    with pytest.raises(InvalidRunIdError, match="invalid run id"):
        validate_run_id(run_id)  # type: ignore[arg-type]
    with pytest.raises(InvalidRunIdError):
        run_record_key(run_id)  # type: ignore[arg-type]
    if run_id is not None:  # no run id is Kafka's plain name
        with pytest.raises(InvalidRunIdError):
            segment_key(TP, 0, run_id=run_id)  # type: ignore[arg-type]


def test_a_run_id_of_100_characters_is_the_longest() -> None:
    assert validate_run_id("a" * 100) == "a" * 100


def test_new_run_id_is_valid_and_names_its_time() -> None:
    run_id = new_run_id(wall_ms=1_763_700_000_000)
    assert validate_run_id(run_id) == run_id
    assert run_id.startswith("20251121T044000Z-")
    assert new_run_id(wall_ms=1_763_700_000_000) != run_id  # the random part


@given(st.integers(0, 2**43), st.integers(1000, 2**40))
def test_new_run_ids_sort_by_time(first_ms: int, later_by_ms: int) -> None:
    """Run ids of runs started at least a second apart sort in start order (``list_runs`` relies on it)."""
    assert new_run_id(wall_ms=first_ms) < new_run_id(wall_ms=first_ms + later_by_ms)


def test_new_run_id_without_a_time_uses_the_wall_clock() -> None:
    assert validate_run_id(new_run_id())
    assert MANIFESTS_PREFIX.startswith("_kafka_segments/")
