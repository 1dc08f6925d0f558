"""How a round writes its output, through the whole run path (``Cleaner.buildOffsetMap``,
``shouldRetainRecord``, ``MemoryRecords.filterTo``, ``Cleaner.groupSegmentsBySize``): every codec,
LogAppendTime, legacy v0/v1 input converted to v2, offset gaps, the delete horizon across runs, records past
the round's end, and the grouping of source segments at each of its limits.

Each scenario uploads Kafka-named segments into a lake, runs ``run_retention`` and reads the committed lake
back with our reader and kafka-python's (``read_lake`` asserts they agree batch by batch: offsets, producer
fields, flags, timestamps, delete horizon, records).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.lake.reader import read_segment
from kafka_segments.pipeline.compaction import sources as segment_sources
from kafka_segments.pipeline.compaction.stage import CompactionStatus
from kafka_segments.records import CompressionType, Record, TimestampType, build_batch
from kafka_segments.state import SegmentEntry, SegmentOrigin
from kafka_segments.storage import LocalStore, ObjectStore
from unit.compaction_helpers import DAY, NOW, legacy_message, legacy_wrapper

from lake.compaction_run_helpers import (
    LakeLog,
    cleaned,
    committed,
    compact_config,
    compaction_of,
    left_unread,
    object_keys,
    read_lake,
    run_at,
)

pytestmark = pytest.mark.lake

HOUR = 3_600_000
INT32_MAX = 2**31 - 1
VALUE = "compressible value " * 4


def live_bytes(store: ObjectStore) -> bytes:
    return b"".join(read_segment(store, segment) for segment in committed(store).segments)


# --- how batches are written --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "codec", list(CompressionType), ids=[codec.name.lower() for codec in CompressionType]
)
def test_rebuilt_batch_keeps_its_codec_and_an_untouched_batch_keeps_its_bytes(
    local_store: LocalStore, codec: CompressionType
) -> None:
    """``MemoryRecords.filterTo``: a batch that loses a record (or needs a horizon) is rebuilt with the codec
    of its source, its base offset and last offset delta; a batch with nothing to remove and no horizon to set
    is copied verbatim (its compressed bytes and CRC included)."""
    lake = LakeLog.of()
    log = lake.log
    log.records([(1, VALUE), (2, VALUE), (3, VALUE), (4, None), (5, VALUE)], codec=codec)
    log.records([(6, VALUE), (7, VALUE)], codec=codec)
    untouched = log.chunks[-1][1][-1]
    log.rec(2, "new")
    log.roll()
    lake.sync(local_store)
    now = NOW + 1_000

    run_at(local_store, compact_config(), now)

    view = read_lake(local_store)
    rebuilt, copied, _ = view.batches
    assert (rebuilt.codec, rebuilt.base_offset, rebuilt.last_offset) == (int(codec), 0, 4)
    assert [row[0] for row in rebuilt.records] == [0, 2, 3, 4]
    assert {row[1] for row in rebuilt.records} == {NOW}  # absolute timestamps survive the horizon base
    assert rebuilt.delete_horizon_ms == now + DAY
    assert copied.codec == int(codec)
    assert untouched in live_bytes(local_store)
    assert view.keys == [1, 3, 5, 6, 7, 2]


def test_log_append_time_batch_keeps_its_append_time_when_rebuilt(local_store: LocalStore) -> None:
    """``MemoryRecords.filterTo``: a LogAppendTime batch rebuilt keeps its timestamp type and its
    maxTimestamp (the broker's append time); every record reads as that time, also once the batch's base
    timestamp holds a delete horizon."""
    appended_at = NOW - 5_000
    lake = LakeLog.of()
    log = lake.log
    log.records([(1, 1), (2, 2), (3, None)], log_append_time=True, timestamp=appended_at)
    log.rec(2, "x")
    log.roll()
    lake.sync(local_store)
    now = NOW + 1_000

    run_at(local_store, compact_config(), now)

    rebuilt = read_lake(local_store).batches[0]
    assert rebuilt.timestamp_type == int(TimestampType.LOG_APPEND_TIME)
    assert rebuilt.max_timestamp == appended_at
    assert rebuilt.delete_horizon_ms == now + DAY
    assert [(row[0], row[1]) for row in rebuilt.records] == [(0, appended_at), (2, appended_at)]


def test_legacy_v0_v1_input_is_rewritten_as_v2(local_store: LocalStore) -> None:
    """Kafka 4.x (KIP-724, ``MemoryRecords.filterTo``): every legacy entry with a retained record is rebuilt
    as v2 — uncompressed messages as single-record batches, a compressed wrapper as one batch with its codec
    whose base offset is its first *retained* record; v0 messages become CreateTime with timestamp -1; a
    legacy tombstone is kept (its segment is newer than the legacy horizon) and stamped like a v2 one."""
    inner = b"".join(
        legacy_message(1, relative, key, b"w", timestamp=NOW)
        for relative, key in enumerate((b"2", b"4", b"5"))
    )
    lake = LakeLog.of()
    log = lake.log
    for entry in (
        legacy_message(0, 0, b"9", b"a"),
        legacy_message(0, 1, b"2", b"b"),
        legacy_message(1, 2, b"1", b"c", timestamp=NOW),
        legacy_message(1, 3, b"3", None, timestamp=NOW),
        legacy_wrapper(6, CompressionType.GZIP, inner, timestamp=NOW),
        legacy_message(1, 7, b"2", b"d", timestamp=NOW),
    ):
        log.append(entry)
    log.roll()
    lake.sync(local_store)
    now = NOW + 1_000

    run_at(local_store, compact_config(), now)

    view = read_lake(local_store)  # kafka-python is told every batch must be magic 2
    assert {b.magic for b in view.batches} == {2}
    assert view.batch_bases == [0, 2, 3, 5, 7]
    assert view.batch_lasts == [0, 2, 3, 6, 7]
    assert view.keys == [9, 1, 4, 5, 2]
    assert view.tombstone_keys == [3]
    v0 = view.batches[0]
    assert (v0.timestamp_type, v0.records[0][1]) == (int(TimestampType.CREATE_TIME), -1)
    assert view.batch_at(3).delete_horizon_ms == now + DAY
    wrapper = view.batch_at(5)
    assert (wrapper.codec, wrapper.records_count) == (int(CompressionType.GZIP), 2)


def test_legacy_entry_that_would_end_the_round_empty_makes_the_partition_uncleanable(
    local_store: LocalStore,
) -> None:
    """The batch ending the round is RETAIN_EMPTY, but only v2 has empty batches: ``MemoryRecords.filterTo``
    throws ("Empty batches are only supported for magic v2 and above") and the cleaner marks the partition
    uncleanable. On a lake: quarantined for the run, reported, nothing of it changed."""
    lake = LakeLog.of()
    lake.log.append(legacy_message(1, 0, b"1", b"a", timestamp=NOW))
    lake.log.append(legacy_message(1, 1, None, b"unkeyed", timestamp=NOW))
    lake.log.roll()
    lake.sync(local_store)

    result = run_at(local_store, compact_config(), NOW)

    outcome = compaction_of(result)
    assert outcome.status is CompactionStatus.QUARANTINED
    assert outcome.error is not None
    state = committed(local_store)
    assert [s.origin for s in state.segments] == [SegmentOrigin.ADOPTED] * 2
    assert state.cleaner_checkpoint is None


def test_offset_gaps_are_skipped_and_the_round_ends_at_its_upper_bound(local_store: LocalStore) -> None:
    """``Cleaner.buildOffsetMap``: gaps between and inside segments are normal (compaction leaves them); the
    map's latest offset jumps to the next segment's base - 1 and, for the last dirty segment, to the upper
    bound - 1, so the round (and the checkpoint) ends at the first uncleanable offset, not after the last
    record."""
    lake = LakeLog.of()
    log = lake.log
    for offset in range(5):
        log.rec(offset, offset)
    log.roll()
    for offset, key in ((100, 0), (102, 1), (104, 7)):
        log.append(build_batch([Record(offset, NOW, str(key).encode(), b"later")]))
    log.next_offset = 200
    log.roll()
    lake.sync(local_store)
    assert lake.bases == [0, 100, 200]

    result = run_at(local_store, compact_config(), NOW)

    assert cleaned(result).end_offset == 200
    view = read_lake(local_store)
    assert view.state.cleaner_checkpoint == 200
    assert view.offsets == [2, 3, 4, 100, 102, 104]
    assert view.state.log_end_offset == 200


def test_records_past_the_round_end_are_untouched(local_store: LocalStore) -> None:
    """``LogCleanerManager.cleanableOffsets``: the active segment is never cleaned — its superseded value,
    unkeyed record and tombstone stay, and its object is the same one; the segment before it, with nothing to
    remove, stays the same object too (byte-identical output), and only the checkpoint moves."""
    lake = LakeLog.of()
    log = lake.log
    log.rec(1, "a")
    log.rec(2, "b")
    log.roll()
    log.rec(1, "c")
    log.rec(None, "unkeyed")
    log.tomb(2)
    lake.sync(local_store)

    result = run_at(local_store, compact_config(), NOW)

    state = committed(local_store)
    assert [s.key for s in state.segments] == ["t-0/00000000000000000000.log", "t-0/00000000000000000002.log"]
    assert all(s.origin is SegmentOrigin.ADOPTED for s in state.segments)
    assert state.cleaner_checkpoint == 2
    outcome = cleaned(result)
    assert outcome.stats is not None
    assert outcome.stats.segments_kept == 1
    assert outcome.replaced == ()
    view = read_lake(local_store)
    assert view.record_offsets == [0, 1, 2, 3, 4]
    assert view.tombstone_keys == [2]


# --- the delete horizon across runs -------------------------------------------------------------------------


def test_delete_horizon_is_stamped_on_first_write_and_honoured_by_a_later_run(
    local_store: LocalStore,
) -> None:
    """KIP-534: the first round that writes a tombstone stamps deleteHorizon = now + delete.retention.ms;
    later rounds keep it while now < horizon and drop it from now >= horizon (``retainDeletes``: currentTime <
    horizon). An expired horizon alone triggers no round: only a round with new dirty data removes the
    tombstone."""
    lake = LakeLog.of()
    log = lake.log
    log.rec(1, 1)
    log.tomb(1)
    log.rec(2, 2)
    log.roll()
    lake.sync(local_store)
    cfg = compact_config(delete_retention_ms=HOUR)
    t1 = NOW + 1_000

    first = run_at(local_store, cfg, t1)
    assert read_lake(local_store).batch_at(1).delete_horizon_ms == t1 + HOUR
    assert cleaned(first).stats.horizons_stamped == 1  # type: ignore[union-attr]

    def append_and_run(now: int, key: int) -> None:
        log.rec(key, key)
        log.roll()
        lake.sync(local_store)
        assert compaction_of(run_at(local_store, cfg, now)).status is CompactionStatus.CLEANED

    append_and_run(t1 + HOUR - 1, 3)
    view = read_lake(local_store)
    assert view.tombstone_keys == [1]
    assert view.batch_at(1).delete_horizon_ms == t1 + HOUR  # preserved, not re-stamped

    idle = run_at(local_store, cfg, t1 + HOUR)
    left_unread(idle)  # nothing dirty by its summary: no round (a run over every partition: skipped)
    assert idle.committed_version is None
    assert read_lake(local_store).tombstone_keys == [1]

    log.rec(4, 4)
    log.roll()
    lake.sync(local_store)
    last = run_at(local_store, cfg, t1 + HOUR)
    assert read_lake(local_store).tombstone_keys == []
    stats = cleaned(last).stats
    assert stats is not None
    assert (stats.tombstones_read, stats.tombstones_kept, stats.tombstones_removed) == (1, 0, 1)


def test_batch_rebuilt_for_another_reason_keeps_its_horizon(local_store: LocalStore) -> None:
    """KIP-534: a stamped batch that a later round rebuilds because one of its other records was superseded
    keeps the horizon it has; it is never reset to the later round's now + delete.retention.ms."""
    lake = LakeLog.of()
    log = lake.log
    log.records([(1, None), (2, "a")])
    log.rec(9, 9)
    log.roll()
    lake.sync(local_store)
    cfg = compact_config()
    t1 = NOW + 1_000
    run_at(local_store, cfg, t1)
    assert read_lake(local_store).batches[0].delete_horizon_ms == t1 + DAY

    log.rec(2, "b")
    log.roll()
    lake.sync(local_store)
    run_at(local_store, cfg, t1 + 5_000)

    batch = read_lake(local_store).batches[0]
    assert (batch.base_offset, batch.last_offset, batch.records_count) == (0, 1, 1)
    assert batch.delete_horizon_ms == t1 + DAY
    assert batch.records[0][2:4] == (b"1", None)


# --- grouping source segments into output segments ----------------------------------------------------------


def _four_segments(store: ObjectStore, *, batches: int = 1, rising: bool = False) -> tuple[LakeLog, int]:
    """Four segments of ``batches`` single-record batches with unique keys (+ an empty active segment);
    ``rising``: every batch one millisecond after the previous one. Returns the log and one segment's size."""
    lake = LakeLog.of()
    log = lake.log
    stamp = NOW
    for _ in range(4):
        for _ in range(batches):
            log.rec(log.next_offset, "v", timestamp=stamp)
            stamp += 1 if rising else 0
        log.roll()
    lake.sync(store)
    return lake, len(b"".join(log.chunks[0][1]))


def _bases_after(store: ObjectStore) -> list[int]:
    return [segment.base_offset for segment in committed(store).segments]


@pytest.mark.parametrize(("slack", "groups"), [(0, [0, 2, 4]), (-1, [0, 1, 2, 3, 4])], ids=["fits", "over"])
def test_grouping_stops_at_segment_bytes(local_store: LocalStore, slack: int, groups: list[int]) -> None:
    """``Cleaner.groupSegmentsBySize``: consecutive segments share an output segment while their summed .log
    sizes are <= segment.bytes; the output takes the first segment's base offset and the last segment's mtime.
    A group of one whose output equals its source keeps the source object."""
    _, size = _four_segments(local_store)
    adopted = {s.base_offset: s for s in committed_after_adoption(local_store)}

    result = run_at(local_store, compact_config(internal_segment_bytes=2 * size + slack), NOW)

    assert _bases_after(local_store) == groups
    state = committed(local_store)
    stats = cleaned(result).stats
    assert stats is not None
    if groups == [0, 2, 4]:
        assert stats.segments_written == 2
        assert [s.last_modified_ms for s in state.segments[:2]] == [
            adopted[1].last_modified_ms,
            adopted[3].last_modified_ms,
        ]
    else:
        assert (stats.segments_written, stats.segments_kept) == (0, 4)
    assert read_lake(local_store).offsets == [0, 1, 2, 3]


def committed_after_adoption(store: ObjectStore) -> list[SegmentEntry]:
    """The segments as the lake adopts them (an adopt-only run: nothing is eligible at ratio 1)."""
    run_at(store, compact_config(min_cleanable_dirty_ratio=1.0), NOW)
    return list(committed(store).segments)


@pytest.mark.parametrize(
    ("rising", "segment_index_bytes", "groups"),
    [
        pytest.param(False, 32, [0, 6, 12], id="offset_index_fits"),
        pytest.param(False, 31, [0, 3, 6, 9, 12], id="offset_index_over"),
        pytest.param(True, 48, [0, 6, 12], id="time_index_fits"),
        pytest.param(True, 47, [0, 3, 6, 9, 12], id="time_index_over"),
    ],
)
def test_grouping_stops_at_segment_index_bytes_counted_from_the_log(
    local_store: LocalStore, rising: bool, segment_index_bytes: int, groups: list[int]
) -> None:
    """``groupSegmentsBySize``: each index type's summed size must stay <= segment.index.bytes. The sizes are
    those of the indexes the .log gets with the topic's index.interval.bytes (0 here: an entry before every
    batch but the first), not the sizes of the uploaded index objects (built at 4096: empty). Three batches
    per segment: offset index 16 bytes; time index 12 bytes at one timestamp, 24 bytes with rising
    timestamps."""
    _four_segments(local_store, batches=3, rising=rising)
    cfg = compact_config(index_interval_bytes=0, segment_index_bytes=segment_index_bytes)

    run_at(local_store, cfg, NOW)

    assert _bases_after(local_store) == groups
    assert read_lake(local_store).offsets == list(range(12))


@pytest.mark.parametrize(
    ("third_base", "groups"),
    [
        pytest.param(2**31, [0, 2**31], id="span_of_int32_max_fits"),
        pytest.param(2**31 + 1, [0, 1_000], id="span_over_int32_max"),
    ],
)
def test_grouping_keeps_each_output_segment_within_an_int32_offset_span(
    local_store: LocalStore, third_base: int, groups: list[int]
) -> None:
    """``groupSegmentsBySize``: a segment joins a group only when its estimated last offset (the next
    segment's base - 1, or the first uncleanable offset - 1 for the last one) minus the group's base offset is
    <= Integer.MAX_VALUE, so relative index offsets cannot overflow."""
    lake = LakeLog.of()
    log = lake.log
    for offset in (0, 1_000, third_base):
        log.append(build_batch([Record(offset, NOW, str(offset).encode(), b"v")]))  # rebases the empty chunk
        log.roll()
    log.chunks[-1] = (third_base + 10, [])
    lake.sync(local_store)
    assert lake.bases == [0, 1_000, third_base, third_base + 10]

    run_at(local_store, compact_config(), NOW)

    assert _bases_after(local_store) == [*groups, third_base + 10]
    assert read_lake(local_store).offsets == [0, 1_000, third_base]


def test_an_empty_segment_joins_a_group_whatever_its_offset_span(local_store: LocalStore) -> None:
    """``groupSegmentsBySize``: the offset-span guard applies to non-empty candidates only; an empty segment
    far past Integer.MAX_VALUE offsets from the group's base still joins it (and disappears into its
    output)."""
    lake = LakeLog.of()
    lake.log.rec(0, "v")
    lake.log.roll()
    lake.log.chunks[-1] = (2**31 + 5, [])
    lake.log.chunks.append((2**31 + 10, []))
    lake.sync(local_store)

    run_at(local_store, compact_config(), NOW)

    state = committed(local_store)
    assert [(s.base_offset, s.origin) for s in state.segments] == [
        (0, SegmentOrigin.WRITTEN),
        (2**31 + 10, SegmentOrigin.ADOPTED),
    ]
    assert state.cleaner_checkpoint == 2**31 + 10
    assert read_lake(local_store).offsets == [0]


# --- a property: one round over random keyed logs -----------------------------------------------------------

ops = st.lists(
    st.tuples(st.integers(0, 5), st.booleans(), st.booleans()),  # key, tombstone, roll after
    min_size=1,
    max_size=25,
)


@settings(max_examples=20, deadline=None)
@given(ops=ops, active=st.lists(st.integers(0, 5), max_size=4))
def test_one_round_keeps_the_last_record_of_each_key_and_a_rerun_changes_nothing(
    ops: list[tuple[int, bool, bool]], active: list[int]
) -> None:
    """Any log of single-record batches without producers, cleaned once (tombstones are still within their
    horizon): below the active segment exactly the last record of each key survives, plus the batch ending
    the round (kept as an empty header when its record is superseded); the active segment is untouched; the
    checkpoint is its base offset; a second run at the same now commits nothing."""
    with tempfile.TemporaryDirectory() as directory:
        store = LocalStore(Path(directory) / "lake")
        lake = LakeLog.of()
        log = lake.log
        for key, tombstone, roll in ops:
            log.rec(key, None if tombstone else log.next_offset)
            if roll:
                log.roll()
        log.roll()
        upper = log.next_offset
        for key in active:
            log.rec(key, log.next_offset)
        lake.sync(store)
        last_of_key = {key: offset for offset, (key, _, _) in enumerate(ops)}

        first = run_at(store, compact_config(), NOW)

        view = read_lake(store)
        survivors = sorted(last_of_key.values())
        below = [b for b in view.batches if b.base_offset < upper]
        assert [row[0] for b in below for row in b.records] == survivors
        assert [b.base_offset for b in below] == sorted({*survivors, upper - 1})
        assert [row[0] for b in view.batches if b.base_offset >= upper for row in b.records] == list(
            range(upper, upper + len(active))
        )
        assert view.state.cleaner_checkpoint == upper
        assert compaction_of(first).status is CompactionStatus.CLEANED
        keys = object_keys(store)
        again = run_at(store, compact_config(), NOW)
        assert again.committed_version is None
        assert all(key.startswith("_kafka_segments/runs/") for key in object_keys(store) - keys)


# --- reading while decoding ---------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", [CompressionType.NONE, CompressionType.ZSTD], ids=["none", "zstd"])
def test_a_round_without_room_for_a_decoding_arena_writes_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codec: CompressionType
) -> None:
    """The dirty segments are decoded while read into an arena reserved per segment; where the address space
    refuses it (``spark.executor.pyspark.memory`` sets RLIMIT_AS), the round decodes them itself: same
    output."""
    outputs = []
    for arena_factor in (segment_sources.ARENA_PER_STORED_BYTE, 1 << 50):
        monkeypatch.setattr(segment_sources, "ARENA_PER_STORED_BYTE", arena_factor)
        lake = LakeLog.of()
        for key in range(40):
            lake.log.records([(key % 7, VALUE), (key % 5, None if key % 3 == 0 else VALUE)], codec=codec)
            if key % 10 == 9:
                lake.log.roll()
        lake.log.roll()
        store = LocalStore(tmp_path / f"lake-{arena_factor}")
        lake.sync(store)
        result = run_at(store, compact_config(), NOW + 1_000)
        assert compaction_of(result).status == CompactionStatus.CLEANED
        outputs.append(live_bytes(store))
    assert outputs[0] == outputs[1]
