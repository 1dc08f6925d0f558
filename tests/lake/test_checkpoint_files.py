"""Kafka's text checkpoint files at the lake root: what the head manifest puts in them (Kafka's rule for
``log-start-offset-checkpoint``), and reading them as bootstrap inputs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.checkpoint import (
    PartitionLogStart,
    log_start_offsets_to_checkpoint,
    parse_offset_checkpoint,
)
from kafka_segments.errors import CheckpointFileError
from kafka_segments.lake.checkpoint_files import (
    BootstrapCheckpoints,
    checkpoint_file_contents,
    checkpoint_files_match,
    read_bootstrap_checkpoints,
    write_checkpoint_files,
)
from kafka_segments.lake.layout import (
    CLEANER_OFFSET_CHECKPOINT_KEY,
    LOG_START_OFFSET_CHECKPOINT_KEY,
    segment_key,
)
from kafka_segments.state import Manifest, PartitionState, SegmentEntry, SegmentOrigin
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition

pytestmark = pytest.mark.lake

LOG_START = LOG_START_OFFSET_CHECKPOINT_KEY
CLEANER = CLEANER_OFFSET_CHECKPOINT_KEY


def _segment(topic_partition: TopicPartition, base_offset: int, last_offset: int) -> SegmentEntry:
    return SegmentEntry(
        key=segment_key(topic_partition, base_offset),
        base_offset=base_offset,
        last_offset=last_offset,
        size=100,
        sha256="0" * 64,
        etag="",
        record_count=last_offset - base_offset + 1,
        batch_count=1,
        max_timestamp_ms=-1,
        first_batch_max_timestamp_ms=-1,
        last_modified_ms=0,
        origin=SegmentOrigin.ADOPTED,
        run_id="r",
    )


def _partition(
    name: str, *, log_start: int, first_base: int | None, cleaner: int | None = None
) -> PartitionState:
    """A partition whose segments start at ``first_base`` (``None``: no segments, log end = log start)."""
    topic_partition = TopicPartition.from_dir_name(name)
    if first_base is None:
        return PartitionState(
            topic_partition, log_start, log_start, (), cleaner_checkpoint=cleaner, run_id="r"
        )
    segments = (
        _segment(topic_partition, first_base, first_base + 99),
        _segment(topic_partition, first_base + 100, first_base + 199),
    )
    return PartitionState(
        topic_partition, log_start, first_base + 200, segments, cleaner_checkpoint=cleaner, run_id="r"
    )


def _manifest(*partitions: PartitionState) -> Manifest:
    return Manifest(
        version=1,
        parent_version=None,
        run_id="r",
        operation="test",
        committed_at_ms=0,
        now_ms=0,
        partitions=partitions,
    )


MANIFEST = _manifest(
    _partition("a-0", log_start=0, first_base=0, cleaner=30),  # nothing deleted
    _partition("a-1", log_start=100, first_base=100),  # whole segments deleted: the first base says it
    _partition("a-2", log_start=150, first_base=100),  # deleteRecords inside the first segment
    _partition("b-0", log_start=0, first_base=None),  # never had data
    _partition("b-1", log_start=40, first_base=None, cleaner=40),  # every segment deleted
)


def test_log_start_checkpoint_lists_only_partitions_whose_log_start_is_above_the_first_segment() -> None:
    contents = checkpoint_file_contents(MANIFEST)
    assert contents[LOG_START] == b"0\n2\na 2 150\nb 1 40\n"
    assert parse_offset_checkpoint(contents[LOG_START]) == {
        TopicPartition("a", 2): 150,
        TopicPartition("b", 1): 40,
    }


def test_cleaner_checkpoint_lists_every_partition_with_a_cleaner_checkpoint() -> None:
    contents = checkpoint_file_contents(MANIFEST)
    assert contents[CLEANER] == b"0\n2\na 0 30\nb 1 40\n"
    assert parse_offset_checkpoint(contents[CLEANER]) == {
        TopicPartition("a", 0): 30,
        TopicPartition("b", 1): 40,
    }


def test_no_manifest_gives_empty_checkpoint_files() -> None:
    assert checkpoint_file_contents(None) == {LOG_START: b"0\n0\n", CLEANER: b"0\n0\n"}
    assert checkpoint_file_contents(_manifest()) == checkpoint_file_contents(None)


partition_shapes = st.dictionaries(
    st.builds(TopicPartition, st.sampled_from(["a", "b.c", "d_e-f"]), st.integers(0, 5)),
    st.tuples(st.none() | st.integers(0, 10**6), st.integers(0, 1000), st.none() | st.integers(0, 10**9)),
    max_size=6,
)


@given(partition_shapes)
def test_log_start_checkpoint_is_kafkas_rule(
    shapes: dict[TopicPartition, tuple[int | None, int, int | None]],
) -> None:
    partitions = [
        _partition(
            tp.dir_name,
            log_start=(first_base or 0) + above,
            first_base=first_base,
            cleaner=cleaner,
        )
        for tp, (first_base, above, cleaner) in sorted(shapes.items())
    ]
    contents = checkpoint_file_contents(_manifest(*partitions))

    with_segments = {
        p.topic_partition: PartitionLogStart(p.log_start_offset, p.segments[0].base_offset)
        for p in partitions
        if p.segments
    }
    without_segments = {p.topic_partition: p.log_start_offset for p in partitions if not p.segments}
    expected = log_start_offsets_to_checkpoint(with_segments) | {
        tp: offset for tp, offset in without_segments.items() if offset > 0
    }
    assert parse_offset_checkpoint(contents[LOG_START]) == expected
    cleaner = {
        p.topic_partition: p.cleaner_checkpoint for p in partitions if p.cleaner_checkpoint is not None
    }
    assert parse_offset_checkpoint(contents[CLEANER]) == cleaner


# ------------------------------------------------------------------------------------------------- in a store


def test_written_files_match_the_manifest(store: ObjectStore) -> None:
    assert not checkpoint_files_match(store, MANIFEST)
    write_checkpoint_files(store, MANIFEST)
    assert checkpoint_files_match(store, MANIFEST)
    assert {key: store.get(key) for key in (LOG_START, CLEANER)} == checkpoint_file_contents(MANIFEST)
    store.put(CLEANER, b"0\n0\n")
    assert not checkpoint_files_match(store, MANIFEST)


def test_bootstrap_without_checkpoint_files_is_empty(store: ObjectStore) -> None:
    assert read_bootstrap_checkpoints(store) == BootstrapCheckpoints({}, {})


def test_bootstrap_reads_a_copied_log_directorys_checkpoints(store: ObjectStore) -> None:
    store.put(LOG_START, b"0\n2\norders 1 500\norders 0 20\n")
    store.put(CLEANER, b"0\r\n1\r\norders\t0  12\r\n")  # Kafka's reader takes any line end and \s+
    assert read_bootstrap_checkpoints(store) == BootstrapCheckpoints(
        log_start_offsets={TopicPartition("orders", 0): 20, TopicPartition("orders", 1): 500},
        cleaner_offsets={TopicPartition("orders", 0): 12},
    )


@pytest.mark.parametrize(
    ("key", "data", "line", "match"),
    [
        pytest.param(LOG_START, b"0\n1\norders 0\n", 3, r"Malformed line in checkpoint file", id="two parts"),
        pytest.param(
            LOG_START, b"0\n1\norders x 5\n", 3, r"invalid partition: NumberFormatException", id="partition"
        ),
        pytest.param(CLEANER, b"1\n0\n", 1, r"Unrecognised version:1", id="version"),
        pytest.param(CLEANER, b"0\n2\norders 0 5\n", None, r"Expected \[2\] entries", id="count"),
        pytest.param(CLEANER, b"0\n1\n.. 0 5\n", 3, r"invalid entry", id="illegal topic"),
        pytest.param(LOG_START, b"0\nabc\n", 2, r"Malformed line", id="count not a number"),
    ],
)
def test_bootstrap_refuses_a_malformed_file_naming_the_object_and_line(
    store: ObjectStore, key: str, data: bytes, line: int | None, match: str
) -> None:
    store.put(key, data)
    with pytest.raises(CheckpointFileError, match=match) as caught:
        read_bootstrap_checkpoints(store)
    assert caught.value.path == store.location(key)
    assert caught.value.line == line
    assert str(caught.value).startswith(store.location(key) + (f" line {line}" if line else ""))


def test_bootstrap_refuses_a_file_that_is_not_utf8(store: ObjectStore) -> None:
    store.put(LOG_START, b"0\n1\n\xff 0 5\n")
    with pytest.raises(CheckpointFileError, match="not valid UTF-8 at byte 4") as caught:
        read_bootstrap_checkpoints(store)
    assert caught.value.path == store.location(LOG_START)
