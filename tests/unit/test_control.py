"""Control records and transaction markers.

As Kafka's ``ControlRecordType`` and ``EndTransactionMarker``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.records import (
    CompressionType,
    ControlKey,
    ControlRecordType,
    EndTransactionMarker,
    Header,
    Record,
    RecordBatch,
    build_batch,
    build_end_transaction_marker,
    rebuild_batch,
)
from kafka_segments.records.control import ControlRecordError

pytestmark = pytest.mark.unit

TS = 1_700_000_000_000

# key = version:int16 (0) + type:int16; value = version:int16 (0) + coordinatorEpoch:int32
MARKER_GOLDEN = [
    pytest.param(ControlRecordType.COMMIT, 0, "00000001", "000000000000", id="commit-epoch-0"),
    pytest.param(ControlRecordType.ABORT, 0, "00000000", "000000000000", id="abort-epoch-0"),
    pytest.param(ControlRecordType.COMMIT, 5, "00000001", "000000000005", id="commit-epoch-5"),
    pytest.param(ControlRecordType.ABORT, 0x01020304, "00000000", "000001020304", id="abort-big-epoch"),
    pytest.param(ControlRecordType.COMMIT, -1, "00000001", "0000ffffffff", id="commit-epoch-minus-1"),
]


@pytest.mark.parametrize(("kind", "epoch", "key", "value"), MARKER_GOLDEN)
def test_marker_key_and_value_bytes(kind: ControlRecordType, epoch: int, key: str, value: str) -> None:
    marker = EndTransactionMarker(kind, epoch)
    assert marker.key_bytes().hex() == key
    assert marker.value_bytes().hex() == value


@pytest.mark.parametrize(("kind", "epoch", "key", "value"), MARKER_GOLDEN)
def test_marker_parses_from_its_bytes(kind: ControlRecordType, epoch: int, key: str, value: str) -> None:
    record = Record(0, TS, bytes.fromhex(key), bytes.fromhex(value))
    assert EndTransactionMarker.parse(record) == EndTransactionMarker(kind, epoch, 0)


@pytest.mark.parametrize(
    ("type_id", "expected"),
    [
        (0, ControlRecordType.ABORT),
        (1, ControlRecordType.COMMIT),
        (2, ControlRecordType.LEADER_CHANGE),
        (3, ControlRecordType.SNAPSHOT_HEADER),
        (4, ControlRecordType.SNAPSHOT_FOOTER),
        (5, ControlRecordType.KRAFT_VERSION),
        (6, ControlRecordType.KRAFT_VOTERS),
        (7, ControlRecordType.UNKNOWN),
        (42, ControlRecordType.UNKNOWN),
        (0x7FFF, ControlRecordType.UNKNOWN),
        (-1, ControlRecordType.UNKNOWN),
        (-32768, ControlRecordType.UNKNOWN),
    ],
)
def test_control_key_types(type_id: int, expected: ControlRecordType) -> None:
    key = ControlKey.parse(type_id.to_bytes(2, "big", signed=True).rjust(4, b"\x00"))
    assert key.type is expected
    assert key.type_id == type_id  # an unknown type keeps its id
    assert key.version == 0


@pytest.mark.parametrize("version", [1, 3, 0x7FFF])
def test_later_key_versions_are_read_as_version_0(version: int) -> None:
    raw = version.to_bytes(2, "big") + b"\x00\x01" + b"future-fields"
    key = ControlKey.parse(raw)
    assert (key.version, key.type) == (version, ControlRecordType.COMMIT)
    marker = EndTransactionMarker.parse(Record(0, TS, raw, bytes.fromhex("000000000009")))
    assert (marker.type, marker.coordinator_epoch) == (ControlRecordType.COMMIT, 9)


def test_longer_marker_value_is_read_by_its_first_fields() -> None:
    marker = EndTransactionMarker.parse(
        Record(0, TS, bytes.fromhex("00000000"), bytes.fromhex("0000000000070102"))
    )
    assert (marker.type, marker.coordinator_epoch) == (ControlRecordType.ABORT, 7)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (None, "control record key must be at least 4 bytes"),
        (b"", "control record key must be at least 4 bytes"),
        (b"\x00\x00\x01", "control record key must be at least 4 bytes"),
        (b"\xff\xff\x00\x01", "negative control record key version -1"),
    ],
    ids=["null", "empty", "three-bytes", "negative-version"],
)
def test_malformed_control_key(key: bytes | None, message: str) -> None:
    with pytest.raises(ControlRecordError, match=message):
        ControlKey.parse(key)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("00000002", "000000000000", "control record type LEADER_CHANGE is not a transaction marker"),
        ("0000002a", "000000000000", "control record type UNKNOWN is not a transaction marker"),
        ("00000001", None, "end transaction marker value too short"),
        ("00000001", "0000000000", "end transaction marker value too short"),
    ],
    ids=["leader-change", "unknown-type", "null-value", "five-byte-value"],
)
def test_malformed_marker(key: str, value: str | None, message: str) -> None:
    record = Record(0, TS, bytes.fromhex(key), None if value is None else bytes.fromhex(value))
    with pytest.raises(ControlRecordError, match=message):
        EndTransactionMarker.parse(record)


def test_control_record_error_is_a_value_error() -> None:
    assert issubclass(ControlRecordError, ValueError)


@pytest.mark.parametrize("kind", [ControlRecordType.COMMIT, ControlRecordType.ABORT])
def test_end_transaction_marker_batch(kind: ControlRecordType) -> None:
    marker = EndTransactionMarker(kind, 17)
    data = build_end_transaction_marker(
        marker, offset=500, timestamp=TS, producer_id=4242, producer_epoch=3, partition_leader_epoch=9
    )
    batch = RecordBatch.from_bytes(data)
    header = batch.header
    assert batch.is_valid()
    assert header.attributes == 0x30  # transactional + control, no compression, CreateTime, no horizon
    assert header.is_transactional
    assert header.is_control
    assert header.compression is CompressionType.NONE
    assert header.base_sequence == -1
    assert header.records_count == 1
    assert (header.base_offset, header.last_offset_delta) == (500, 0)
    assert (header.producer_id, header.producer_epoch) == (4242, 3)
    assert header.partition_leader_epoch == 9
    assert (header.base_timestamp, header.max_timestamp) == (TS, TS)
    assert batch.records == [Record(500, TS, marker.key_bytes(), marker.value_bytes())]
    assert EndTransactionMarker.parse(batch.records[0]) == marker


def test_end_transaction_marker_golden_bytes() -> None:
    data = build_end_transaction_marker(
        EndTransactionMarker(ControlRecordType.COMMIT, 5),
        offset=7,
        timestamp=TS,
        producer_id=1,
        producer_epoch=0,
    )
    assert data[:17].hex() == "0000000000000007" + "00000042" + "ffffffff" + "02"
    assert (
        data[21:].hex()
        == (
            "0030"  # attributes
            "00000000"  # lastOffsetDelta
            "0000018bcfe56800"  # baseTimestamp
            "0000018bcfe56800"  # maxTimestamp
            "0000000000000001"  # producerId
            "0000"  # producerEpoch
            "ffffffff"  # baseSequence -1
            "00000001"  # one record
            "20"  # length 16
            "00"  # attributes
            "00"  # timestampDelta
            "00"  # offsetDelta
            "08" + "00000001"  # key: 4 bytes, version 0, COMMIT
            "0c" + "000000000005"  # value: 6 bytes, version 0, coordinator epoch 5
            "00"  # no headers
        )
    )


def test_partition_leader_epoch_defaults_to_none() -> None:
    data = build_end_transaction_marker(
        EndTransactionMarker(ControlRecordType.ABORT, 0),
        offset=0,
        timestamp=TS,
        producer_id=1,
        producer_epoch=0,
    )
    assert RecordBatch.from_bytes(data).header.partition_leader_epoch == -1


def test_unknown_control_type_is_kept_opaque() -> None:
    records = [
        Record(10, TS, ControlKey(0, 42).build(), b"\x01\x02\x03opaque", (Header("x", None),)),
        Record(11, TS + 1, ControlKey(2, 99).build() + b"\xee", None),
    ]
    source = RecordBatch.from_bytes(build_batch(records, is_control=True, compression=CompressionType.GZIP))
    assert source.records == records
    assert [ControlKey.parse(r.key).type for r in source.records] == [ControlRecordType.UNKNOWN] * 2
    assert [ControlKey.parse(r.key).type_id for r in source.records] == [42, 99]
    # a rebuild (e.g. dropping the other record) keeps the unknown record's bytes exactly
    out = RecordBatch.from_bytes(rebuild_batch(source, source.records[:1]))
    assert out.header.is_control
    assert out.records == records[:1]
    uncompressed = RecordBatch.from_bytes(
        build_batch(records[:1], is_control=True, base_offset=10, last_offset=11)
    )
    assert out.records_payload() == uncompressed.records_payload()


@given(st.sampled_from([ControlRecordType.COMMIT, ControlRecordType.ABORT]), st.integers(-(2**31), 2**31 - 1))
def test_marker_round_trips(kind: ControlRecordType, epoch: int) -> None:
    marker = EndTransactionMarker(kind, epoch)
    record = Record(0, TS, marker.key_bytes(), marker.value_bytes())
    assert EndTransactionMarker.parse(record) == marker


@given(st.integers(0, 2**15 - 1), st.integers(-(2**15), 2**15 - 1))
def test_control_key_round_trips(version: int, type_id: int) -> None:
    assert ControlKey.parse(ControlKey(version, type_id).build()) == ControlKey(version, type_id)
