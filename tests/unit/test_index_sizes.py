"""``segment.index_sizes``: the index sizes counted from a ``.log`` equal those of the indexes the writer
builds for it (the sizes ``Cleaner.groupSegmentsBySize`` compares with segment.index.bytes)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.records import Record, build_batch
from kafka_segments.segment.index_sizes import IndexSizes, index_sizes
from kafka_segments.segment.writer import write_segment

pytestmark = pytest.mark.unit


def _log(batches: list[tuple[int, int]]) -> list[bytes]:
    """One single-record batch per (value size, timestamp), at consecutive offsets."""
    return [
        build_batch([Record(offset=i, timestamp=ts, key=b"k", value=b"v" * size)], base_offset=i)
        for i, (size, ts) in enumerate(batches)
    ]


@settings(max_examples=150, deadline=None)
@given(
    batches=st.lists(st.tuples(st.integers(0, 300), st.integers(-1, 50)), min_size=0, max_size=60),
    interval=st.sampled_from([0, 1, 100, 500, 4096]),
)
def test_index_sizes_equal_the_written_indexes(batches: list[tuple[int, int]], interval: int) -> None:
    log = _log(batches)
    files = write_segment(log, base_offset=0, index_interval_bytes=interval, segment_index_bytes=None)

    assert index_sizes(files.log, index_interval_bytes=interval) == IndexSizes(
        len(files.offset_index), len(files.time_index)
    )


def test_an_empty_log_has_empty_indexes() -> None:
    assert index_sizes(b"", index_interval_bytes=4096) == IndexSizes(0, 0)


def test_an_entry_every_time_more_than_the_interval_was_appended() -> None:
    log = b"".join(_log([(100, 10), (100, 20), (100, 30), (100, 40)]))

    sizes = index_sizes(log, index_interval_bytes=1)

    # before batches 2-4, each with a time entry; none at close: the largest timestamp did not grow since
    assert sizes == IndexSizes(3 * 8, 3 * 12)
