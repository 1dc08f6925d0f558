"""Interoperability with kafka-python 3.0.12's record module, an independent v2 implementation, both ways.

* What our builder writes (every codec, transactional and control batches, headers, tombstones, LogAppendTime,
  delete horizons, empty batch headers, whole segments) is read identically by kafka-python's reader.
* What kafka-python's ``DefaultRecordBatchBuilder`` writes (BaseOffset / PartitionLeaderEpoch patched as a
  broker would, plus a small subclass for the control and LogAppendTime bits, from
  ``tests/data/make_golden_v2.py``) is read identically by ours. kafka-python silently writes a batch
  uncompressed (codec bits 0) when compression does not shrink it; comparisons take the codec from the bytes.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

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
    TimestampType,
    build_batch,
    build_end_transaction_marker,
    empty_batch_header,
    iter_batches,
    iter_records,
    rebuild_batch,
)
from kafka_segments.records.varint import decode_varint, encode_varint
from unit.strategies import BatchSpec, batch_specs, segment_bytes, segment_specs

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.record import util as kafka_util
    from kafka.record.default_records import ControlRecord, DefaultRecordBatch
    from kafka.record.memory_records import MemoryRecords

pytestmark = pytest.mark.unit

TS = 1_700_000_000_000
DAY = 86_400_000
DATA_DIR = Path(__file__).resolve().parents[1] / "data"
GOLDEN_DIR = DATA_DIR / "v2"


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_golden_v2", DATA_DIR / "make_golden_v2.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


golden = _load_generator()

KpRecord = tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]


def kafka_python_view(batch: DefaultRecordBatch) -> dict[str, Any]:
    """Everything kafka-python's reader says about one batch."""
    assert batch.validate_crc()  # before iterating, as kafka-python requires
    records = list(batch)
    return {
        "base_offset": batch.base_offset,
        "last_offset_delta": batch.last_offset_delta,
        "partition_leader_epoch": batch.leader_epoch,
        "magic": batch.magic,
        "crc": batch.crc,
        "attributes": batch.attributes,
        "compression": batch.compression_type,
        "timestamp_type": batch.timestamp_type,
        "is_transactional": batch.is_transactional,
        "is_control": batch.is_control_batch,
        "base_timestamp": batch.first_timestamp,
        "max_timestamp": batch.max_timestamp,
        "producer_id": batch.producer_id,
        "producer_epoch": batch.producer_epoch,
        "base_sequence": batch.base_sequence,
        "last_sequence": batch.last_sequence,
        "records_count": batch.records_count,
        "size_in_bytes": batch.size_in_bytes,
        "records": [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in records],
        "control_types": [r.type for r in records if isinstance(r, ControlRecord)],
    }


def our_view(batch: RecordBatch) -> dict[str, Any]:
    """The same facts from our reader."""
    header = batch.header
    records = batch.records
    return {
        "base_offset": header.base_offset,
        "last_offset_delta": header.last_offset_delta,
        "partition_leader_epoch": header.partition_leader_epoch,
        "magic": header.magic,
        "crc": header.crc,
        "attributes": header.attributes,
        "compression": int(header.compression),
        "timestamp_type": int(header.timestamp_type),
        "is_transactional": header.is_transactional,
        "is_control": header.is_control,
        "base_timestamp": header.base_timestamp,
        "max_timestamp": header.max_timestamp,
        "producer_id": header.producer_id,
        "producer_epoch": header.producer_epoch,
        "base_sequence": header.base_sequence,
        "last_sequence": header.last_sequence,
        "records_count": header.records_count,
        "size_in_bytes": header.size_in_bytes,
        "records": [
            (r.offset, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers]) for r in records
        ],
        "control_types": [ControlKey.parse(r.key).type_id for r in records] if header.is_control else [],
    }


def kafka_python_batches(data: bytes) -> list[dict[str, Any]]:
    return [kafka_python_view(batch) for batch in MemoryRecords(data)]


def our_batches(data: bytes) -> list[dict[str, Any]]:
    return [our_view(batch) for batch in iter_batches(data)]  # type: ignore[arg-type]


def spec_view(spec: BatchSpec, data: bytes) -> dict[str, Any]:
    """What the spec says both readers must report (the CRC is taken from the bytes)."""
    view = our_view(RecordBatch.from_bytes(data))
    return {
        "base_offset": spec.base_offset,
        "last_offset_delta": spec.last_offset - spec.base_offset,
        "partition_leader_epoch": spec.partition_leader_epoch,
        "magic": 2,
        "crc": view["crc"],
        "attributes": int(spec.compression)
        | (0x08 if spec.is_log_append_time else 0)
        | (0x10 if spec.is_transactional else 0)
        | (0x20 if spec.is_control else 0)
        | (0x40 if spec.delete_horizon_ms is not None else 0),
        "compression": int(spec.compression),
        "timestamp_type": int(spec.timestamp_type),
        "is_transactional": spec.is_transactional,
        "is_control": spec.is_control,
        "base_timestamp": spec.expected_base_timestamp,
        "max_timestamp": spec.expected_max_timestamp,
        "producer_id": spec.producer_id,
        "producer_epoch": spec.producer_epoch,
        "base_sequence": spec.base_sequence,
        "last_sequence": view["last_sequence"],
        "records_count": len(spec.records),
        "size_in_bytes": len(data),
        "records": [
            (r.offset, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers])
            for r in spec.expected_records()
        ],
        "control_types": [ControlKey.parse(r.key).type_id for r in spec.records] if spec.is_control else [],
    }


# --- ours -> kafka-python ---


@given(batch_specs())
def test_kafka_python_reads_any_batch_we_write(spec: BatchSpec) -> None:
    data = spec.build()
    assert kafka_python_batches(data) == [spec_view(spec, data)]


@given(segment_specs())
def test_kafka_python_reads_any_segment_we_write(specs: list[BatchSpec]) -> None:
    data = segment_bytes(specs)
    records = MemoryRecords(data)
    assert [view["base_offset"] for view in kafka_python_batches(data)] == [s.base_offset for s in specs]
    assert records.valid_bytes() == len(data)
    assert kafka_python_batches(data) == our_batches(data)


@pytest.mark.parametrize("codec", list(CompressionType), ids=[c.name for c in CompressionType])
def test_kafka_python_decompresses_every_codec_we_write(codec: CompressionType) -> None:
    records = [
        Record(
            10 + i, TS + i, f"key-{i % 3}".encode(), b"compressible value " * 20, (Header("i", bytes([i])),)
        )
        for i in range(50)
    ]
    data = build_batch(records, compression=codec, producer_id=1, producer_epoch=0, base_sequence=0)
    (view,) = kafka_python_batches(data)
    assert view["compression"] == int(codec)
    assert view["records"] == [
        (r.offset, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers]) for r in records
    ]


@pytest.mark.parametrize("kind", [ControlRecordType.COMMIT, ControlRecordType.ABORT])
def test_kafka_python_reads_our_end_transaction_markers(kind: ControlRecordType) -> None:
    data = build_end_transaction_marker(
        EndTransactionMarker(kind, 11), offset=77, timestamp=TS, producer_id=4242, producer_epoch=3
    )
    (batch,) = list(MemoryRecords(data))
    assert batch.validate_crc()
    assert batch.is_control_batch
    assert batch.is_transactional
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (4242, 3, -1)
    (record,) = list(batch)
    assert isinstance(record, ControlRecord)
    assert (record.offset, record.commit, record.abort) == (
        77,
        kind is ControlRecordType.COMMIT,
        kind is ControlRecordType.ABORT,
    )
    assert record.value == EndTransactionMarker(kind, 11).value_bytes()


def test_kafka_python_reads_our_delete_horizon_with_absolute_timestamps() -> None:
    source = RecordBatch.from_bytes(
        build_batch([Record(5, TS, b"a", b"1"), Record(6, TS + 3, b"a", None), Record(8, TS - 2, b"b", b"")])
    )
    data = rebuild_batch(source, source.records[1:], delete_horizon_ms=TS + DAY)
    (view,) = kafka_python_batches(data)
    assert view["attributes"] == 0x40
    assert view["base_timestamp"] == TS + DAY
    assert view["base_offset"] == 5
    assert view["last_offset_delta"] == 3
    assert [(o, t, v) for o, t, _, v, _ in view["records"]] == [(6, TS + 3, None), (8, TS - 2, b"")]


def test_kafka_python_reads_our_log_append_time() -> None:
    data = build_batch(
        [Record(0, TS, b"k", b"v"), Record(1, TS - 50, b"k", b"w")],
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        log_append_time=TS + 1234,
        compression=CompressionType.LZ4,
    )
    (view,) = kafka_python_batches(data)
    assert view["timestamp_type"] == 1
    assert [t for _, t, _, _, _ in view["records"]] == [TS + 1234, TS + 1234]


@pytest.mark.parametrize("codec", list(CompressionType), ids=[c.name for c in CompressionType])
def test_kafka_python_reads_our_empty_batch_headers(codec: CompressionType) -> None:
    source = RecordBatch.from_bytes(
        build_batch(
            [Record(20, TS, b"k", b"v"), Record(25, TS + 9, b"k", b"w")],
            compression=codec,
            producer_id=9,
            producer_epoch=2,
            base_sequence=40,
            is_transactional=True,
            partition_leader_epoch=6,
            delete_horizon_ms=TS + DAY,
        )
    )
    data = empty_batch_header(source.header)
    (view,) = kafka_python_batches(data)
    assert view["records"] == []
    assert view["records_count"] == 0
    assert view["size_in_bytes"] == 61
    assert (view["base_offset"], view["last_offset_delta"]) == (20, 5)
    assert (view["base_timestamp"], view["max_timestamp"]) == (-1, TS + 9)
    assert (view["producer_id"], view["producer_epoch"], view["base_sequence"]) == (9, 2, 40)
    assert view["last_sequence"] == 45
    assert view["attributes"] == 0x10
    assert view["partition_leader_epoch"] == 6


# --- kafka-python -> ours ---


def _kafka_python_inputs(spec: BatchSpec) -> list[KpRecord]:
    return [
        (r.offset - spec.base_offset, r.timestamp, r.key, r.value, [(h.key, h.value) for h in r.headers])
        for r in spec.records
    ]


def _kafka_python_build(spec: BatchSpec) -> bytes:
    data: bytes = golden.kafka_python_batch(
        _kafka_python_inputs(spec),
        base_offset=spec.base_offset,
        partition_leader_epoch=spec.partition_leader_epoch,
        compression=int(spec.compression),
        is_transactional=spec.is_transactional,
        producer_id=spec.producer_id,
        producer_epoch=spec.producer_epoch,
        base_sequence=spec.base_sequence,
        control=spec.is_control,
        log_append_time=spec.log_append_time,
    )
    return data


@given(batch_specs(delete_horizon=False))
def test_we_read_any_batch_kafka_python_writes(spec: BatchSpec) -> None:
    data = _kafka_python_build(spec)
    ours = our_view(RecordBatch.from_bytes(data))
    assert RecordBatch.from_bytes(data).is_valid()
    assert [ours] == kafka_python_batches(data)
    # and both agree with what was written (codec as kafka-python chose; last offset = last record's)
    assert ours["compression"] in (int(spec.compression), 0)
    expected = spec_view(
        BatchSpec(
            **{
                **spec.__dict__,
                "last_offset": spec.records[-1].offset,
                "compression": CompressionType(ours["compression"]),
            }
        ),
        data,
    )
    assert ours == expected


@pytest.mark.parametrize("codec", list(CompressionType), ids=[c.name for c in CompressionType])
def test_we_decompress_every_codec_kafka_python_writes(codec: CompressionType) -> None:
    inputs: list[KpRecord] = [
        (i, TS + i, f"key-{i % 3}".encode(), b"compressible value " * 20, [("i", bytes([i]))])
        for i in range(50)
    ]
    data = golden.kafka_python_batch(inputs, base_offset=300, compression=int(codec))
    batch = RecordBatch.from_bytes(data)
    assert batch.header.compression is codec  # the payload shrinks, so kafka-python really compressed it
    assert [(r.offset, r.timestamp, r.key, r.value) for r in batch.records] == [
        (300 + d, t, k, v) for d, t, k, v, _ in inputs
    ]


def test_kafka_python_skips_compression_that_does_not_help() -> None:
    data = golden.kafka_python_batch(
        [(0, TS, None, b"\x8a", [])], base_offset=0, compression=int(CompressionType.GZIP)
    )
    batch = RecordBatch.from_bytes(data)
    assert batch.header.compression is CompressionType.NONE
    assert batch.records == [Record(0, TS, None, b"\x8a")]


@given(batch_specs(codecs=(CompressionType.NONE,), delete_horizon=False))
def test_uncompressed_batches_are_byte_identical_to_kafka_python(spec: BatchSpec) -> None:
    last_record = spec.records[-1].offset
    ours = BatchSpec(**{**spec.__dict__, "last_offset": last_record}).build()
    assert ours.hex() == _kafka_python_build(spec).hex()


# --- golden files ---


def test_golden_files_are_what_the_generator_makes() -> None:
    files = golden.golden_files()
    assert sorted(files) == sorted(p.name for p in GOLDEN_DIR.glob("*.log"))
    for name, data in files.items():
        assert (GOLDEN_DIR / name).read_bytes() == data, (
            f"{name} is out of date: run tests/data/make_golden_v2.py"
        )


@pytest.mark.parametrize("name", sorted(p.name for p in GOLDEN_DIR.glob("*.log")))
def test_both_readers_agree_on_every_golden_file(name: str) -> None:
    data = (GOLDEN_DIR / name).read_bytes()
    assert our_batches(data) == kafka_python_batches(data)


def test_golden_kafka_python_uncompressed_batch() -> None:
    batch = RecordBatch.from_bytes((GOLDEN_DIR / "kafka-python-none.log").read_bytes())
    header = batch.header
    assert batch.is_valid()
    assert (header.base_offset, header.last_offset_delta, header.partition_leader_epoch) == (100, 5, 7)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (4242, 3, 17)
    assert (header.base_timestamp, header.max_timestamp, header.attributes) == (TS, TS + 10, 0)
    assert batch.records == [
        Record(100, TS, b"key-0", b"value-0", (Header("trace", b"abc"), Header("nullhdr", None))),
        Record(101, TS - 5, None, b""),
        Record(104, TS + 10, b"key-0", None),
        Record(105, TS + 3, "ключ".encode(), b"\x00\xff", (Header("ü", b""),)),
    ]
    # our builder writes the very same bytes
    ours = build_batch(
        batch.records, partition_leader_epoch=7, producer_id=4242, producer_epoch=3, base_sequence=17
    )
    assert ours == bytes(batch.raw)


def test_golden_kafka_python_zstd_transactional_batch() -> None:
    batch = RecordBatch.from_bytes((GOLDEN_DIR / "kafka-python-zstd-transactional.log").read_bytes())
    header = batch.header
    assert header.compression is CompressionType.ZSTD
    assert header.is_transactional
    assert not header.is_control
    assert (header.base_offset, header.last_offset, header.records_count) == (1000, 1019, 20)
    assert (header.producer_id, header.producer_epoch, header.base_sequence, header.last_sequence) == (
        4242,
        3,
        0,
        19,
    )
    assert [r.offset for r in batch.records] == list(range(1000, 1020))
    assert batch.records[7] == Record(
        1007, TS + 7, b"user-3", b"the same value again and again " * 4, (Header("seq", b"7"),)
    )


def test_golden_kafka_python_commit_marker() -> None:
    data = (GOLDEN_DIR / "kafka-python-commit-marker.log").read_bytes()
    (batch,) = list(iter_batches(data))
    header = batch.header
    assert header.is_control
    assert header.is_transactional
    assert header.attributes == 0x30
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (4242, 3, -1)
    (record,) = batch.records
    assert EndTransactionMarker.parse(record) == EndTransactionMarker(ControlRecordType.COMMIT, 9)
    # identical to our marker writer
    ours = build_end_transaction_marker(
        EndTransactionMarker(ControlRecordType.COMMIT, 9),
        offset=1020,
        timestamp=TS + 100,
        producer_id=4242,
        producer_epoch=3,
        partition_leader_epoch=2,
    )
    assert ours == data


def test_golden_kafka_python_log_append_time() -> None:
    data = (GOLDEN_DIR / "kafka-python-snappy-log-append-time.log").read_bytes()
    (batch,) = list(iter_batches(data))
    assert batch.header.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert batch.header.compression is CompressionType.SNAPPY
    assert batch.header.base_timestamp == TS  # the records' own first timestamp is still stored
    assert {r.timestamp for r in batch.records} == {TS + 777}
    assert [r.offset for r in iter_records(data)] == list(range(5000, 5010))


# --- varints ---


@given(st.integers(-(2**63), 2**63 - 1))
def test_varints_match_kafka_python(value: int) -> None:
    theirs = bytearray()
    kafka_util.encode_varint(value, theirs.append)
    assert encode_varint(value) == bytes(theirs)
    assert decode_varint(bytes(theirs), 0) == kafka_util.decode_varint(theirs, 0)
