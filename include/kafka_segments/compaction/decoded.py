"""The decoded segments of one round, kept between the map pass and the cleaning pass when memory allows.

Kafka's cleaner decodes every dirty segment twice (``buildOffsetMap``, then ``cleanSegments``); keeping its
record columns and key MD5s from the first pass changes no decision, only the work. The cache is bounded by a
byte budget, and a segment that does not fit is simply decoded again, as in Kafka."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction.decoded_segment import DecodedSegment, decode_whole
from kafka_segments.compaction.source import SourceSegment

DEFAULT_BUDGET_BYTES = 2 << 30
"""Decoded bytes a round may keep between its passes (2 GiB: one 1 GiB segment of highly compressed data)."""

U8 = npt.NDArray[np.uint8]


class DecodedSegments:
    """Decodes segments (columns and key digests) for a round, keeping them up to ``budget_bytes``."""

    def __init__(
        self,
        *,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        arena: U8 | None = None,
        max_batch_bytes: int | None = None,
    ) -> None:
        """``arena``: a reusable buffer to decompress one segment into (``decode_record_columns(arena=)``);
        the first compressed segment that fits uses it, the others get fresh memory. ``max_batch_bytes``:
        the most one compressed batch may inflate to (``DecompressionLimitError`` past it)."""
        self._max_batch_bytes = max_batch_bytes
        self._budget = budget_bytes
        self._used = 0
        self._kept: dict[tuple[str, int, int], DecodedSegment] = {}
        self._arena = arena

    def get(self, segment: SourceSegment) -> DecodedSegment:
        """The segment decoded (kept from an earlier call, or decoded now and kept if it fits).

        Raises:
            CorruptRecordError: a damaged batch, ``DecompressionLimitError`` included (as ``decode_segment``).
        """
        key = (segment.name, segment.base_offset, id(segment.data))
        found = self._kept.get(key)
        if found is not None:
            return found
        decoded = decode_segment(segment, arena=self._arena, max_batch_bytes=self._max_batch_bytes)
        if self._arena is not None and np.may_share_memory(decoded.columns.buffer, self._arena):
            self._arena = None  # in use until the round ends
        size = decoded.nbytes
        if self._used + size <= self._budget:
            self._kept[key] = decoded
            self._used += size
        return decoded


def decode_segment(
    segment: SourceSegment, *, arena: U8 | None = None, max_batch_bytes: int | None = None
) -> DecodedSegment:
    """The record columns of ``segment`` (CRCs not verified, as the cleaner) and the MD5 of every key — its
    own ``decoded`` when it has one (``arena``, ``max_batch_bytes``: as ``decode_record_columns``)."""
    if segment.decoded is not None:
        return segment.decoded
    return decode_whole(segment.data, segment=segment.name, arena=arena, max_batch_bytes=max_batch_bytes)


__all__ = ["DEFAULT_BUDGET_BYTES", "DecodedSegment", "DecodedSegments", "decode_segment"]
