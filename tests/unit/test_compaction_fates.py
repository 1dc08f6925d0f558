"""The columnar per-record rule (``fates``) equals the reference rule ``decisions.decide_record``."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.compaction.decisions import RecordDecision, decide_record
from kafka_segments.compaction.fates import FATES, RETAINED_CODES, found_offsets, needs_lookup, record_fates
from kafka_segments.compaction.offset_map import OffsetMap, key_digest
from kafka_segments.records import Record

pytestmark = pytest.mark.unit

rows = st.lists(
    st.tuples(
        st.integers(0, 40),  # offset
        st.none() | st.sampled_from([b"a", b"b", b"c", b""]),  # key
        st.none() | st.just(b"v"),  # value
        st.booleans(),  # control
        st.booleans(),  # discard
        st.booleans(),  # deletes retained
    ),
    max_size=30,
)


@settings(max_examples=80, deadline=None)
@given(
    rows=rows,
    mapped=st.dictionaries(st.sampled_from([b"a", b"b", b""]), st.integers(0, 40)),
    latest=st.integers(-1, 40),
)
def test_columnar_fates_equal_the_reference_rule(
    rows: list[tuple[int, bytes | None, bytes | None, bool, bool, bool]],
    mapped: dict[bytes, int],
    latest: int,
) -> None:
    offset_map = OffsetMap(
        0, latest + 1, latest, MappingProxyType({key_digest(k): o for k, o in mapped.items()})
    )
    buffer = bytearray()
    key_start, key_length = [], []
    for _, key, *_ in rows:
        key_start.append(len(buffer))
        key_length.append(-1 if key is None else len(key))
        buffer += key or b""
    offset = np.array([r[0] for r in rows], dtype=np.int64)
    has_key = np.array([r[1] is not None for r in rows], dtype=np.bool_)
    control = np.array([r[3] for r in rows], dtype=np.bool_)
    discard = np.array([r[4] for r in rows], dtype=np.bool_)
    lookup = needs_lookup(
        offset=offset, has_key=has_key, is_control=control, discard=discard, latest_offset=latest
    )
    found = found_offsets(
        np.frombuffer(bytes(buffer) or b"\0", dtype=np.uint8),
        np.array(key_start, dtype=np.int64),
        np.array(key_length, dtype=np.int32),
        lookup,
        offset_map,
    )
    codes = record_fates(
        offset=offset,
        has_key=has_key,
        has_value=np.array([r[2] is not None for r in rows], dtype=np.bool_),
        is_control=control,
        discard=discard,
        deletes_retained=np.array([r[5] for r in rows], dtype=np.bool_),
        found=found,
        latest_offset=latest,
    )
    expected = [
        decide_record(
            Record(o, 0, key, value),
            is_control=c,
            discard_records=d,
            offset_map=offset_map,
            deletes_retained=keep,
        )
        for o, key, value, c, d, keep in rows
    ]
    assert [FATES[code] for code in codes] == expected
    assert [bool(RETAINED_CODES[code]) for code in codes] == [decision.retained for decision in expected]


def test_every_decision_has_a_code() -> None:
    assert set(FATES) == set(RecordDecision)
