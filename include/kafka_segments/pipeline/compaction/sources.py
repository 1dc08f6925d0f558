"""How a lake round reads its segments: plainly (``plain_source``: ``lake.reader.read_segment``, sha256
checked), or decoded and its keys grouped while they arrive (``streamed_source``, ``compaction.streamed``).

A streamed read asks for the manifest's object version (``If-Match`` its etag) and checks what arrives the way
Kafka checks a fetch: every batch's CRC-32C as it is decoded, then the manifest entry's last offset, counts
and timestamps against the decoded headers. That replaces the sha256 of the whole segment, the dearest step of
the read. When any of it fails, or the records cannot be decoded, the segment is read again as
``plain_source`` reads it: results and errors are then exactly those of a plain read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import cast

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction.source import SourceSegment
from kafka_segments.compaction.streamed import StreamedSegment
from kafka_segments.errors import CorruptRecordError, PreconditionFailedError, UnsupportedCodecError
from kafka_segments.lake.reader import map_segment_version, read_segment, read_segment_version_into
from kafka_segments.lake.scan import HeaderFacts, header_facts
from kafka_segments.records.fast import ArenaPrefaulter, ArenaUse
from kafka_segments.state import SegmentEntry
from kafka_segments.storage.base import PROGRESS_CHUNK_BYTES, MappingStore, ObjectStore
from kafka_segments.storage.buffers import BufferTooSmallError

__all__ = ["ARENA_PER_STORED_BYTE", "plain_source", "streamed_source"]

U8 = npt.NDArray[np.uint8]

ARENA_PER_STORED_BYTE = 6
"""Arena bytes reserved per stored byte of a segment decoded while read: room for batches compressed ~5x
(the arena is ``np.empty``: pages never written cost no memory). A segment whose records need more is
decoded by the round instead (same result)."""


def plain_source(store: ObjectStore, entry: SegmentEntry) -> SourceSegment:
    """The segment's bytes, as the manifest describes them (sha256 checked), for the round to decode."""
    data = read_segment(store, entry)
    return SourceSegment(entry.key, entry.base_offset, data, last_modified_ms=entry.last_modified_ms)


def streamed_source(
    store: ObjectStore,
    entry: SegmentEntry,
    *,
    buffer: U8 | None = None,
    arena: U8 | None = None,
    max_batch_bytes: int | None = None,
) -> SourceSegment:
    """The segment decoded, and its keys grouped, while it is read (module docstring).

    ``buffer`` (at least ``entry.size`` bytes) and ``arena`` (decompressed records) are allocated for the
    segment unless given: a worker that reads segment after segment may keep its own. The records of
    compressed batches are inflated step after step over one another at the arena's start
    (``records.fast.ArenaUse.REUSE``) and inflated again by the cleaning pass: a round touches one step's
    worth of the arena, not the segment's records (the markers' keys are kept). A buffer
    allocated here has its pages faulted in on a helper thread ahead of the transfer
    (``records.fast.ArenaPrefaulter``). Without ``buffer``, a store that maps its
    objects (a local lake) hands over the file's bytes mapped instead of copied
    (``lake.reader.map_segment_version``), decoded step by step all the same. ``max_batch_bytes``: as
    ``decode_record_columns`` (a batch past it leaves the segment to the round, which refuses it).

    Raises:
        SegmentObjectMismatchError, ObjectStoreError: as ``plain_source``.
    """
    if arena is None:
        arena = _reserve_arena(entry.size)
    try:
        mapped = map_segment_version(store, entry) if buffer is None else None
        filling = None
        if mapped is not None:
            buffer = np.frombuffer(mapped.data, dtype=np.uint8)
        elif buffer is None:
            buffer = _reserve_buffer(entry.size)
            if buffer is None:  # no room for the size the manifest records: read_segment compares it
                return plain_source(store, entry)
            filling = ArenaPrefaulter(buffer)  # fresh memory: its pages faulted in ahead of the transfer
        reading = StreamedSegment(
            buffer,
            name=entry.key,
            arena=arena,
            verify_crc=True,
            max_batch_bytes=max_batch_bytes,
            arena_use=ArenaUse.REUSE,
        )
        try:
            if mapped is None:
                progress = reading.feed if filling is None else _filled(filling, reading)
                data = read_segment_version_into(store, entry, buffer, progress=progress)
            else:
                data = _feed_mapped(mapped.data, reading)
            decoded = reading.finish(entry.size)
        finally:
            if filling is not None:
                filling.stop()
    except (PreconditionFailedError, BufferTooSmallError, CorruptRecordError, UnsupportedCodecError):
        return plain_source(store, entry)
    if header_facts(decoded.columns.batches) != HeaderFacts.of_entry(entry):
        return plain_source(store, entry)
    if mapped is not None and not cast("MappingStore", store).mapped_unchanged(mapped):
        return plain_source(store, entry)  # rewritten in place while decoded: read the manifest's bytes
    plain = SourceSegment(entry.key, entry.base_offset, data, last_modified_ms=entry.last_modified_ms)
    return replace(plain, decoded=decoded)


def _filled(filling: ArenaPrefaulter, reading: StreamedSegment) -> Callable[[int], None]:
    """A read's progress callback: the buffer's next pages faulted in, then the bytes so far decoded."""

    def progress(available: int) -> None:
        filling.advance(available)
        reading.feed(available)

    return progress


def _feed_mapped(data: memoryview, reading: StreamedSegment) -> memoryview:
    """Hand a mapped segment to ``reading`` in the steps a read would (each chunk decoded and its keys
    grouped while its pages are fresh in the cache)."""
    for end in range(PROGRESS_CHUNK_BYTES, len(data) + PROGRESS_CHUNK_BYTES, PROGRESS_CHUNK_BYTES):
        reading.feed(min(end, len(data)))
    return data


def _reserve_buffer(size: int) -> U8 | None:
    """A buffer of ``size`` bytes, or ``None`` where memory or the address space refuses it (a manifest's
    ``size`` far beyond its object's: ``plain_source`` then refuses it naming both sizes)."""
    try:  # only the pages written cost memory
        return np.empty(size, dtype=np.uint8)
    except MemoryError:
        return None


def _reserve_arena(size: int) -> U8 | None:
    """An arena for a segment of ``size`` stored bytes, or ``None`` where the address space refuses it
    (e.g. ``spark.executor.pyspark.memory`` sets RLIMIT_AS): compressed batches are then decoded later."""
    try:  # only the pages written cost memory, but an address-space limit counts them all
        return np.empty(ARENA_PER_STORED_BYTE * size, dtype=np.uint8)
    except MemoryError:
        return None
