"""The fate kernels (``records.fast.asked_ids`` / ``fate_codes``) equal the reference rule
``decisions.decide_record``."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.compaction.decisions import RecordDecision, decide_record
from kafka_segments.compaction.fates import FATE_ORDER, FATES, RETAINED_CODES
from kafka_segments.compaction.offset_map import NO_OFFSET, OffsetMap, key_digest
from kafka_segments.records import Record
from kafka_segments.records.fast import asked_ids, fate_codes

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
def test_the_fate_kernels_equal_the_reference_rule(
    rows: list[tuple[int, bytes | None, bytes | None, bool, bool, bool]],
    mapped: dict[bytes, int],
    latest: int,
) -> None:
    offset_map = OffsetMap(
        0, latest + 1, latest, MappingProxyType({key_digest(k): o for k, o in mapped.items()})
    )
    # one batch per row (its flags are the row's); key ids numbered by first appearance, -1 unkeyed
    ids: dict[bytes, int] = {}
    key_id = np.array([-1 if r[1] is None else ids.setdefault(r[1], len(ids)) for r in rows], dtype=np.int64)
    offset = np.array([r[0] for r in rows], dtype=np.int64)
    control = np.array([r[3] for r in rows], dtype=np.bool_)
    discard = np.array([r[4] for r in rows], dtype=np.bool_)
    batch = np.arange(len(rows), dtype=np.int32)
    asked = asked_ids(offset, key_id, control, batch, discard, latest, len(ids))
    found = np.full(len(ids), NO_OFFSET, dtype=np.int64)  # the map asked only for the ids the kernel asks
    for key, index in ids.items():
        if asked[index]:
            found[index] = offset_map.get(key_digest(key))
    codes = fate_codes(
        offset,
        key_id,
        np.array([-1 if r[2] is None else len(r[2]) for r in rows], dtype=np.int32),
        control,
        batch,
        discard,
        np.array([r[5] for r in rows], dtype=np.bool_),
        found,
        latest,
        FATE_ORDER,
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
