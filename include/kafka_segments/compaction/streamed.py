"""A segment decoded, and its keys grouped, while it is being read (``StreamedSegment``).

A worker reading a segment from an object store hands each chunk as it arrives
(``get_into(progress=streamed.feed)``), so decoding (``records.fast.StreamDecoder``) and key grouping
(``records.fast.SpanGroups``, while the chunk is still in the cache) overlap the transfer. ``finish`` gives
what ``decoded.decode_segment`` would (``tests/unit/test_streamed_segment.py``), also when the decoder had to
decode the whole segment at the end (damage, legacy entries, no room in the arena)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction.decoded_segment import (
    DecodedSegment,
    decode_whole,
    decoded_segment,
    identify_keys,
)
from kafka_segments.compaction.source import SourceSegment
from kafka_segments.records.fast import (
    DEFAULT_STEP_BYTES,
    ArenaUse,
    KeyIdentities,
    RecordColumns,
    SpanGroups,
    StreamDecoder,
    key_digests,
)

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = ["StreamedSegment"]

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
U64 = npt.NDArray[np.uint64]


class StreamedSegment:
    """Decodes the segment being read into ``buffer`` and groups its keys, step by step (module docstring)."""

    def __init__(
        self,
        buffer: U8,
        *,
        name: str,
        arena: U8 | None = None,
        step_bytes: int = DEFAULT_STEP_BYTES,
        verify_crc: bool = False,
        max_batch_bytes: int | None = None,
        arena_use: ArenaUse = ArenaUse.KEEP,
    ) -> None:
        """``verify_crc``: check every batch's CRC-32C as it is decoded (``StreamDecoder``); ``finish``
        then raises ``CorruptRecordError`` for a bad one. ``max_batch_bytes``: as ``decode_record_columns``
        (``finish`` raises ``DecompressionLimitError``). ``arena_use``: as ``StreamDecoder``'s; with
        ``REUSE`` the cleaning pass decodes the steps again (``DecodedSegment.steps``); the keys of control
        records, which both passes read, are kept by row (``DecodedSegment.control_keys``)."""
        self._buffer = buffer
        self._name = name
        self._decoder = StreamDecoder(
            buffer,
            segment=name,
            arena=arena,
            step_bytes=step_bytes,
            on_step=self._group_keys,
            verify_crc=verify_crc,
            max_batch_bytes=max_batch_bytes,
            arena_use=arena_use,
        )
        self._arena = arena
        self._max_batch_bytes = max_batch_bytes
        self._groups: SpanGroups | None = SpanGroups(1024)
        self._ids: list[I64] = []
        self._digests: list[tuple[U64, U64]] = []  # the MD5 of each step's new ids
        self._control_keys: dict[int, bytes | None] = {}  # by row: read later, with or without records

    def feed(self, available: int) -> None:
        """``buffer[:available]`` has arrived (an ``ObjectStore.get_into`` progress callback)."""
        self._decoder.feed(available)

    def finish(self, size: int) -> DecodedSegment:
        """What ``decode_segment`` gives for ``buffer[:size]``, the whole segment, read and verified.

        Raises:
            CorruptRecordError, UnsupportedCodecError: as ``decode_record_columns`` over the whole segment.
        """
        columns = self._decoder.finish(size)
        data = self.data(size)
        ids, digests, controls = self._ids, self._digests, self._control_keys
        self._release()
        steps = self._decoder.record_steps
        grouped = self._decoder.steps != 0 and self._decoder.steps == len(ids)
        if steps is not None and not grouped:  # no records to identify the keys with: decode them again
            return decode_whole(
                data, segment=self._name, arena=self._arena, max_batch_bytes=self._max_batch_bytes
            )
        if grouped:
            id_hi = np.concatenate([hi for hi, _ in digests])
            id_lo = np.concatenate([lo for _, lo in digests])
            keys = KeyIdentities(np.concatenate(ids), id_hi, id_lo)
            return decoded_segment(columns, keys, data=data, steps=steps, control_keys=controls)
        return decoded_segment(columns, identify_keys(columns), data=data)

    def _release(self) -> None:
        """Let go of the grouping state (its table is ~32 bytes per slot). A second ``finish`` finds no
        grouped steps and identifies the keys again, as ``decode_segment`` does."""
        self._groups, self._ids, self._digests, self._control_keys = None, [], [], {}

    def data(self, size: int) -> memoryview:
        """The segment's bytes, ``buffer[:size]``."""
        return memoryview(cast("Buffer", self._buffer))[:size]  # numpy's stubs: buffer protocol from 3.12

    def source(self, size: int, *, base_offset: int, last_modified_ms: int = 0) -> SourceSegment:
        """The finished segment as a round's input, carrying what was decoded."""
        decoded = self.finish(size)
        data = self.data(size)
        return SourceSegment(
            self._name, base_offset, data, last_modified_ms=last_modified_ms, decoded=decoded
        )

    def _group_keys(self, step: RecordColumns, first_record: int) -> None:
        groups = self._groups
        if groups is None:  # finished: steps no longer count (``finish`` decodes the whole segment)
            return
        keyed = step.key_length >= 0
        distinct_before = groups.distinct
        if keyed.all():
            rows = None
            starts, lengths = step.key_start, step.key_length
        else:
            rows = np.flatnonzero(keyed)
            starts, lengths = step.key_start[rows], step.key_length[rows]
        ids = groups.add(step.buffer, starts, lengths, first_record)
        if rows is None:
            key_id = ids
        else:
            key_id = np.full(len(step), -1, dtype=np.int64)
            key_id[rows] = ids
            new = groups.firsts[distinct_before:]  # first rows of new ids: step rows, not subset rows
            new[:] = first_record + rows[new - first_record]
        self._ids.append(key_id)
        for row in np.flatnonzero(step.is_control).tolist():  # a marker's key: version and type
            self._control_keys[first_record + row] = step.key(row)
        firsts = groups.firsts[distinct_before:] - first_record  # while the step's records are here
        self._digests.append(key_digests(step.buffer, step.key_start[firsts], step.key_length[firsts]))
