"""Large segments split at batch boundaries (``maxBytesPerPartition``): the same rows as the unsplit read for
every option, only the byte spans that hold a range are read, and a damaged, replaced or mis-indexed object
is one named error or the right rows, never other rows (docs/reading.md, "Large segments and byte ranges")."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_segments.errors import CorruptRecordError, PreconditionFailedError, SegmentObjectMismatchError
from kafka_segments.lake import begin_run, build_manifest, commit_run, stage_manifest
from kafka_segments.lake.layout import index_keys
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.lake.scan import sha256_hex
from kafka_segments.reading import ReadOptionError, plan_read
from kafka_segments.reading.pushdown import Narrowing
from kafka_segments.segment.offset_index import ENTRY
from kafka_segments.storage import LocalStore, ObjectStore
from kit import FakeClock
from pyspark.sql.datasource import GreaterThanOrEqual, LessThan
from s3_fixtures import new_s3_store

from reading.split_helpers import TP, RangeRecordingStore, commit_events, event_batches, rows, task_rows

pytestmark = pytest.mark.lake

UNSPLIT = str(1 << 40)
OPTION_SETS: list[dict[str, str]] = [
    {},
    {"kafka.isolation.level": "read_committed"},
    {"includeHeaders": "true"},
    {"view": "latest"},
    {"view": "latest", "kafka.isolation.level": "read_committed"},
]


def _lake(store: ObjectStore, *, seed: int = 7, count: int = 300, cut: int = 200, log_start: int = 5) -> int:
    """Commit the events lake; returns the last offset + 1."""
    manifest = commit_events(
        store, event_batches(seed, count=count), cut=cut, log_start=log_start, clock=FakeClock()
    )
    return manifest.partitions[0].log_end_offset


def _split(store: ObjectStore, options: dict[str, str], max_bytes: int) -> list[dict[str, object]]:
    return rows(store, {"subscribe": TP.topic, **options, "maxBytesPerPartition": str(max_bytes)})


def _unsplit(store: ObjectStore, options: dict[str, str]) -> list[dict[str, object]]:
    return _split(store, options, 1 << 40)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 1000),
    count=st.integers(40, 260),
    max_bytes=st.integers(200, 40_000),
    options=st.sampled_from(OPTION_SETS),
    window=st.tuples(st.floats(0, 1), st.floats(0, 1)),
)
def test_a_split_read_returns_exactly_the_rows_of_the_unsplit_read(
    seed: int, count: int, max_bytes: int, options: dict[str, str], window: tuple[float, float]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        end = _lake(store, seed=seed, count=count, cut=count * 2 // 3, log_start=min(5, count // 4))
        first, last = sorted(round(5 + f * (end - 5)) for f in window)
        ranged = {
            "startingOffsets": json.dumps({TP.topic: {str(TP.partition): first}}),
            "endingOffsets": json.dumps({TP.topic: {str(TP.partition): last}}),
            "failOnDataLoss": "false",
        }
        for chosen in (options, {**options, **ranged}):
            assert _split(store, chosen, max_bytes) == _unsplit(store, chosen)


def test_a_big_segment_is_split_into_linked_spans_and_read_once() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        _lake(store)
        plan = plan_read(store, {"subscribe": TP.topic, "maxBytesPerPartition": "8000"})
        spans = [task.span for task in plan.tasks]
        assert len(spans) > 10
        assert all(span is not None for span in spans)
        sizes = sum(segment.size for segment in resolve_manifest(store).partitions[0].segments)
        recording = RangeRecordingStore(store)
        assert _split(recording, {}, 8000) == _unsplit(store, {})
        assert recording.log_bytes == sizes  # every byte once: no fallback, no peek between linked spans


@pytest.mark.parametrize("backend", ["local", "s3"])
def test_an_offset_range_reads_only_the_spans_that_hold_it(
    backend: str, request: pytest.FixtureRequest
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        inner = (
            LocalStore(Path(folder))
            if backend == "local"
            else new_s3_store(request.getfixturevalue("s3_server"))
        )
        end = _lake(inner, count=600, cut=580)
        big = resolve_manifest(inner).partitions[0].segments[0]
        store = RangeRecordingStore(inner)
        window = {
            "startingOffsets": json.dumps({TP.topic: {"0": end // 3}}),
            "endingOffsets": json.dumps({TP.topic: {"0": end // 3 + 40}}),
        }
        assert _split(store, window, 4000) == _unsplit(inner, window)
        assert 0 < store.log_bytes <= 3 * 4000 < big.size // 10
        assert all(key == big.key for key, _, _ in store.ranges)


def test_pushed_offset_filters_read_only_the_spans_that_hold_them() -> None:
    with tempfile.TemporaryDirectory() as folder:
        inner = LocalStore(Path(folder))
        end = _lake(inner, count=600, cut=580)
        plan = plan_read(inner, {"subscribe": TP.topic, "maxBytesPerPartition": "4000"})
        low, high = end // 2, end // 2 + 30
        narrowing = Narrowing().with_filter(GreaterThanOrEqual(("offset",), low))
        narrowing = narrowing.with_filter(LessThan(("offset",), high))
        tasks = narrowing.narrow(plan.tasks, records_too=True)
        assert 1 <= len(tasks) <= 3
        store = RangeRecordingStore(inner)
        got = task_rows(store, tasks)
        want = [row for row in _unsplit(inner, {}) if low <= row["offset"] < high]  # type: ignore[operator]
        assert got == want
        assert store.log_bytes <= 3 * 4000


def test_a_stale_or_wrong_index_gives_the_same_rows() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        _lake(store)
        want = {name: _unsplit(store, options) for name, options in enumerate(OPTION_SETS)}
        state = resolve_manifest(store).partitions[0]
        segment = state.segments[0]
        index_key = index_keys(segment.key)[0]
        good = store.get(index_key)
        entries = list(ENTRY.iter_unpack(good))
        lies = {
            "shifted positions": [(o, p + 1) for o, p in entries],
            "offsets too small": [(i, p) for i, (_, p) in enumerate(entries)],
            "offsets too large": [(o + 50, p) for o, p in entries],
            "a stale prefix": entries[: len(entries) // 3],
        }
        for bad in lies.values():
            lie = b"".join(ENTRY.pack(o, p) for o, p in sorted(set(bad)))
            store.put(index_key, lie)
            # pinned as if checked (a real pin is only recorded for an index that holds): the spans' checks
            pinned = dataclasses.replace(segment, index_sha256=sha256_hex(lie))
            _recommit(store, dataclasses.replace(state, segments=(pinned, *state.segments[1:])))
            for name, options in enumerate(OPTION_SETS):
                assert _split(store, options, 3000) == want[name]
                window = {
                    "startingOffsets": json.dumps({TP.topic: {"0": 400}}),
                    "endingOffsets": json.dumps({TP.topic: {"0": 450}}),
                }
                if "view" not in options:
                    assert _split(store, {**options, **window}, 3000) == _unsplit(
                        store, {**options, **window}
                    )


def test_a_regrown_object_is_read_as_the_manifest_lists_it() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        _lake(store)
        want = _unsplit(store, {})
        segment = resolve_manifest(store).partitions[0].segments[-1]
        store.put(segment.key, store.get(segment.key) + b"\0" * 100)  # appended after the manifest's size
        assert _split(store, {}, 3000) == want


@pytest.mark.parametrize("backend", ["local", "s3"])
def test_a_replaced_object_is_one_named_error(backend: str, request: pytest.FixtureRequest) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = (
            LocalStore(Path(folder))
            if backend == "local"
            else new_s3_store(request.getfixturevalue("s3_server"))
        )
        _lake(store)
        segment = resolve_manifest(store).partitions[0].segments[0]
        other = LocalStore(Path(folder) / "other")
        _lake(other, seed=8)
        replacement = other.get(resolve_manifest(other).partitions[0].segments[0].key)
        store.put(segment.key, replacement[: segment.size].ljust(segment.size, b"\0"))
        with pytest.raises(SegmentObjectMismatchError, match="changed"):
            _split(store, {}, 3000)


def test_a_damaged_batch_inside_a_span_is_one_named_error() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        _lake(store)
        manifest = resolve_manifest(store)
        state = manifest.partitions[0]
        segment = state.segments[0]
        damaged = bytearray(store.get(segment.key))
        position = segment.size // 2
        damaged[position] ^= 0xFF
        etag = store.put(segment.key, bytes(damaged)).etag
        pinned = dataclasses.replace(segment, etag=etag, sha256=sha256_hex(bytes(damaged)))
        _recommit(store, dataclasses.replace(state, segments=(pinned, *state.segments[1:])))
        with pytest.raises(CorruptRecordError, match=segment.key.split("/")[-1]):
            _split(store, {}, 3000)


def test_a_transfer_gone_wrong_inside_a_span_is_one_named_error() -> None:
    with tempfile.TemporaryDirectory() as folder:
        inner = LocalStore(Path(folder))
        _lake(inner)
        segment = resolve_manifest(inner).partitions[0].segments[0]
        store = RangeRecordingStore(inner, flip_at=segment.size // 2)
        with pytest.raises(SegmentObjectMismatchError, match="changed"):
            _split(store, {}, 3000)


def test_max_bytes_per_partition_must_be_a_positive_number() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        _lake(store, count=20, cut=10)
        for bad in ("0", "-5", "1MB"):
            with pytest.raises(ReadOptionError, match="maxBytesPerPartition"):
                _split(store, {}, bad)  # type: ignore[arg-type]


def _recommit(store: ObjectStore, state: Any) -> None:
    clock = FakeClock()
    clock.advance(3_600_000)
    run, base = begin_run(store, now_ms=clock(), operation="test", clock=clock)
    stage_manifest(store, run, build_manifest(run, base=base, partitions=[state]))
    commit_run(store, run.run_id, clock=clock)


def test_an_s3_ranged_read_is_pinned_to_the_etag(s3_server: Any) -> None:
    store = new_s3_store(s3_server)
    first = store.put("t-0/a.log", b"0123456789").etag
    assert store.get_range("t-0/a.log", start=2, end=5, if_match=first) == b"234"
    store.put("t-0/a.log", b"abcdefghij")
    with pytest.raises(PreconditionFailedError, match=first):
        store.get_range("t-0/a.log", start=2, end=5, if_match=first)


def test_time_travel_reads_the_old_version_in_spans_too() -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        _lake(store)
        state = resolve_manifest(store).partitions[0]
        _recommit(
            store,
            dataclasses.replace(
                state, segments=state.segments[1:], log_start_offset=state.segments[1].base_offset
            ),
        )
        for options in (
            {"versionAsOf": "1"},
            {"versionAsOf": "1", "kafka.isolation.level": "read_committed"},
        ):
            old = _unsplit(store, options)
            assert old != _unsplit(store, {})
            assert _split(store, options, 3000) == old
