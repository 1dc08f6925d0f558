"""Issue 38, point 1 and what the attack could not reach: the reader over decompression bombs and tampered
segments, whole and in byte spans (``maxBytesPerPartition``), on a local lake and on S3.

* Arrow batches hold at most ``DEFAULT_BATCH_BYTES`` of keys and values (or one record): what a Spark task's
  JVM takes in at once is bounded (before, one batch held every record of a segment's task).
* A span of bombs reads as the unsplit segment does; a bomb past the limit inside a span, and a damaged
  batch inside a span, are one named error naming the object and the byte position in it.
* A wrong ``.index`` (shifted, pointing inside batches, with offsets too small or too large, stale) changes
  no row even when the manifest pins it (a pin is recorded only for an index checked against the ``.log``:
  ``tests/reading/test_crafted_index.py``; here it is forged, to test what stands behind it): the span's
  frames, CRC-32Cs and offsets are checked before any row is given, and a span that fails them is read from
  the whole segment (docs/reading.md, "Large segments and byte ranges")."""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

import pytest
from kafka_segments.errors import CorruptRecordError, DecompressionLimitError
from kafka_segments.lake.layout import index_keys
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.lake.scan import sha256_hex
from kafka_segments.reading import read_lake
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.offset_index import ENTRY
from kafka_segments.storage import ObjectStore
from kit import FakeClock
from unit.bad_batches import zstd_bomb

from reading.split_helpers import TP, commit_events, event_batches, rows
from reading.test_split_read import _recommit

pytestmark = pytest.mark.lake

TS = 1_763_700_000_000
BOMB = 20 << 20
BATCH_BYTES = 64 << 20
"""``reading.segment_read.DEFAULT_BATCH_BYTES``: keys and values per Arrow batch."""


def bombs(count: int, *, first: int = 0) -> list[bytes]:
    """``count`` zstd batches of one record of ``BOMB`` zero bytes, at offsets ``first``..."""
    one = build_batch([Record(0, TS, b"k", bytes(BOMB))], compression=CompressionType.ZSTD)
    return [struct.pack(">q", first + i) + one[8:] for i in range(count)]


def value_bytes(batch: Any) -> int:
    return sum(len(value) for value in batch.column("value").to_pylist() if value is not None)


def test_arrow_batches_hold_a_bounded_amount_of_records(store: ObjectStore) -> None:
    commit_events(store, bombs(8), cut=5, log_start=0, clock=FakeClock())  # 5 bombs (100 MiB) in a segment
    batches = list(read_lake(store, {"subscribe": TP.topic}))
    assert sum(batch.num_rows for batch in batches) == 8
    sizes = [value_bytes(batch) for batch in batches]
    assert sum(sizes) == 8 * BOMB
    assert max(sizes) <= BATCH_BYTES, [size >> 20 for size in sizes]


def test_a_split_segment_of_bombs_reads_as_the_unsplit_one(store: ObjectStore) -> None:
    commit_events(store, bombs(13), cut=12, log_start=0, clock=FakeClock())
    options = {"subscribe": TP.topic}
    want = [(row["offset"], len(row["value"])) for row in rows(store, options)]  # type: ignore[arg-type]
    split = rows(store, {**options, "maxBytesPerPartition": "1500"})
    assert [(row["offset"], len(row["value"])) for row in split] == want  # type: ignore[arg-type]
    assert want == [(offset, BOMB) for offset in range(13)]


def test_a_bomb_inside_a_span_is_one_named_error(store: ObjectStore) -> None:
    """The second segment: two bombs under the limit, one inflating past it (300 MiB), one more; read in
    spans, the one past the limit is ``DecompressionLimitError`` at its byte position in the segment."""
    events = event_batches(3, count=60)
    last = 1 + max(struct.unpack_from(">q", b)[0] + struct.unpack_from(">i", b, 23)[0] for b in events)
    under = bombs(2, first=last)
    past = zstd_bomb(300 << 20, base_offset=last + 2)
    batches = [*events, *under, past, *bombs(1, first=last + 3)]
    manifest = commit_events(store, batches, cut=len(events), log_start=0, clock=FakeClock())
    segment = manifest.partitions[0].segments[1]
    position = sum(len(batch) for batch in under)
    with pytest.raises(DecompressionLimitError) as caught:
        rows(store, {"subscribe": TP.topic, "maxBytesPerPartition": "3000"})
    assert caught.value.segment.endswith(segment.key)
    assert f"at byte {position} (offset {last + 2}): zstd records inflate past the decompression limit" in (
        str(caught.value)
    )


def test_a_damaged_batch_inside_a_span_is_one_named_error_on_both_backends(store: ObjectStore) -> None:
    commit_events(store, event_batches(7, count=300), cut=200, log_start=5, clock=FakeClock())
    state = resolve_manifest(store).partitions[0]
    segment = state.segments[0]
    damaged = bytearray(store.get(segment.key))
    damaged[segment.size // 2] ^= 0xFF
    etag = store.put(segment.key, bytes(damaged)).etag
    pinned = dataclasses.replace(segment, etag=etag, sha256=sha256_hex(bytes(damaged)))
    _recommit(store, dataclasses.replace(state, segments=(pinned, *state.segments[1:])))
    with pytest.raises(CorruptRecordError, match=segment.key.split("/")[-1]):
        rows(store, {"subscribe": TP.topic, "maxBytesPerPartition": "3000"})


def test_a_wrong_index_changes_no_row_on_both_backends(store: ObjectStore) -> None:
    commit_events(store, event_batches(7, count=300), cut=200, log_start=5, clock=FakeClock())
    options = {"subscribe": TP.topic}
    want = rows(store, options)
    committed = {"kafka.isolation.level": "read_committed"}
    want_committed = rows(store, {**options, **committed})
    state = resolve_manifest(store).partitions[0]
    segment = state.segments[0]
    index_key = index_keys(segment.key)[0]
    entries = list(ENTRY.iter_unpack(store.get(index_key)))
    lies = {
        "shifted positions": [(o, p + 1) for o, p in entries],
        "positions inside batches": [(o, p + 70) for o, p in entries],
        "offsets too small": [(i, p) for i, (_, p) in enumerate(entries)],
        "offsets too large": [(o + 50, p) for o, p in entries],
        "a stale prefix": entries[: len(entries) // 3],
        "every other position halved": [(o, p // 2 if i % 2 else p) for i, (o, p) in enumerate(entries)],
        "garbage": [(7, 5), (3, 100_000_000)],
    }
    for name, bad in lies.items():
        lie = b"".join(ENTRY.pack(o, p) for o, p in sorted(set(bad)))
        store.put(index_key, lie)
        # pinned as if it had been checked: the span checks are what stands between it and the rows
        pinned = dataclasses.replace(segment, index_sha256=sha256_hex(lie))
        _recommit(store, dataclasses.replace(state, segments=(pinned, *state.segments[1:])))
        split = {**options, "maxBytesPerPartition": "3000"}
        assert rows(store, split) == want, name
        assert rows(store, {**split, **committed}) == want_committed, name
