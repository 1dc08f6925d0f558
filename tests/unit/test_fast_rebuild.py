"""The column rebuild path (``records.fast.rebuild_batches``) and the round's numba key path are
byte-identical to the per-record path they replace:

* ``rebuild_batches`` / ``rebuild_from_columns`` equal ``builder.rebuild_batch`` over the same retained
  records (every codec, headers, tombstones, LogAppendTime, control batches, an existing or a new delete
  horizon, records dropped before the first kept one so the base timestamp moves);
* what ``DefaultRecord.writeTo`` normalises is normalised: a source record's attributes byte and non-minimal
  varints are written as Kafka writes them; a header key that is not UTF-8 (read as U+FFFD by Kafka) goes to
  the per-record path;
* the numba MD5 equals ``hashlib.md5``;
* a whole round (``clean_round``) gives the same result with every fast path switched off (the fates then
  decided record by record by ``decisions.decide_record``).
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any
from unittest import mock

import crc32c
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_segments.compaction import assembly, batch_kinds, filtering
from kafka_segments.compaction.batch_decisions import deletes_retained
from kafka_segments.compaction.decisions import decide_record
from kafka_segments.compaction.decoded import DecodedSegment
from kafka_segments.compaction.fates import FATES
from kafka_segments.compaction.results import RoundContext
from kafka_segments.compaction.rewrite import RoundResult, clean_round
from kafka_segments.compaction.source import SourceSegment
from kafka_segments.records import RecordBatch, build_batch
from kafka_segments.records.batch import ATTRIBUTES_OFFSET, CRC_OFFSET, HEADER, BatchHeader
from kafka_segments.records.builder import rebuild_batch
from kafka_segments.records.fast import (
    RecordColumns,
    decode_record_columns,
    digest_bytes,
    key_digests,
    rebuild_batches,
)
from kafka_segments.records.fast import rebuild as fast_rebuild
from kafka_segments.records.log import iter_batches
from kafka_segments.records.record import Header, Record
from unit.compaction_helpers import NOW
from unit.strategies import segment_bytes, segment_specs, timestamps
from unit.test_compaction_properties import CONFIG, build, operations

pytestmark = pytest.mark.unit


def rebuild_from_columns(
    header: BatchHeader,
    columns: RecordColumns,
    rows: npt.NDArray[np.int64],
    *,
    delete_horizon_ms: int | None = None,
) -> bytes | None:
    """``rebuild_batches`` of the one batch ``header`` whose retained records are ``rows`` of ``columns``."""
    keep = np.zeros(len(columns), dtype=np.bool_)
    keep[rows] = True
    batch = int(columns.batch_index[rows[0]])
    assert columns.batches.header(batch) == header
    return rebuild_batches(columns, keep, [batch], [delete_horizon_ms])[0]


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def per_record(data: bytes, keep: list[bool], horizon: int | None) -> list[bytes | None]:
    """``builder.rebuild_batch`` of every batch with at least one kept record (None for the others)."""
    out: list[bytes | None] = []
    row = 0
    for batch in iter_batches(data, verify_crc=True):
        assert isinstance(batch, RecordBatch)
        records = batch.records
        kept = [r for r, k in zip(records, keep[row : row + len(records)], strict=True) if k]
        row += len(records)
        out.append(rebuild_batch(batch, kept, delete_horizon_ms=horizon) if kept else None)
    return out


@FAST
@given(
    specs=segment_specs(max_batches=4),
    data=st.data(),
    horizon=st.none() | timestamps,
)
def test_rebuilt_batches_equal_the_per_record_builder(
    specs: list, data: st.DataObject, horizon: int | None
) -> None:
    segment = segment_bytes(specs)
    columns = decode_record_columns(segment)
    keep = data.draw(st.lists(st.booleans(), min_size=len(columns), max_size=len(columns)))
    expected = per_record(segment, keep, horizon)
    headers = columns.batches.to_headers()
    bounds = np.searchsorted(columns.batch_index, np.arange(len(headers) + 1)).tolist()
    chosen = [i for i in range(len(headers)) if expected[i] is not None]
    mask = np.array(keep, dtype=np.bool_)
    rebuilt = rebuild_batches(columns, mask, chosen, [horizon] * len(chosen))
    assert rebuilt == [expected[i] for i in chosen]
    for i in chosen:
        rows = np.arange(bounds[i], bounds[i + 1])[mask[bounds[i] : bounds[i + 1]]]
        single = rebuild_from_columns(headers[i], columns, rows, delete_horizon_ms=horizon)
        assert single == expected[i]


def test_dropping_the_first_record_moves_the_base_timestamp_and_re_encodes_the_deltas() -> None:
    records = [Record(10, 1_000, b"a", b"1"), Record(11, 1_000_000_000, b"b", b"2")]
    data = build_batch(records)
    columns = decode_record_columns(data)
    header = columns.batches.header(0)
    rebuilt = rebuild_from_columns(header, columns, np.array([1]))
    assert rebuilt == rebuild_batch(RecordBatch.from_bytes(data), records[1:])
    assert rebuilt is not None
    out = RecordBatch.from_bytes(rebuilt)
    assert (out.header.base_timestamp, out.header.base_offset, out.header.last_offset) == (
        1_000_000_000,
        10,
        11,
    )
    assert out.records == records[1:]


def _raw_batch(payload: bytes, *, count: int, base_offset: int = 0, base_timestamp: int = 0) -> bytes:
    """An uncompressed v2 batch around a hand-written records stream."""
    buf = bytearray(HEADER.size + len(payload))
    HEADER.pack_into(
        buf,
        0,
        base_offset,
        len(buf) - 12,
        -1,
        2,
        0,
        0,
        count - 1,
        base_timestamp,
        base_timestamp,
        -1,
        -1,
        -1,
        count,
    )
    buf[HEADER.size :] = payload
    buf[CRC_OFFSET:ATTRIBUTES_OFFSET] = struct.pack(">I", crc32c.crc32c(bytes(buf[ATTRIBUTES_OFFSET:])))
    return bytes(buf)


def test_record_attributes_and_non_minimal_varints_are_written_as_kafka_writes_them() -> None:
    # attributes 0x05; key length 3 as a 2-byte varint (0x86 0x00); value b"v"; no headers
    body = b"\x05" + b"\x00" + b"\x00" + b"\x86\x00" + b"key" + b"\x02" + b"v" + b"\x00"
    data = _raw_batch(bytes([len(body) * 2]) + body, count=1)
    columns = decode_record_columns(data)
    rebuilt = rebuild_from_columns(columns.batches.header(0), columns, np.array([0]))
    expected = rebuild_batch(RecordBatch.from_bytes(data), [Record(0, 0, b"key", b"v")])
    assert rebuilt == expected
    assert rebuilt is not None
    assert len(rebuilt) == len(data) - 1  # the key length shrank to one byte
    assert rebuilt[HEADER.size + 1] == 0  # the record's attributes byte


def test_a_header_key_that_is_not_utf8_takes_the_per_record_path() -> None:
    record = Record(0, 5, b"k", b"v", (Header("ab", b"x"),))
    data = bytearray(build_batch([record]))
    at = data.index(b"ab", HEADER.size)
    data[at] = 0xFF
    data[CRC_OFFSET:ATTRIBUTES_OFFSET] = struct.pack(">I", crc32c.crc32c(bytes(data[ATTRIBUTES_OFFSET:])))
    columns = decode_record_columns(bytes(data))
    header = columns.batches.header(0)
    assert rebuild_from_columns(header, columns, np.array([0])) is None
    assert rebuild_batches(columns, np.array([True]), [0], [None]) == [None]
    slow = RecordBatch.from_bytes(rebuild_batch(RecordBatch.from_bytes(bytes(data)), [columns.record(0)]))
    assert slow.records[0].headers == (Header("\ufffdb", b"x"),)


@FAST
@given(
    pool=st.lists(st.binary(max_size=200), min_size=1, max_size=12),
    picks=st.lists(st.integers(0, 11), min_size=1, max_size=40),
)
def test_the_numba_md5_is_hashlib_md5_with_or_without_grouping_equal_keys(
    pool: list[bytes], picks: list[int]
) -> None:
    keys = [pool[i % len(pool)] for i in picks]  # repeated keys, as in a compacted topic
    buffer = np.frombuffer(b"".join(keys) + b"\0", dtype=np.uint8)
    lengths = np.array([len(k) for k in keys], dtype=np.int32)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    expected = [hashlib.md5(k).digest() for k in keys]
    hi, lo = key_digests(buffer, starts, lengths)
    assert digest_bytes(hi, lo) == expected


def _reference_fates(
    segment: SourceSegment, kinds: Any, decoded: DecodedSegment, context: RoundContext
) -> npt.NDArray[np.int8]:
    """``filtering._record_fates`` record by record, by the reference rule ``decisions.decide_record``."""
    columns = decoded.columns
    discard = kinds.discard | (kinds.retention == filtering._DELETE)
    deletes = deletes_retained(
        columns.batches,
        now_ms=context.now_ms,
        segment_last_modified_ms=segment.last_modified_ms,
        legacy_horizon_ms=context.legacy_horizon_ms,
    )
    decisions = [
        decide_record(
            columns.record(row),
            is_control=bool(columns.is_control[row]),
            discard_records=bool(discard[batch]),
            offset_map=context.offset_map,
            deletes_retained=bool(deletes[batch]),
        )
        for row, batch in enumerate(columns.batch_index.tolist())
    ]
    return np.array([FATES.index(decision) for decision in decisions], dtype=np.int8)


def _round(ops: list[tuple[object, ...]]) -> RoundResult:
    random_log = build(ops)
    segments = random_log.log.segments()
    return clean_round(segments, first_dirty=0, end_offset=random_log.end, config=CONFIG, now_ms=NOW)


@FAST
@given(ops=st.lists(operations, min_size=1, max_size=30))
def test_batches_rebuilt_part_by_part_through_one_buffer_are_the_same_bytes(
    ops: list[tuple[object, ...]],
) -> None:
    whole = _round(ops)
    with mock.patch.object(fast_rebuild, "PART_BYTES", 64):  # every batch a part of its own
        parts = _round(ops)
    assert parts == whole


@FAST
@given(ops=st.lists(operations, min_size=1, max_size=30))
def test_a_round_equals_the_round_with_every_fast_path_switched_off(ops: list[tuple[object, ...]]) -> None:
    fast = _round(ops)
    with (
        mock.patch.object(
            assembly, "rebuild_batches", lambda columns, keep, rows, horizons: [None] * len(rows)
        ),
        mock.patch.object(filtering, "_record_fates", _reference_fates),
        mock.patch.object(batch_kinds, "plain_batches", lambda table: np.zeros(len(table), dtype=np.bool_)),
    ):
        slow = _round(ops)
    assert fast == slow
