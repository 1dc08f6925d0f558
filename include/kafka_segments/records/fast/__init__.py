"""The fast path: whole segments as numpy columns, decoded, hashed and rebuilt by numba kernels.

This package is the one door to the numba code: every kernel lives in a ``*_kernels`` module here, and the
rest of the library imports only the names below (``tests/unit/test_fast_boundary.py`` enforces it). The
pure-Python codec beside it (``records.batch``, ``record``, ``builder``, ``log``, ``legacy``) is the
executable specification each entry point is checked against by property tests. Every kernel compiles
through ``jit.njit`` (cached on disk), without a signature: nothing compiles at import time."""

from kafka_segments.records.fast.columns import HeaderTable, RecordColumns, read_headers
from kafka_segments.records.fast.decode import (
    SEGMENT_MAX_RATIO,
    decode_record_columns,
    segment_records_budget,
)
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
from kafka_segments.records.fast.pieces import decode_record_pieces
from kafka_segments.records.fast.prefault import ArenaPrefaulter
from kafka_segments.records.fast.rebuild import rebuild_batches
from kafka_segments.records.fast.scan import scan_header_table
from kafka_segments.records.fast.steps import RecordSteps
from kafka_segments.records.fast.stream import DEFAULT_STEP_BYTES, ArenaUse, StepCallback, StreamDecoder

__all__ = [
    "BELOW_BASE",
    "DEFAULT_STEP_BYTES",
    "NOT_INCREASING",
    "OFFSETS_OK",
    "SEGMENT_MAX_RATIO",
    "ArenaPrefaulter",
    "ArenaUse",
    "DigestTable",
    "HeaderTable",
    "KeyIdentities",
    "RecordColumns",
    "RecordSteps",
    "SpanGroups",
    "StepCallback",
    "StreamDecoder",
    "asked_ids",
    "decode_record_columns",
    "decode_record_pieces",
    "digest_bytes",
    "digest_columns",
    "fate_codes",
    "index_rule",
    "key_digests",
    "key_identities",
    "last_of_each_id",
    "read_headers",
    "rebuild_batches",
    "relative_last_offsets",
    "scan_header_table",
    "segment_records_budget",
]
