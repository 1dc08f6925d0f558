"""Every decode of records is bounded, not only the cleaner's:
``records.compression.MAX_INFLATED_BATCH_BYTES`` (256 MiB) is the default limit of the reference reader
(``RecordBatch.records``), of a legacy wrapper's message set (decompressed when the entry is read, so by
every header scan too) and of the fast decode. A bomb is one ``DecompressionLimitError`` naming the segment,
byte position and offset, raised without inflating it whole."""

from __future__ import annotations

import time
import zlib

import pytest
from kafka_segments.errors import DecompressionLimitError
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.builder import build_batch
from kafka_segments.records.compression import MAX_INFLATED_BATCH_BYTES
from kafka_segments.records.fast import decode_record_columns
from kafka_segments.records.log import iter_batches, scan_headers
from unit.bad_batches import records, zstd_bomb
from unit.compaction_helpers import legacy_message

pytestmark = pytest.mark.unit

NAME = "orders-0/00000000000000000000.log"


def gzip_wrapper_bomb(offset: int, inflated: int) -> bytes:
    """A v1 gzip wrapper whose message set inflates to ``inflated`` zero bytes (no valid messages in it)."""
    stream = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = bytes(1 << 20)
    parts = [stream.compress(chunk) for _ in range(inflated >> 20)]
    value = b"".join((*parts, stream.flush()))
    return legacy_message(1, offset, None, value, attributes=int(CompressionType.GZIP))


def test_the_default_is_the_cleaners_default() -> None:
    from kafka_segments.config.model import DEFAULT_MAX_BATCH_DECOMPRESSED_BYTES

    assert MAX_INFLATED_BATCH_BYTES == DEFAULT_MAX_BATCH_DECOMPRESSED_BYTES == 256 << 20


def test_the_reference_reader_refuses_a_bomb_by_default() -> None:
    first = build_batch(records(0, 2))
    entries = list(iter_batches(first + zstd_bomb(1 << 30, base_offset=2), segment=NAME))
    assert len(entries[0].records) == 2
    started = time.perf_counter()
    with pytest.raises(DecompressionLimitError) as info:
        _ = entries[1].records
    assert time.perf_counter() - started < 5
    error = info.value
    assert (error.segment, error.position, error.offset, error.limit) == (NAME, len(first), 2, 256 << 20)
    assert "zstd records inflate past the decompression limit of 268435456 bytes" in str(error)


def test_the_reference_reader_takes_a_smaller_limit_and_none_for_no_limit() -> None:
    data = zstd_bomb(4 << 20)
    (entry,) = iter_batches(data, segment=NAME, max_inflated=1 << 20)
    with pytest.raises(DecompressionLimitError, match="limit of 1048576 bytes"):
        _ = entry.records
    (unbounded,) = iter_batches(data, segment=NAME, max_inflated=None)
    assert len(unbounded.records_payload()) == 4 << 20


def test_the_fast_decode_refuses_a_bomb_by_default() -> None:
    with pytest.raises(DecompressionLimitError) as info:
        decode_record_columns(zstd_bomb(1 << 30), segment=NAME)
    assert info.value.limit == 256 << 20


def test_a_legacy_wrapper_bomb_is_refused_when_its_entry_is_read() -> None:
    first = legacy_message(1, 0, b"k", b"v")
    data = first + gzip_wrapper_bomb(1, 300 << 20)
    for read in (
        lambda: list(scan_headers(data, segment=NAME)),
        lambda: list(iter_batches(data, segment=NAME)),
        lambda: decode_record_columns(data, segment=NAME),
    ):
        with pytest.raises(DecompressionLimitError) as info:
            read()
        error = info.value
        assert (error.segment, error.position, error.offset) == (NAME, len(first), 1)
        assert "the wrapper's message set: gzip records inflate past the decompression limit" in str(error)


def test_a_legacy_wrapper_under_the_limit_reads_as_before() -> None:
    from kafka_segments.records.compression import compress

    inner = legacy_message(1, 0, b"a", b"1") + legacy_message(1, 1, b"b", b"2")
    value = compress(CompressionType.GZIP, inner, magic=1)
    wrapper = legacy_message(1, 1, None, value, attributes=int(CompressionType.GZIP))
    (entry,) = iter_batches(wrapper, segment=NAME, max_inflated=len(inner))
    assert [(r.offset, r.key) for r in entry.records] == [(0, b"a"), (1, b"b")]
    with pytest.raises(DecompressionLimitError):
        list(iter_batches(wrapper, segment=NAME, max_inflated=len(inner) - 1))
