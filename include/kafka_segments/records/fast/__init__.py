"""The fast path: whole segments as numpy columns, decoded, hashed and rebuilt by numba kernels.

This package is the one door to the numba code: every kernel lives in a ``*_kernels`` module here, and the
rest of the library imports only the names below (``tests/unit/test_fast_boundary.py`` enforces it). The
pure-Python codec beside it (``records.batch``, ``record``, ``builder``, ``log``, ``legacy``, ...) is the
executable specification: each entry point below is checked against it by property tests.

* ``decode``: ``scan_header_table`` (``log.scan_headers`` in columns) and ``decode_record_columns`` (every
  record of ``log.iter_batches`` in columns), over the kernels of ``decode_kernels`` and, for Kafka's LZ4
  frames, ``lz4_into`` / ``lz4_kernels``; the columns are ``columns.HeaderTable`` and
  ``columns.RecordColumns``.
* ``stream``: ``StreamDecoder``, ``decode_record_columns`` in steps while a segment is being read.
* ``rebuild``: ``rebuild_batches``, ``builder.rebuild_batch`` for many batches at once (``rebuild_kernels``,
  ``lz4_kernels``).
* ``digests``: key MD5s (Kafka's ``SkimpyOffsetMap`` identity) over record columns, keys grouped by their
  bytes (``key_kernels``, ``group_kernels``), and ``DigestTable``, a round's offset map as a lookup table.
* ``fate_kernels``: the compaction rule ``decisions.decide_record`` over record columns (``asked_ids``,
  ``fate_codes``).
* ``index_kernels``: ``LogSegment.append``'s offset checks and index entries over header columns, for
  ``segment.fast_writer``.
* ``jit``: the kernels' decorator, numba's ``njit`` with an on-disk cache that also serves a Spark job's
  library archive.

The kernels read the v2 batch header at the offsets ``records.batch`` derives from its wire schema.
"""

from kafka_segments.records.fast.columns import HeaderTable, RecordColumns
from kafka_segments.records.fast.decode import decode_record_columns
from kafka_segments.records.fast.digests import (
    DigestTable,
    KeyIdentities,
    SpanGroups,
    digest_bytes,
    digest_columns,
    key_digests,
    key_identities,
    last_of_each_id,
)
from kafka_segments.records.fast.fate_kernels import asked_ids, fate_codes
from kafka_segments.records.fast.index_kernels import (
    BELOW_BASE,
    NOT_INCREASING,
    OFFSETS_OK,
    index_rule,
    relative_last_offsets,
)
from kafka_segments.records.fast.rebuild import rebuild_batches
from kafka_segments.records.fast.scan import scan_header_table
from kafka_segments.records.fast.stream import DEFAULT_STEP_BYTES, StepCallback, StreamDecoder

__all__ = [
    "BELOW_BASE",
    "DEFAULT_STEP_BYTES",
    "NOT_INCREASING",
    "OFFSETS_OK",
    "DigestTable",
    "HeaderTable",
    "KeyIdentities",
    "RecordColumns",
    "SpanGroups",
    "StepCallback",
    "StreamDecoder",
    "asked_ids",
    "decode_record_columns",
    "digest_bytes",
    "digest_columns",
    "fate_codes",
    "index_rule",
    "key_digests",
    "key_identities",
    "last_of_each_id",
    "rebuild_batches",
    "relative_last_offsets",
    "scan_header_table",
]
