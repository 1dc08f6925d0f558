"""Writing v2 batches: ``build_batch``, compaction rebuilds (``rebuild_batch``) and empty batch headers.

The rules are Kafka's (``DefaultRecordBatch``, ``MemoryRecords.filterTo`` / ``buildRetainedRecordsInto``,
``DefaultRecordBatch.writeEmptyHeader``); each table is named after the rule it checks.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import SegmentWriteError
from kafka_segments.records import (
    CompressionType,
    Header,
    Record,
    RecordBatch,
    TimestampType,
    build_batch,
    empty_batch_header,
    rebuild_batch,
)
from kafka_segments.records.batch import INT32_MAX, RECORD_BATCH_OVERHEAD
from kafka_segments.records.control import ControlKey, ControlRecordType, EndTransactionMarker
from kafka_segments.records.varint import VarintError, decode_varint
from unit.strategies import BatchSpec, batch_specs

pytestmark = pytest.mark.unit

TS = 1_700_000_000_000
DAY = 86_400_000
BASE = 1000


@dataclass(frozen=True)
class Source:
    """A source batch for the rebuild tables: offsets 1000, 1001, 1003, 1006 in a batch ending at 1008."""

    compression: CompressionType = CompressionType.NONE
    timestamp_type: TimestampType = TimestampType.CREATE_TIME
    log_append_time: int | None = None
    producer: tuple[int, int, int] = (-1, -1, -1)
    is_transactional: bool = False
    is_control: bool = False
    partition_leader_epoch: int = -1
    delete_horizon_ms: int | None = None
    timestamps: tuple[int, ...] = (TS + 10, TS, TS + 30, TS + 20)
    values: tuple[bytes | None, ...] = field(default=(b"v0", None, b"", b"v3" * 40))

    def records(self) -> list[Record]:
        offsets = (BASE, BASE + 1, BASE + 3, BASE + 6)
        if self.is_control:
            commit = EndTransactionMarker(ControlRecordType.COMMIT, 5)
            return [
                Record(o, t, commit.key_bytes(), commit.value_bytes())
                for o, t in zip(offsets, self.timestamps, strict=True)
            ]
        return [
            Record(o, t, f"key-{i}".encode(), v, (Header("h", str(i).encode()), Header("n", None)))
            for i, (o, t, v) in enumerate(zip(offsets, self.timestamps, self.values, strict=True))
        ]

    def batch(self) -> RecordBatch:
        producer_id, producer_epoch, base_sequence = self.producer
        data = build_batch(
            self.records(),
            base_offset=BASE,
            last_offset=BASE + 8,
            compression=self.compression,
            timestamp_type=self.timestamp_type,
            log_append_time=self.log_append_time,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            is_transactional=self.is_transactional,
            is_control=self.is_control,
            partition_leader_epoch=self.partition_leader_epoch,
            delete_horizon_ms=self.delete_horizon_ms,
        )
        return RecordBatch.from_bytes(data)


SOURCES = {
    "plain-create-time": Source(),
    "gzip-idempotent": Source(CompressionType.GZIP, producer=(42, 3, 1000), partition_leader_epoch=5),
    "snappy-log-append-time": Source(
        CompressionType.SNAPPY,
        TimestampType.LOG_APPEND_TIME,
        log_append_time=TS + 99,
        partition_leader_epoch=0,
    ),
    "lz4-transactional": Source(
        CompressionType.LZ4, producer=(7, 1, INT32_MAX - 2), is_transactional=True, partition_leader_epoch=12
    ),
    "zstd-with-horizon": Source(CompressionType.ZSTD, delete_horizon_ms=TS + DAY),
    "control-markers": Source(producer=(7, 1, -1), is_transactional=True, is_control=True),
    "log-append-time-with-horizon": Source(
        timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=TS + 99, delete_horizon_ms=TS + DAY
    ),
}
RETAINED = {"drop-first": (1, 2, 3), "drop-last": (0, 1, 2), "middle-only": (1, 2), "keep-one": (2,)}
CASES = [
    pytest.param(source, kept, id=f"{source_id}/{kept_id}")
    for source_id, source in SOURCES.items()
    for kept_id, kept in RETAINED.items()
]


def rebuilt(
    source: Source, kept: tuple[int, ...], horizon: int | None = None
) -> tuple[RecordBatch, RecordBatch]:
    original = source.batch()
    retained = [original.records[i] for i in kept]
    return original, RecordBatch.from_bytes(rebuild_batch(original, retained, delete_horizon_ms=horizon))


# --- rebuild: what is preserved ---


@pytest.mark.parametrize(("source", "kept"), CASES)
def test_rebuild_preserves_base_offset(source: Source, kept: tuple[int, ...]) -> None:
    original, out = rebuilt(source, kept)
    assert out.header.base_offset == original.header.base_offset == BASE


@pytest.mark.parametrize(("source", "kept"), CASES)
def test_rebuild_preserves_last_offset_delta(source: Source, kept: tuple[int, ...]) -> None:
    original, out = rebuilt(source, kept)
    assert out.header.last_offset_delta == original.header.last_offset_delta == 8


@pytest.mark.parametrize(("source", "kept"), CASES)
def test_rebuild_preserves_producer_id_epoch_and_base_sequence(source: Source, kept: tuple[int, ...]) -> None:
    original, out = rebuilt(source, kept)
    assert (out.header.producer_id, out.header.producer_epoch, out.header.base_sequence) == source.producer
    assert out.header.last_sequence == original.header.last_sequence


@pytest.mark.parametrize(("source", "kept"), CASES)
def test_rebuild_preserves_transactional_control_and_timestamp_type(
    source: Source, kept: tuple[int, ...]
) -> None:
    _, out = rebuilt(source, kept)
    assert out.header.is_transactional is source.is_transactional
    assert out.header.is_control is source.is_control
    assert out.header.timestamp_type is source.timestamp_type


@pytest.mark.parametrize(("source", "kept"), CASES)
def test_rebuild_preserves_partition_leader_epoch(source: Source, kept: tuple[int, ...]) -> None:
    _, out = rebuilt(source, kept)
    assert out.header.partition_leader_epoch == source.partition_leader_epoch


@pytest.mark.parametrize(("source", "kept"), CASES)
def test_rebuild_preserves_codec(source: Source, kept: tuple[int, ...]) -> None:
    _, out = rebuilt(source, kept)
    assert out.header.compression is source.compression
    assert out.is_valid()


@pytest.mark.parametrize(("source", "kept"), CASES)
def test_rebuild_keeps_retained_records_with_their_offsets(source: Source, kept: tuple[int, ...]) -> None:
    original, out = rebuilt(source, kept)
    assert out.records == [original.records[i] for i in kept]
    assert out.header.records_count == len(kept)


@pytest.mark.parametrize(("source", "kept"), CASES)
def test_rebuild_base_timestamp_is_first_retained_or_horizon(source: Source, kept: tuple[int, ...]) -> None:
    original, out = rebuilt(source, kept)
    if source.delete_horizon_ms is not None:
        assert out.header.base_timestamp == source.delete_horizon_ms
    else:
        assert out.header.base_timestamp == original.records[kept[0]].timestamp


@pytest.mark.parametrize(("source", "kept"), CASES)
def test_rebuild_max_timestamp_is_max_retained_or_log_append_time(
    source: Source, kept: tuple[int, ...]
) -> None:
    original, out = rebuilt(source, kept)
    if source.timestamp_type is TimestampType.LOG_APPEND_TIME:
        assert out.header.max_timestamp == original.header.max_timestamp == source.log_append_time
        assert {r.timestamp for r in out.records} == {source.log_append_time}
    else:
        assert out.header.max_timestamp == max(source.timestamps[i] for i in kept)


def test_rebuild_drops_the_max_of_a_removed_record() -> None:
    # the source's max (TS + 30, index 2) is gone: maxTimestamp reflects the retained records only
    original, out = rebuilt(Source(), (0, 1, 3))
    assert original.header.max_timestamp == TS + 30
    assert out.header.max_timestamp == TS + 20


def test_rebuild_base_timestamp_is_not_the_source_base_timestamp() -> None:
    original, out = rebuilt(Source(), (1, 2))
    assert original.header.base_timestamp == TS + 10
    assert out.header.base_timestamp == TS


def test_rebuild_of_a_compressed_source_stays_compressed() -> None:
    original, out = rebuilt(Source(CompressionType.GZIP, values=(b"x" * 500,) * 4), (0, 1))
    assert bytes(out.raw[RECORD_BATCH_OVERHEAD : RECORD_BATCH_OVERHEAD + 2]) == b"\x1f\x8b"  # a gzip member
    assert out.header.size_in_bytes < original.header.size_in_bytes


def test_rebuild_refuses_a_record_outside_the_source_batch() -> None:
    original = Source().batch()
    with pytest.raises(
        SegmentWriteError, match=r"record offset 1009 is not increasing within batch 1000\.\.1008"
    ):
        rebuild_batch(original, [Record(1009, TS, b"k", b"v")])


# --- rebuild: delete horizon (KIP-534) ---

HORIZON_RULES = [
    pytest.param(Source(), TS + DAY, TS + DAY, id="stamping-sets-bit-6-and-base-timestamp"),
    pytest.param(
        Source(delete_horizon_ms=TS + DAY), TS + 2 * DAY, TS + DAY, id="existing-horizon-beats-a-new-one"
    ),
    pytest.param(
        Source(delete_horizon_ms=TS + DAY), None, TS + DAY, id="existing-horizon-kept-without-a-new-one"
    ),
    pytest.param(Source(), None, None, id="no-horizon-unless-asked"),
    pytest.param(
        Source(CompressionType.ZSTD, TimestampType.LOG_APPEND_TIME, log_append_time=TS + 99),
        TS + DAY,
        TS + DAY,
        id="stamping-a-log-append-time-batch",
    ),
]


@pytest.mark.parametrize(("source", "new_horizon", "expected"), HORIZON_RULES)
def test_rebuild_delete_horizon_rule(source: Source, new_horizon: int | None, expected: int | None) -> None:
    original, out = rebuilt(source, (1, 3), new_horizon)
    assert out.header.delete_horizon_ms == expected
    assert out.header.has_delete_horizon is (expected is not None)
    assert bool(struct.unpack_from(">h", out.raw, 21)[0] & 0x40) is (expected is not None)
    assert out.header.base_timestamp == (expected if expected is not None else original.records[1].timestamp)
    assert out.records == [original.records[1], original.records[3]]


def test_stamped_horizon_keeps_absolute_timestamps_with_negative_deltas() -> None:
    original, out = rebuilt(Source(), (0, 1, 3), TS + DAY)
    assert [r.timestamp for r in out.records] == [TS + 10, TS, TS + 20]
    deltas = []
    pos = RECORD_BATCH_OVERHEAD
    for _ in range(3):
        length, body = decode_varint(out.raw, pos)
        delta, _ = decode_varint(out.raw, body + 1)
        deltas.append(delta)
        pos = body + length
    assert deltas == [10 - DAY, -DAY, 20 - DAY]
    assert out.header.max_timestamp == TS + 20  # maxTimestamp is still the records' max, not the horizon
    assert original.header.max_timestamp == TS + 30


def test_build_batch_with_horizon_and_no_records_keeps_bit_6() -> None:
    # build_batch itself (unlike the empty header) honours an explicit horizon for an empty batch
    header = RecordBatch.from_bytes(
        build_batch([], base_offset=5, last_offset=9, delete_horizon_ms=TS)
    ).header
    assert header.has_delete_horizon
    assert header.base_timestamp == TS
    assert header.records_count == 0


# --- empty batch header (writeEmptyHeader) ---

EMPTY_HEADER_SOURCES = [pytest.param(source, id=source_id) for source_id, source in SOURCES.items()]


@pytest.mark.parametrize("source", EMPTY_HEADER_SOURCES)
@pytest.mark.parametrize("how", ["empty_batch_header", "rebuild_with_no_records"])
def test_empty_header_keeps_producer_state_and_drops_everything_else(source: Source, how: str) -> None:
    original = source.batch()
    data = empty_batch_header(original.header) if how == "empty_batch_header" else rebuild_batch(original, [])
    assert len(data) == 61
    out = RecordBatch.from_bytes(data)
    header = out.header
    assert out.is_valid()
    assert header.batch_length == 49
    assert header.magic == 2
    assert header.records_count == 0
    assert out.records == []
    assert header.compression is CompressionType.NONE
    assert header.base_timestamp == -1
    assert header.max_timestamp == original.header.max_timestamp
    assert not header.has_delete_horizon  # a source horizon is lost, as in Kafka
    assert header.base_offset == BASE
    assert header.last_offset_delta == 8
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == source.producer
    assert header.is_transactional is source.is_transactional
    assert header.is_control is source.is_control
    assert header.timestamp_type is source.timestamp_type
    assert header.partition_leader_epoch == source.partition_leader_epoch
    assert (
        struct.unpack_from(">h", data, 21)[0] & ~0x38 == 0
    )  # only timestamp-type/transactional/control bits


def test_empty_header_golden_bytes() -> None:
    source = Source(producer=(7, 1, 3), is_transactional=True, partition_leader_epoch=2).batch()
    data = empty_batch_header(source.header)
    assert (
        data.hex()
        == (
            "00000000000003e8"  # baseOffset 1000
            "00000031"  # batchLength 49
            "00000002"  # partitionLeaderEpoch 2
            "02"  # magic
            + data[17:21].hex()  # crc (checked below)
            + "0010"  # attributes: transactional
            "00000008"  # lastOffsetDelta
            "ffffffffffffffff"  # baseTimestamp -1
            + (TS + 30).to_bytes(8, "big").hex()  # maxTimestamp of the source
            + "0000000000000007"  # producerId
            "0001"  # producerEpoch
            "00000003"  # baseSequence
            "00000000"  # recordsCount
        )
    )
    assert RecordBatch.from_bytes(data).is_valid()


# --- build_batch ---


def test_build_defaults_offsets_and_timestamps_from_the_records() -> None:
    records = [Record(10, TS + 5, b"a", b"1"), Record(12, TS, b"b", b"2")]
    header = RecordBatch.from_bytes(build_batch(records)).header
    assert (header.base_offset, header.last_offset_delta) == (10, 2)
    assert (header.base_timestamp, header.max_timestamp) == (TS + 5, TS + 5)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (-1, -1, -1)
    assert header.partition_leader_epoch == -1
    assert header.attributes == 0


def test_build_max_timestamp_override_for_create_time() -> None:
    data = build_batch([], base_offset=0, last_offset=3, max_timestamp=TS)
    assert RecordBatch.from_bytes(data).header.max_timestamp == TS


def test_build_empty_batch_is_never_compressed() -> None:
    data = build_batch([], base_offset=0, last_offset=3, compression=CompressionType.GZIP)
    assert len(data) == 61
    assert RecordBatch.from_bytes(data).header.compression is CompressionType.NONE


BUILD_REFUSALS = [
    pytest.param(
        [], {}, "an empty batch needs explicit base_offset and last_offset", id="empty-without-offsets"
    ),
    pytest.param([], {"base_offset": 3}, "an empty batch needs explicit", id="empty-without-last-offset"),
    pytest.param(
        [Record(5, TS, None, b""), Record(5, TS, None, b"")],
        {},
        "record offset 5 is not increasing",
        id="duplicate",
    ),
    pytest.param(
        [Record(6, TS, None, b""), Record(5, TS, None, b"")],
        {},
        "last offset 5 is below base offset 6",
        id="decreasing",
    ),
    pytest.param(
        [Record(5, TS, None, b""), Record(4, TS, None, b""), Record(9, TS, None, b"")],
        {},
        "record offset 4 is not increasing",
        id="out-of-order",
    ),
    pytest.param(
        [Record(5, TS, None, b"")],
        {"base_offset": 6, "last_offset": 10},
        "record offset 5 is not increasing",
        id="below-base",
    ),
    pytest.param(
        [Record(5, TS, None, b"")],
        {"last_offset": 4},
        "last offset 4 is below base offset 5",
        id="above-last",
    ),
    pytest.param(
        [Record(0, TS, None, b"")],
        {"last_offset": INT32_MAX + 1},
        "does not fit a batch's int32 lastOffsetDelta",
        id="span-over-int32",
    ),
    pytest.param(
        [Record(0, TS, None, b"")],
        {"timestamp_type": TimestampType.LOG_APPEND_TIME},
        "a LogAppendTime batch needs log_append_time",
        id="log-append-time-without-time",
    ),
]


@pytest.mark.parametrize(("records", "kwargs", "message"), BUILD_REFUSALS)
def test_build_refuses(records: list[Record], kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SegmentWriteError, match=message):
        build_batch(records, **kwargs)  # type: ignore[arg-type]


def test_build_accepts_the_largest_offset_span() -> None:
    data = build_batch([Record(0, TS, None, b""), Record(INT32_MAX, TS, None, b"")])
    out = RecordBatch.from_bytes(data)
    assert out.header.last_offset_delta == INT32_MAX
    assert [r.offset for r in out.records] == [0, INT32_MAX]


def test_build_is_deterministic_for_every_codec() -> None:
    records = Source().records()
    for codec in CompressionType:
        assert build_batch(records, compression=codec) == build_batch(records, compression=codec), codec.name


def test_control_key_round_trips_through_a_control_batch() -> None:
    key = ControlKey(0, int(ControlRecordType.ABORT)).build()
    out = RecordBatch.from_bytes(
        build_batch([Record(0, TS, key, b"\x00\x00\x00\x00\x00\x01")], is_control=True)
    )
    assert ControlKey.parse(out.records[0].key).type is ControlRecordType.ABORT


# --- properties ---


@given(batch_specs(log_append_time=False), st.data())
def test_rebuild_with_every_record_reproduces_a_create_time_batch(
    spec: BatchSpec, data: st.DataObject
) -> None:
    original = RecordBatch.from_bytes(spec.build())
    assert rebuild_batch(original, original.records) == bytes(original.raw)


@given(batch_specs(), st.data())
def test_rebuild_of_any_subset_follows_the_rules(spec: BatchSpec, data: st.DataObject) -> None:
    original = RecordBatch.from_bytes(spec.build())
    records = original.records
    kept = data.draw(st.lists(st.sampled_from(range(len(records))), unique=True).map(sorted))
    horizon = data.draw(st.none() | st.integers(0, 2**45))
    out = RecordBatch.from_bytes(
        rebuild_batch(original, [records[i] for i in kept], delete_horizon_ms=horizon)
    )
    header, source = out.header, original.header
    assert out.is_valid()
    assert (header.base_offset, header.last_offset_delta, header.partition_leader_epoch) == (
        source.base_offset,
        source.last_offset_delta,
        source.partition_leader_epoch,
    )
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (
        source.producer_id,
        source.producer_epoch,
        source.base_sequence,
    )
    assert (header.is_transactional, header.is_control, header.timestamp_type) == (
        source.is_transactional,
        source.is_control,
        source.timestamp_type,
    )
    assert out.records == [records[i] for i in kept]
    if not kept:
        assert len(out.raw) == 61
        assert (header.base_timestamp, header.max_timestamp) == (-1, source.max_timestamp)
        assert not header.has_delete_horizon
        return
    assert header.compression is source.compression
    expected_horizon = source.delete_horizon_ms if source.has_delete_horizon else horizon
    assert header.delete_horizon_ms == expected_horizon
    first_ts = records[kept[0]].timestamp
    assert header.base_timestamp == (expected_horizon if expected_horizon is not None else first_ts)
    if source.timestamp_type is TimestampType.LOG_APPEND_TIME:
        assert header.max_timestamp == source.max_timestamp
    else:
        assert header.max_timestamp == max(records[i].timestamp for i in kept)


@given(batch_specs(log_append_time=False, delete_horizon=False), st.integers(0, 2**45))
def test_stamping_a_horizon_never_changes_record_timestamps(spec: BatchSpec, horizon: int) -> None:
    original = RecordBatch.from_bytes(spec.build())
    out = RecordBatch.from_bytes(rebuild_batch(original, original.records, delete_horizon_ms=horizon))
    assert out.header.delete_horizon_ms == horizon
    assert out.records == original.records
    assert replace(out.header, crc=0, base_timestamp=0, attributes=0, batch_length=0) == replace(
        original.header, crc=0, base_timestamp=0, attributes=0, batch_length=0
    )


def test_build_refuses_a_timestamp_delta_beyond_int64() -> None:
    # Java would wrap the delta silently; writing a wrong varlong silently would corrupt the record
    records = [Record(0, -(2**63), None, b""), Record(1, 2**63 - 1, None, b"")]
    with pytest.raises(VarintError, match="does not fit a varlong"):
        build_batch(records)
