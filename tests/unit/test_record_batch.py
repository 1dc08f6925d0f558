"""Record batch v2 (``DefaultRecordBatch``) and record v2 (``DefaultRecord``).

Header fields, attributes, CRC-32C coverage, LogAppendTime, tombstones, headers, sequences, malformed records.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import CorruptRecordError, InvalidCrcError
from kafka_segments.records import (
    BatchHeader,
    CompressionType,
    Header,
    Record,
    RecordBatch,
    TimestampType,
    build_batch,
)
from kafka_segments.records.attributes import compute_attributes
from kafka_segments.records.batch import (
    INT32_MAX,
    RECORD_BATCH_OVERHEAD,
    increment_sequence,
    unpack_header,
)
from kafka_segments.records.crc import crc32c
from kafka_segments.records.fast import decode_record_columns
from kafka_segments.records.varint import decode_varint, encode_varint
from unit.strategies import BatchSpec, batch_specs

pytestmark = pytest.mark.unit

TS = 1_700_000_000_000


def reference_crc32c(data: bytes) -> int:
    """Bit-by-bit CRC-32C (Castagnoli, reflected polynomial 0x82F63B78): independent of the library's."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


# One record (offset 5, key "k", value "v", header h=x) in a batch at base offset 5, partition leader epoch 0,
# no producer. Written by kafka-python's DefaultRecordBatchBuilder (BaseOffset patched to 5), field by field:
GOLDEN_BATCH = bytes.fromhex(
    "0000000000000005"  # baseOffset 5
    "0000003e"  # batchLength 62
    "00000000"  # partitionLeaderEpoch 0
    "02"  # magic
    "5e93538d"  # crc
    "0000"  # attributes
    "00000000"  # lastOffsetDelta
    "0000018bcfe56800"  # baseTimestamp 1700000000000
    "0000018bcfe56800"  # maxTimestamp
    "ffffffffffffffff"  # producerId -1
    "ffff"  # producerEpoch -1
    "ffffffff"  # baseSequence -1
    "00000001"  # recordsCount 1
    "18"  # record length 12
    "00"  # record attributes
    "00"  # timestampDelta 0
    "00"  # offsetDelta 0
    "026b"  # key "k"
    "0276"  # value "v"
    "02"  # 1 header
    "0268"  # header key "h"
    "0278"  # header value "x"
)


def reseal(buf: bytearray) -> bytearray:
    """Recompute the CRC after a test edits bytes inside the CRC-covered region."""
    buf[17:21] = crc32c(bytes(buf[21:])).to_bytes(4, "big")
    return buf


def batch_of(data: bytes) -> RecordBatch:
    return RecordBatch.from_bytes(data)


def sample_batch(**kwargs: object) -> bytes:
    records = [
        Record(100, TS, b"k0", b"v0", (Header("h", b"1"),)),
        Record(101, TS + 5, None, b"", ()),
        Record(104, TS - 7, b"k2", None, (Header("n", None),)),
    ]
    return build_batch(records, **kwargs)  # type: ignore[arg-type]


# --- header fields ---


def test_golden_batch_matches_the_builder_byte_for_byte() -> None:
    ours = build_batch(
        [Record(5, TS, b"k", b"v", (Header("h", b"x"),))],
        partition_leader_epoch=0,
    )
    assert ours.hex() == GOLDEN_BATCH.hex()


def test_golden_batch_reads_back() -> None:
    batch = batch_of(GOLDEN_BATCH)
    assert batch.is_valid()
    assert batch.records == [Record(5, TS, b"k", b"v", (Header("h", b"x"),))]
    assert batch.header.crc == 0x5E93538D


def test_every_header_field_reads_back_from_its_documented_byte_offset() -> None:
    data = sample_batch(
        base_offset=98,
        last_offset=106,
        partition_leader_epoch=17,
        producer_id=0x0102030405060708,
        producer_epoch=0x1234,
        base_sequence=0x0A0B0C0D,
        is_transactional=True,
        compression=CompressionType.NONE,
    )
    header = batch_of(data).header
    # offsets are DefaultRecordBatch's offset constants, typed here independently of the library's struct
    fields = {
        "base_offset": struct.unpack_from(">q", data, 0)[0],
        "batch_length": struct.unpack_from(">i", data, 8)[0],
        "partition_leader_epoch": struct.unpack_from(">i", data, 12)[0],
        "magic": struct.unpack_from(">b", data, 16)[0],
        "crc": struct.unpack_from(">I", data, 17)[0],
        "attributes": struct.unpack_from(">h", data, 21)[0],
        "last_offset_delta": struct.unpack_from(">i", data, 23)[0],
        "base_timestamp": struct.unpack_from(">q", data, 27)[0],
        "max_timestamp": struct.unpack_from(">q", data, 35)[0],
        "producer_id": struct.unpack_from(">q", data, 43)[0],
        "producer_epoch": struct.unpack_from(">h", data, 51)[0],
        "base_sequence": struct.unpack_from(">i", data, 53)[0],
        "records_count": struct.unpack_from(">i", data, 57)[0],
    }
    assert fields == {
        "base_offset": 98,
        "batch_length": len(data) - 12,
        "partition_leader_epoch": 17,
        "magic": 2,
        "crc": reference_crc32c(data[21:]),
        "attributes": 0x10,
        "last_offset_delta": 8,
        "base_timestamp": TS,
        "max_timestamp": TS + 5,
        "producer_id": 0x0102030405060708,
        "producer_epoch": 0x1234,
        "base_sequence": 0x0A0B0C0D,
        "records_count": 3,
    }
    assert {name: getattr(header, name) for name in fields} == fields
    assert header.position == 0
    assert header.size_in_bytes == len(data)
    assert header.last_offset == 106
    assert header.next_offset == 107
    assert header.has_producer_id
    assert header.last_sequence == 0x0A0B0C0D + 8


def test_header_layout_constants() -> None:
    assert RECORD_BATCH_OVERHEAD == 61
    empty = build_batch([], base_offset=0, last_offset=0)
    assert len(empty) == 61


def test_unpack_header_reads_at_a_position() -> None:
    data = b"\x00" * 7 + GOLDEN_BATCH
    header = unpack_header(data, 7)
    assert header.base_offset == 5
    assert header.position == 7
    assert header.records_count == 1


def test_sentinels_mean_no_producer() -> None:
    header = batch_of(GOLDEN_BATCH).header
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (-1, -1, -1)
    assert not header.has_producer_id
    assert header.last_sequence == -1
    assert header.delete_horizon_ms is None


# --- attributes ---


@pytest.mark.parametrize("codec", list(CompressionType), ids=[c.name for c in CompressionType])
def test_codec_occupies_attribute_bits_0_to_2(codec: CompressionType) -> None:
    data = sample_batch(compression=codec)
    assert struct.unpack_from(">h", data, 21)[0] == int(codec)
    batch = batch_of(data)
    assert batch.header.compression is codec
    assert batch.is_valid()
    assert [r.offset for r in batch.records] == [100, 101, 104]


@pytest.mark.parametrize(
    ("kwargs", "bits", "flag"),
    [
        ({"timestamp_type": TimestampType.LOG_APPEND_TIME, "log_append_time": TS}, 0x08, "timestamp_type"),
        ({"is_transactional": True}, 0x10, "is_transactional"),
        ({"is_control": True}, 0x20, "is_control"),
        ({"delete_horizon_ms": TS + 86_400_000}, 0x40, "has_delete_horizon"),
    ],
    ids=["bit3-log-append-time", "bit4-transactional", "bit5-control", "bit6-delete-horizon"],
)
def test_flag_bits(kwargs: dict[str, object], bits: int, flag: str) -> None:
    data = sample_batch(**kwargs)
    assert struct.unpack_from(">h", data, 21)[0] == bits
    header = batch_of(data).header
    expected_flags = {
        "timestamp_type": TimestampType.CREATE_TIME,
        "is_transactional": False,
        "is_control": False,
        "has_delete_horizon": False,
    }
    expected_flags[flag] = TimestampType.LOG_APPEND_TIME if flag == "timestamp_type" else True
    assert {name: getattr(header, name) for name in expected_flags} == expected_flags


def test_all_flags_together() -> None:
    attributes = compute_attributes(
        compression=CompressionType.ZSTD,
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        is_transactional=True,
        is_control=True,
        has_delete_horizon=True,
    )
    assert attributes == 0x7C
    header = BatchHeader(0, 49, -1, 2, 0, attributes, 0, 0, 0, -1, -1, -1, 0)
    assert header.compression is CompressionType.ZSTD
    assert header.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert header.is_transactional
    assert header.is_control
    assert header.has_delete_horizon


def test_only_the_low_attribute_bits_carry_meaning() -> None:
    # bits 7-15 are unused; a header with them set still reports the low-byte flags
    header = BatchHeader(0, 49, -1, 2, 0, 0x7F00 | 0x12, 0, 0, 0, -1, -1, -1, 0)
    assert header.compression is CompressionType.SNAPPY
    assert header.is_transactional
    assert not header.is_control


def test_delete_horizon_is_the_base_timestamp_when_bit_6_is_set() -> None:
    horizon = TS + 86_400_000
    header = batch_of(sample_batch(delete_horizon_ms=horizon)).header
    assert header.base_timestamp == horizon
    assert header.delete_horizon_ms == horizon


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_unknown_codec_id_is_corrupt(codec_id: int) -> None:
    data = bytearray(sample_batch())
    struct.pack_into(">h", data, 21, codec_id)
    batch = batch_of(bytes(reseal(data)))
    assert batch.is_valid()
    with pytest.raises(CorruptRecordError, match=f"unknown compression codec id {codec_id}") as info:
        _ = batch.records
    assert info.value.offset == 100


# --- CRC-32C coverage ---


def test_crc_is_crc32c_of_attributes_to_end() -> None:
    assert reference_crc32c(b"123456789") == crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    data = sample_batch(compression=CompressionType.GZIP)
    assert batch_of(data).header.crc == reference_crc32c(data[21:])


@pytest.mark.parametrize(
    ("field_offset", "fmt", "value"),
    [(0, ">q", 123456789), (12, ">i", 99), (12, ">i", -1)],
    ids=["base-offset", "partition-leader-epoch", "no-leader-epoch"],
)
def test_crc_does_not_cover_base_offset_or_leader_epoch(field_offset: int, fmt: str, value: int) -> None:
    data = bytearray(sample_batch(partition_leader_epoch=3))
    struct.pack_into(fmt, data, field_offset, value)
    batch = batch_of(bytes(data))
    assert batch.is_valid()
    batch.verify_crc()


def test_changing_any_byte_from_attributes_on_breaks_the_crc() -> None:
    data = sample_batch(producer_id=7, producer_epoch=1, base_sequence=0)
    for position in range(21, len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 0x01
        batch = batch_of(bytes(damaged))
        assert not batch.is_valid(), position
        with pytest.raises(InvalidCrcError, match="CRC mismatch"):
            batch.verify_crc()


def test_changing_a_crc_byte_is_detected_with_location() -> None:
    damaged = bytearray(sample_batch())
    damaged[18] ^= 0xFF
    batch = RecordBatch.from_bytes(bytes(damaged), segment="00000000000000000100.log", position=4096)
    with pytest.raises(
        InvalidCrcError, match=r"00000000000000000100\.log at byte 4096 \(offset 100\)"
    ) as info:
        batch.verify_crc()
    assert (info.value.segment, info.value.position, info.value.offset) == (
        "00000000000000000100.log",
        4096,
        100,
    )


def test_is_valid_needs_a_full_header() -> None:
    batch = RecordBatch(GOLDEN_BATCH[:60], unpack_header(GOLDEN_BATCH, 0))
    assert not batch.is_valid()


def test_from_bytes_refuses_a_short_buffer() -> None:
    with pytest.raises(CorruptRecordError, match="shorter than a v2 batch header") as info:
        RecordBatch.from_bytes(GOLDEN_BATCH[:60], segment="s.log", position=12)
    assert (info.value.segment, info.value.position, info.value.offset) == ("s.log", 12, None)


def test_from_bytes_takes_only_the_declared_batch() -> None:
    batch = RecordBatch.from_bytes(GOLDEN_BATCH + b"trailing")
    assert bytes(batch.raw) == GOLDEN_BATCH


# --- timestamps ---


def test_create_time_records_use_base_plus_delta_and_max_is_the_largest() -> None:
    batch = batch_of(sample_batch())
    assert [r.timestamp for r in batch.records] == [TS, TS + 5, TS - 7]
    assert batch.header.base_timestamp == TS
    assert batch.header.max_timestamp == TS + 5


def test_log_append_time_gives_every_record_the_max_timestamp() -> None:
    append_time = TS + 1_000_000
    batch = batch_of(sample_batch(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=append_time))
    assert batch.header.max_timestamp == append_time
    assert [r.timestamp for r in batch.records] == [append_time] * 3


def test_log_append_time_follows_the_stored_max_timestamp_not_the_deltas() -> None:
    data = bytearray(sample_batch(timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=TS))
    struct.pack_into(">q", data, 35, 42)
    batch = batch_of(bytes(reseal(data)))
    assert [r.timestamp for r in batch.records] == [42, 42, 42]
    # the same bytes read as CreateTime give the written timestamps back
    struct.pack_into(">h", data, 21, 0)
    assert [r.timestamp for r in batch_of(bytes(reseal(data))).records] == [TS, TS + 5, TS - 7]


def test_timestamps_before_the_base_use_negative_deltas() -> None:
    data = build_batch([Record(0, TS, None, b"a"), Record(1, TS - 1000, None, b"b")])
    first_length, pos = decode_varint(data, RECORD_BATCH_OVERHEAD)
    _, pos = decode_varint(data, pos + first_length)  # the second record's length
    delta, _ = decode_varint(data, pos + 1)  # after its attributes byte
    assert delta == -1000
    assert [r.timestamp for r in batch_of(data).records] == [TS, TS - 1000]


# --- keys, values, headers ---


def test_tombstone_is_a_null_value_and_empty_is_not() -> None:
    batch = batch_of(build_batch([Record(0, TS, b"k", None), Record(1, TS, b"k", b"")]))
    tombstone, empty = batch.records
    assert tombstone.value is None
    assert tombstone.is_tombstone
    assert empty.value == b""
    assert not empty.is_tombstone


def test_null_and_empty_lengths_are_written_as_minus_one_and_zero() -> None:
    # record body: attributes 00, tsDelta 00, offsetDelta 00, key, value, headers 00
    null_key_null_value = build_batch([Record(0, TS, None, None)])[RECORD_BATCH_OVERHEAD:]
    empty_key_empty_value = build_batch([Record(0, TS, b"", b"")])[RECORD_BATCH_OVERHEAD:]
    assert null_key_null_value.hex() == "0c" + "00" + "00" + "00" + "01" + "01" + "00"
    assert empty_key_empty_value.hex() == "0c" + "00" + "00" + "00" + "00" + "00" + "00"


def test_null_key_reads_back_as_none() -> None:
    batch = batch_of(build_batch([Record(9, TS, None, b"v"), Record(10, TS, b"", b"v")]))
    assert [r.key for r in batch.records] == [None, b""]


def test_headers_keep_order_duplicates_null_values_and_utf8_keys() -> None:
    headers = (
        Header("trace", b"abc"),
        Header("nullhdr", None),
        Header("trace", b""),
        Header("ключ-✓", b"\x00\xff"),
        Header("", b"empty-key"),
    )
    batch = batch_of(build_batch([Record(0, TS, b"k", b"v", headers)]))
    assert batch.records[0].headers == headers


def test_header_value_null_is_written_as_minus_one() -> None:
    body = build_batch([Record(0, TS, None, None, (Header("h", None),))])[RECORD_BATCH_OVERHEAD:]
    assert body.hex().endswith("02" + "0268" + "01")  # 1 header, key "h", value length -1


def test_large_values_use_multibyte_lengths() -> None:
    value = bytes(range(256)) * 70  # 17920 bytes: a 3-byte varint length
    batch = batch_of(build_batch([Record(0, TS, b"k", value)], compression=CompressionType.LZ4))
    assert batch.records[0].value == value


# --- sequences ---


@pytest.mark.parametrize(
    ("sequence", "increment", "expected"),
    [
        (0, 0, 0),
        (0, 5, 5),
        (INT32_MAX - 5, 5, INT32_MAX),
        (INT32_MAX, 1, 0),
        (INT32_MAX - 2, 5, 2),
        (INT32_MAX, INT32_MAX, INT32_MAX - 1),
    ],
)
def test_increment_sequence_wraps_past_int32_max(sequence: int, increment: int, expected: int) -> None:
    assert increment_sequence(sequence, increment) == expected


def test_last_sequence_wraps_past_int32_max() -> None:
    records = [Record(o, TS, None, b"v") for o in (0, 1, 2, 3)]
    batch = batch_of(build_batch(records, producer_id=1, producer_epoch=0, base_sequence=INT32_MAX - 1))
    assert batch.header.last_offset_delta == 3
    assert batch.header.last_sequence == 1


def test_last_sequence_uses_last_offset_delta_even_with_gaps() -> None:
    records = [Record(10, TS, None, b"v")]
    data = build_batch(
        records, base_offset=10, last_offset=20, producer_id=1, producer_epoch=0, base_sequence=7
    )
    assert batch_of(data).header.last_sequence == 17


# --- malformed records inside a valid-CRC batch ---


def test_record_length_that_lies_is_corrupt() -> None:
    data = bytearray(build_batch([Record(50, TS, b"key", b"value")]))
    assert data[RECORD_BATCH_OVERHEAD] == 0x1C  # 14
    data[RECORD_BATCH_OVERHEAD] = 0x1A  # claims 13
    batch = RecordBatch.from_bytes(bytes(reseal(data)), segment="seg.log", position=0)
    with pytest.raises(CorruptRecordError, match="record 0: expected to read 13 bytes but read 14") as info:
        _ = batch.records
    assert (info.value.segment, info.value.position, info.value.offset) == ("seg.log", 0, 50)


def test_record_length_past_the_batch_is_corrupt() -> None:
    data = bytearray(build_batch([Record(50, TS, b"key", b"value")]))
    data[RECORD_BATCH_OVERHEAD] = 0x7E  # 63 bytes, more than remain
    with pytest.raises(CorruptRecordError, match="record 0 declares 63 bytes but 14 remain"):
        _ = batch_of(bytes(reseal(data))).records


def test_records_count_larger_than_the_records_is_corrupt() -> None:
    data = bytearray(build_batch([Record(0, TS, b"k", b"v")]))
    struct.pack_into(">i", data, 57, 2)
    with pytest.raises(CorruptRecordError, match=r"record 1: varint at \d+ runs past the end"):
        _ = batch_of(bytes(reseal(data))).records


def test_bytes_left_after_the_declared_records_are_corrupt() -> None:
    data = bytearray(build_batch([Record(0, TS, b"k", b"v"), Record(1, TS, b"k", b"v")]))
    struct.pack_into(">i", data, 57, 1)
    with pytest.raises(CorruptRecordError, match="unconsumed bytes after all 1 records were read"):
        _ = batch_of(bytes(reseal(data))).records


def test_negative_records_count_is_corrupt() -> None:
    data = bytearray(build_batch([Record(0, TS, b"k", b"v")]))
    struct.pack_into(">i", data, 57, -1)
    with pytest.raises(CorruptRecordError, match="negative records count -1"):
        _ = batch_of(bytes(reseal(data))).records


def _single_record_batch(body: bytes) -> bytes:
    """A batch whose only record has this hand-written body (after the length varint)."""
    template = bytearray(build_batch([Record(0, TS, None, None)]))
    del template[RECORD_BATCH_OVERHEAD:]
    template += encode_varint(len(body)) + body
    struct.pack_into(">i", template, 8, len(template) - 12)
    return bytes(reseal(template))


# Bodies are hex: attributes, timestampDelta, offsetDelta, then key length / key, value length / value,
# header count and headers; varints are zigzag (01 = -1, 02 = 1, 03 = -2, 05 = -3, 14 = 10).
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("00000001010201", "record 0 has a null header key"),
        ("000000010103", "record 0 has a negative header count -2"),
        ("000000146b", "record 0: key of 10 bytes runs past the record"),
    ],
    ids=[
        "null-header-key",
        "negative-header-count",
        "key-past-record",
    ],
)
def test_malformed_record_fields_are_corrupt(body: str, message: str) -> None:
    batch = batch_of(_single_record_batch(bytes.fromhex(body)))
    assert batch.is_valid()
    with pytest.raises(CorruptRecordError, match=message):
        _ = batch.records


@pytest.mark.parametrize(
    "body",
    ["000000050300", "00000005026b00", "000000010102026803", "000000017f02026801"],
    ids=["key-minus-3-value-minus-2", "key-minus-3", "header-value-minus-2", "value-minus-64"],
)
def test_any_negative_key_value_or_header_value_length_is_null(body: str) -> None:
    """Kafka's ``DefaultRecord.readFrom`` reads any negative length as null, not only -1 (checked with
    Kafka's own cleaner: tests/interop/test_kafka_oracle_hostile_records.py); a header key's negative length
    stays an error."""
    data = _single_record_batch(bytes.fromhex(body))
    expected = {
        "000000050300": Record(0, TS, None, None),
        "00000005026b00": Record(0, TS, None, b"k"),
        "000000010102026803": Record(0, TS, None, None, (Header("h", None),)),
        "000000017f02026801": Record(0, TS, None, None, (Header("h", None),)),
    }[body]
    assert batch_of(data).records == [expected]
    columns = decode_record_columns(data)
    assert columns.key_length.tolist() == [-1]
    assert columns.value_length.tolist() == [-1 if expected.value is None else len(expected.value)]


def test_header_key_that_is_not_utf8_reads_with_replacement_characters() -> None:
    # Kafka's DefaultRecord.readHeaders uses new String(bytes, UTF_8): malformed bytes become U+FFFD.
    batch = batch_of(_single_record_batch(bytes.fromhex("00000001010202ff01")))
    assert batch.records == [Record(0, TS, None, None, (Header("\ufffd", None),))]


def test_hand_written_record_body_parses() -> None:
    # the helper itself: a well-formed body round-trips (so the failures above are about the field)
    batch = batch_of(_single_record_batch(bytes.fromhex("000000026b0102026801")))
    assert batch.records == [Record(0, TS, b"k", None, (Header("h", None),))]


@pytest.mark.parametrize(
    "codec", [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD]
)
def test_damaged_compressed_stream_is_corrupt(codec: CompressionType) -> None:
    data = bytearray(sample_batch(compression=codec))
    data[RECORD_BATCH_OVERHEAD:] = b"\x00\x01\x02not a compressed stream at all"
    struct.pack_into(">i", data, 8, len(data) - 12)
    batch = RecordBatch.from_bytes(bytes(reseal(data)), segment="z.log", position=0)
    with pytest.raises(CorruptRecordError) as info:
        _ = batch.records
    assert info.value.offset == 100
    assert info.value.segment == "z.log"


# --- round trips ---


def assert_reads_back(spec: BatchSpec, data: bytes) -> None:
    batch = batch_of(data)
    header = batch.header
    assert batch.is_valid()
    assert header.magic == 2
    assert header.size_in_bytes == len(data)
    assert header.base_offset == spec.base_offset
    assert header.last_offset == spec.last_offset
    assert header.partition_leader_epoch == spec.partition_leader_epoch
    assert header.compression is spec.compression
    assert header.timestamp_type is spec.timestamp_type
    assert header.is_transactional is spec.is_transactional
    assert header.is_control is spec.is_control
    assert header.has_delete_horizon is (spec.delete_horizon_ms is not None)
    assert header.delete_horizon_ms == spec.delete_horizon_ms
    assert header.base_timestamp == spec.expected_base_timestamp
    assert header.max_timestamp == spec.expected_max_timestamp
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (
        spec.producer_id,
        spec.producer_epoch,
        spec.base_sequence,
    )
    assert header.records_count == len(spec.records)
    assert batch.records == spec.expected_records()


@given(batch_specs())
def test_any_batch_round_trips(spec: BatchSpec) -> None:
    assert_reads_back(spec, spec.build())


@given(batch_specs(log_append_time=False, delete_horizon=False, control=False))
def test_create_time_batch_round_trips_every_timestamp(spec: BatchSpec) -> None:
    batch = batch_of(spec.build())
    assert [r.timestamp for r in batch.records] == [r.timestamp for r in spec.records]


@given(batch_specs(codecs=(CompressionType.NONE,)), st.integers(0, 2**62), st.integers(-1, INT32_MAX))
def test_rewriting_base_offset_and_leader_epoch_keeps_the_batch_valid(
    spec: BatchSpec, new_base: int, new_epoch: int
) -> None:
    data = bytearray(spec.build())
    struct.pack_into(">qii", data, 0, new_base, len(data) - 12, new_epoch)
    batch = batch_of(bytes(data))
    assert batch.is_valid()
    assert [r.offset - new_base for r in batch.records] == [r.offset - spec.base_offset for r in spec.records]
    assert batch.header.partition_leader_epoch == new_epoch
