"""Records as Arrow record batches with the schema of Spark's Kafka source, built in bulk from the decoded
columns (``records.fast.RecordColumns``): keys and values are gathered by Arrow's ``take`` over one binary
array that spans the segment's buffer, never record by record. Only headers (``includeHeaders``) are read per
record that has any.

``timestamp`` is Spark's timestamp (microseconds, UTC); ``timestampType`` Kafka's id: 0 CreateTime,
1 LogAppendTime, -1 for a v0 message (no timestamp)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from kafka_segments.records.attributes import TIMESTAMP_TYPE_MASK

if TYPE_CHECKING:  # the decoder loads numba's kernels: the schema alone (a Spark driver's) needs neither
    from kafka_segments.records.fast import RecordColumns

I64 = npt.NDArray[np.int64]

SPARK_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
    "timestampType int"
)
"""The schema of Spark's Kafka source, as a DDL string (``headers`` is added with includeHeaders)."""
SPARK_HEADERS = "headers array<struct<key: string, value: binary>>"

NO_TIMESTAMP_TYPE = -1
SMALL_BINARY_BYTES = 1 << 31
"""Buffers shorter than this are spanned by an Arrow ``binary`` array (32-bit offsets)."""


def arrow_schema(*, include_headers: bool) -> Any:
    """The Arrow schema of the records (a ``pyarrow.Schema``)."""
    import pyarrow as pa

    fields = [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.timestamp("us", tz="UTC")),
        pa.field("timestampType", pa.int32()),
    ]
    if include_headers:
        header = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
        fields.append(pa.field("headers", pa.list_(header)))
    return pa.schema(fields)


def spark_schema(*, include_headers: bool) -> str:
    """The schema of Spark's Kafka source as DDL."""
    return f"{SPARK_SCHEMA}, {SPARK_HEADERS}" if include_headers else SPARK_SCHEMA


def record_batch(
    columns: RecordColumns, rows: I64, *, topic: str, partition: int, include_headers: bool
) -> Any:
    """The records ``rows`` (indexes into ``columns``, ascending) as a ``pyarrow.RecordBatch``."""
    import pyarrow as pa

    count = len(rows)
    keys, values = _keys_and_values(columns, rows)
    batches = columns.batches
    batch_rows = columns.batch_index[rows]
    timestamp_type = np.where(
        batches.magic[batch_rows] == 0,
        NO_TIMESTAMP_TYPE,
        (batches.attributes[batch_rows] & TIMESTAMP_TYPE_MASK) != 0,
    ).astype(np.int32)
    arrays = [
        keys,
        values,
        pa.repeat(pa.scalar(topic, pa.string()), count),
        pa.repeat(pa.scalar(partition, pa.int32()), count),
        pa.array(columns.offset[rows]),
        pa.array(columns.timestamp[rows] * 1000).cast(pa.timestamp("us", tz="UTC")),
        pa.array(timestamp_type),
    ]
    if include_headers:
        arrays.append(_headers(columns, rows))
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(include_headers=include_headers))


def _keys_and_values(columns: RecordColumns, rows: I64) -> tuple[Any, Any]:
    """Keys and values of ``rows``: one binary array whose elements alternate key, gap, value, gap over the
    buffer (spans are in buffer order), then every key and every value taken from it by Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    count = len(rows)
    if count == 0:
        return pa.array([], type=pa.binary()), pa.array([], type=pa.binary())
    key_start = columns.key_start[rows]
    key_length = columns.key_length[rows].astype(np.int64)
    value_start = columns.value_start[rows]
    value_length = columns.value_length[rows].astype(np.int64)
    bounds = np.empty(4 * count, dtype=np.int64)
    bounds[0::4] = key_start
    bounds[1::4] = key_start + np.maximum(key_length, 0)
    bounds[2::4] = value_start
    bounds[3::4] = value_start + np.maximum(value_length, 0)
    if count > 1 and bool(np.any(np.diff(bounds) < 0)):  # not in buffer order: gather one by one
        return _gathered(columns, rows)
    valid = np.ones(4 * count - 1, dtype=np.bool_)
    valid[0::4] = key_length >= 0
    valid[2::4] = value_length >= 0
    # 32-bit offsets when the buffer allows: the taken keys and values are then binary as they are, not cast
    # from large_binary (a cast copies every value once more)
    small = len(columns.buffer) < SMALL_BINARY_BYTES
    kind, array_type = (pa.binary(), pa.BinaryArray) if small else (pa.large_binary(), pa.LargeBinaryArray)
    spans = array_type.from_buffers(
        kind,
        4 * count - 1,
        [
            pa.py_buffer(np.packbits(valid, bitorder="little")),
            pa.py_buffer(bounds.astype(np.int32) if small else bounds),
            pa.py_buffer(columns.buffer),
        ],
    )
    picks = np.arange(0, 4 * count, 4, dtype=np.int64)
    # the system allocator's: a large value's copy goes back to the system once the batch is dropped (the
    # default pool keeps freed memory for reuse, so a task's peak would add the last large batch to the next)
    pool = pa.system_memory_pool()
    keys = pc.take(spans, pa.array(picks), memory_pool=pool)
    values = pc.take(spans, pa.array(picks + 2), memory_pool=pool)
    if not small:
        keys, values = keys.cast(pa.binary(), memory_pool=pool), values.cast(pa.binary(), memory_pool=pool)
    return keys, values


def _gathered(columns: RecordColumns, rows: I64) -> tuple[Any, Any]:
    import pyarrow as pa

    keys = [columns.key(int(row)) for row in rows]
    values = [columns.value(int(row)) for row in rows]
    return pa.array(keys, type=pa.binary()), pa.array(values, type=pa.binary())


def _headers(columns: RecordColumns, rows: I64) -> Any:
    """Each row's headers as a list array built from its offsets: only the rows that have headers are read
    (record by record); a row without any gets an empty list at no per-row cost."""
    import pyarrow as pa

    from kafka_segments.records.fast import read_headers

    header_type = arrow_schema(include_headers=True).field("headers").type
    sizes = np.zeros(len(rows), dtype=np.int64)
    keys: list[str] = []
    values: list[bytes | None] = []
    for index in np.flatnonzero(columns.headers_count[rows] > 0).tolist():
        row = int(rows[index])
        start = int(columns.value_start[row]) + max(int(columns.value_length[row]), 0)
        headers = read_headers(columns.buffer, start)
        sizes[index] = len(headers)
        keys.extend(h.key for h in headers)
        values.extend(h.value for h in headers)
    offsets = np.zeros(len(rows) + 1, dtype=np.int32)
    offsets[1:] = np.cumsum(sizes)
    items = pa.StructArray.from_arrays(
        [pa.array(keys, type=pa.string()), pa.array(values, type=pa.binary())],
        fields=list(header_type.value_type),
    )
    return pa.ListArray.from_arrays(pa.array(offsets), items, type=header_type)
