"""One segment decoded for a round: its record columns and the identity of every key (``DecodedSegment``),
built from what ``records.fast`` decodes. Below both the round's input (``source``) and its cache
(``decoded``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from kafka_segments.records.fast import (
    KeyIdentities,
    RecordColumns,
    RecordSteps,
    decode_record_columns,
    key_identities,
    segment_records_budget,
)

Buffer = bytes | bytearray | memoryview
"""A segment's bytes as a round holds them."""

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]


@dataclass(frozen=True, slots=True, eq=False)
class DecodedSegment:
    """One segment's record columns and the identity of every key: an id per record (equal key bytes, equal
    id; -1 for unkeyed records) and the MD5 (hi, lo) of every id."""

    columns: RecordColumns
    key_id: I64
    id_hi: U64
    id_lo: U64
    nbytes: int
    """Memory held by the decoding beyond the segment's own bytes."""
    steps: RecordSteps | None = None
    """Where the records are when ``columns`` holds none (decoded in steps that did not keep them): the
    cleaning pass decodes each step again (``RecordSteps.inflate``)."""
    control_keys: Mapping[int, bytes | None] = field(default_factory=dict)
    """With ``steps``: the key of every control record, by row (the passes read the markers' keys)."""

    @property
    def key_ids(self) -> int:
        """How many ids ``key_id`` uses (ids are ``0 .. key_ids - 1``)."""
        return len(self.id_hi)

    def control_key(self, row: int) -> bytes | None:
        """The key of the control record at ``row`` (a marker's version and type)."""
        return self.columns.key(row) if self.steps is None else self.control_keys[row]

    def digests(self, rows: npt.NDArray[np.intp]) -> tuple[U64, U64]:
        """The MD5 (hi, lo) of the keys of ``rows`` (keyed records only)."""
        ids = self.key_id[rows]
        return self.id_hi[ids], self.id_lo[ids]


def decoded_segment(
    columns: RecordColumns,
    keys: KeyIdentities,
    *,
    data: Buffer,
    steps: RecordSteps | None = None,
    control_keys: Mapping[int, bytes | None] | None = None,
) -> DecodedSegment:
    """A ``DecodedSegment`` of ``columns`` (decoded from ``data``, the segment's bytes) and their keys;
    ``steps``: where its records are when ``columns`` holds none, and ``control_keys`` its control records'
    keys by row."""
    arrays = (columns.offset, columns.timestamp, columns.key_start, columns.key_length, columns.value_start)
    more = (columns.value_length, columns.headers_count, columns.record_start, columns.record_size)
    held = (keys.key_id, keys.id_hi, keys.id_lo, columns.batch_index, columns.is_control)
    size = sum(a.nbytes for a in (*arrays, *more, *held))
    if not np.may_share_memory(columns.buffer, np.frombuffer(data, dtype=np.uint8)):
        size += columns.buffer.nbytes
    controls = dict(control_keys or {})
    return DecodedSegment(columns, keys.key_id, keys.id_hi, keys.id_lo, size, steps, controls)


def decode_whole(
    data: Buffer, *, segment: str, arena: U8 | None = None, max_batch_bytes: int | None = None
) -> DecodedSegment:
    """The record columns of the segment ``data`` (CRCs not verified, as the cleaner) and the MD5 of every
    key, its records kept (``arena``, ``max_batch_bytes``: as ``decode_record_columns``)."""
    columns = decode_record_columns(
        data,
        segment=segment,
        verify_crc=False,
        arena=arena,
        max_batch_bytes=max_batch_bytes,
        max_total_bytes=segment_records_budget(len(data), max_batch_bytes),
    )
    return decoded_segment(columns, identify_keys(columns), data=data)


def identify_keys(columns: RecordColumns) -> KeyIdentities:
    """The identity of every key of ``columns`` (``digests.key_identities``; -1 for unkeyed records)."""
    keyed = columns.key_length >= 0
    if keyed.all():
        return KeyIdentities(*key_identities(columns.buffer, columns.key_start, columns.key_length))
    rows = np.flatnonzero(keyed)
    ids, id_hi, id_lo = key_identities(columns.buffer, columns.key_start[rows], columns.key_length[rows])
    key_id = np.full(len(columns), -1, dtype=np.int64)
    key_id[rows] = ids
    return KeyIdentities(key_id, id_hi, id_lo)
