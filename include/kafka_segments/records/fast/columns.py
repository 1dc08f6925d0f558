"""The columns of the fast path: ``HeaderTable`` (batch headers) and ``RecordColumns`` (records).

Both are frozen dataclasses of numpy arrays, one row per batch or per record, filled by the kernels in
``decode_kernels.py`` through ``decode.py``; their methods turn rows back into the ``BatchHeader`` and
``Record`` objects of the Python path."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from kafka_segments.records.attributes import COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK
from kafka_segments.records.batch import LOG_OVERHEAD, NO_PRODUCER_ID, BatchHeader
from kafka_segments.records.fast import decode_kernels as _k
from kafka_segments.records.record import Header, Record
from kafka_segments.records.varint import VARINT_MAX_BYTES, decode_varint

I8 = npt.NDArray[np.int8]
I16 = npt.NDArray[np.int16]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
U32 = npt.NDArray[np.uint32]
U64 = npt.NDArray[np.uint64]
Bools = npt.NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class HeaderTable:
    """Batch headers as columns, one row per entry, in segment order (the fields of ``BatchHeader``)."""

    position: I64
    base_offset: I64
    batch_length: I32
    partition_leader_epoch: I32
    magic: I8
    crc: U32
    attributes: I16
    last_offset_delta: I32
    base_timestamp: I64
    max_timestamp: I64
    producer_id: I64
    producer_epoch: I16
    base_sequence: I32
    records_count: I32

    def __len__(self) -> int:
        return len(self.position)

    @property
    def size_in_bytes(self) -> I64:
        """Bytes of each entry, its 12-byte log overhead included."""
        return self.batch_length.astype(np.int64) + LOG_OVERHEAD

    @property
    def last_offset(self) -> I64:
        return self.base_offset + self.last_offset_delta

    @property
    def codec(self) -> I16:
        """The compression codec id of each batch (``CompressionType`` values)."""
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def is_control(self) -> Bools:
        flags: Bools = (self.magic >= 2) & ((self.attributes & CONTROL_FLAG_MASK) != 0)
        return flags

    @property
    def has_producer_id(self) -> Bools:
        """v2 batches of a producer (``BatchHeader.has_producer_id``: an id above -1, as Kafka's)."""
        flags: Bools = (self.magic >= 2) & (self.producer_id > NO_PRODUCER_ID)
        return flags

    def header(self, index: int) -> BatchHeader:
        """Row ``index`` as a ``BatchHeader`` (kept, as ``headers_at`` keeps them)."""
        found = self._known_headers.get(index)
        if found is None:
            found = BatchHeader(*(int(getattr(self, name)[index]) for name in _BATCH_HEADER_FIELDS))
            self._known_headers[index] = found
        return found

    def headers_at(self, rows: npt.NDArray[np.integer[Any]]) -> list[BatchHeader]:
        """Rows ``rows`` as ``BatchHeader``s, each column read once (``header`` reads all of one row); kept,
        so the passes of a round that ask the same rows build them once."""
        known = self._known_headers
        wanted = rows.tolist()
        missing = np.array([row for row in dict.fromkeys(wanted) if row not in known], dtype=np.int64)
        if len(missing):
            columns = [getattr(self, name)[missing].tolist() for name in _BATCH_HEADER_FIELDS]
            built = [BatchHeader(*row) for row in zip(*columns, strict=True)]
            known.update(zip(missing.tolist(), built, strict=True))
        return [known[row] for row in wanted]

    @functools.cached_property
    def _known_headers(self) -> dict[int, BatchHeader]:
        """``BatchHeader``s built by ``header`` and ``headers_at``, by row (the columns never change)."""
        return {}

    def to_headers(self) -> list[BatchHeader]:
        """Every row as a ``BatchHeader`` (equal to ``list(log.scan_headers(data))``)."""
        columns = [getattr(self, name).tolist() for name in _BATCH_HEADER_FIELDS]
        return [BatchHeader(*row) for row in zip(*columns, strict=True)]

    def prefix(self, count: int) -> HeaderTable:
        """The first ``count`` rows (views, not copies)."""
        return HeaderTable(*(getattr(self, name)[:count] for name in TABLE_FIELDS))

    @classmethod
    def from_headers(cls, headers: Iterable[BatchHeader]) -> HeaderTable:
        rows = list(headers)
        columns = [
            np.array([getattr(h, name) for h in rows], dtype=dtype)
            for name, dtype in zip(TABLE_FIELDS, TABLE_DTYPES, strict=True)
        ]
        return cls(*cast(list[Any], columns))


TABLE_FIELDS = tuple(f.name for f in fields(HeaderTable))
_DTYPES = {"I8": np.int8, "I16": np.int16, "I32": np.int32, "I64": np.int64, "U32": np.uint32}
# each column's dtype, read from its annotation so the two cannot drift apart
TABLE_DTYPES: tuple[Any, ...] = tuple(_DTYPES[str(f.type)] for f in fields(HeaderTable))
# BatchHeader's positional order: the header fields, then position
_BATCH_HEADER_FIELDS = (*TABLE_FIELDS[1:], "position")


@dataclass(frozen=True, eq=False)
class RecordColumns:
    """Every record of a segment as columns, in offset order. Keys and values are spans of ``buffer`` (length
    -1 = null; a null value is a tombstone); ``key_hash64`` is an FNV-1a prefilter, *not* an identity;
    ``record_start``/``record_size`` span the whole record, so kept uncompressed records copy verbatim."""

    buffer: U8
    offset: I64
    timestamp: I64
    key_start: I64
    key_length: I32
    value_start: I64
    value_length: I32
    headers_count: I32
    record_start: I64
    record_size: I32
    batch_index: I32
    is_control: Bools
    batches: HeaderTable

    def __len__(self) -> int:
        return len(self.offset)

    @property
    def is_tombstone(self) -> Bools:
        return self.value_length < 0

    def key(self, index: int) -> bytes | None:
        return self._span(int(self.key_start[index]), int(self.key_length[index]))

    def value(self, index: int) -> bytes | None:
        return self._span(int(self.value_start[index]), int(self.value_length[index]))

    def headers(self, index: int) -> tuple[Header, ...]:
        count = int(self.headers_count[index])
        if count == 0:
            return ()
        pos = int(self.value_start[index]) + max(int(self.value_length[index]), 0)
        return read_headers(self.buffer, pos)

    def record(self, index: int) -> Record:
        return Record(
            int(self.offset[index]),
            int(self.timestamp[index]),
            self.key(index),
            self.value(index),
            self.headers(index),
        )

    def to_records(self) -> list[Record]:
        """Every record as a ``Record`` (slow: for tests and small outputs)."""
        data = self.buffer.tobytes()
        out = []
        rows = zip(
            self.offset.tolist(),
            self.timestamp.tolist(),
            self.key_start.tolist(),
            self.key_length.tolist(),
            self.value_start.tolist(),
            self.value_length.tolist(),
            self.headers_count.tolist(),
            strict=True,
        )
        for offset, timestamp, ks, kl, vs, vl, hc in rows:
            key = None if kl < 0 else data[ks : ks + kl]
            value = None if vl < 0 else data[vs : vs + vl]
            headers = read_headers(self.buffer, vs + max(vl, 0)) if hc else ()
            out.append(Record(offset, timestamp, key, value, headers))
        return out

    def key_hash64(self) -> U64:
        """64-bit FNV-1a of every key (0 for a null key). Not unique: confirm equal hashes on the bytes."""
        out = np.empty(len(self), dtype=np.uint64)
        _k.fnv1a64(self.buffer, self.key_start, self.key_length, out)
        return out

    def _span(self, start: int, length: int) -> bytes | None:
        if length < 0:
            return None
        return self.buffer[start : start + length].tobytes()


RECORD_COLUMNS = (
    ("offset", np.int64),
    ("timestamp", np.int64),
    ("key_start", np.int64),
    ("key_length", np.int32),
    ("value_start", np.int64),
    ("value_length", np.int32),
    ("headers_count", np.int32),
    ("record_start", np.int64),
    ("record_size", np.int32),
    ("batch_index", np.int32),
)


def allocate_record_columns(total: int) -> dict[str, Any]:
    """The kernel's output columns, in ``decode_records``' argument order."""
    return {name: np.empty(total, dtype=dtype) for name, dtype in RECORD_COLUMNS}


def read_headers(buffer: U8, pos: int) -> tuple[Header, ...]:
    """The headers at ``pos`` (the header count varint) of a record the kernel has validated."""
    data = buffer.data
    count, pos = decode_varint(data, pos, max_bytes=VARINT_MAX_BYTES)
    headers = []
    for _ in range(count):
        key_length, pos = decode_varint(data, pos, max_bytes=VARINT_MAX_BYTES)
        key = bytes(data[pos : pos + key_length]).decode("utf-8", errors="replace")  # as record.py
        pos += key_length
        value_length, pos = decode_varint(data, pos, max_bytes=VARINT_MAX_BYTES)
        value = None if value_length < 0 else bytes(data[pos : pos + value_length])
        pos += max(value_length, 0)
        headers.append(Header(key, value))
    return tuple(headers)
