"""``view=latest`` is the dictionary a consumer builds from the raw log (put on a record, delete on a
tombstone, aborted transactions ignored), before the partition is cleaned and after a compaction run."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.reading import VersionGoneError, arrow_schema, read_lake
from kafka_segments.storage import LocalStore, ObjectStore
from kit import FakeClock
from lake.compaction_run_helpers import TP, LakeLog, cleaned, kafka_test_config, run_at
from unit.compaction_helpers import NOW

pytestmark = pytest.mark.lake

Op = tuple[str, int, int]
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("rec"), st.integers(0, 7), st.integers(0, 99)),
        st.tuples(st.just("tomb"), st.integers(0, 7), st.just(0)),
        st.tuples(st.sampled_from(["commit", "abort"]), st.integers(1, 2), st.integers(0, 7)),
        st.tuples(st.just("roll"), st.just(0), st.just(0)),
    ),
    min_size=1,
    max_size=40,
)
LATEST = {"subscribe": "t", "view": "latest"}


def _write(ops: list[Op]) -> tuple[LakeLog, dict[bytes, bytes]]:
    lake = LakeLog.of(segment_bytes=300)
    log = lake.log
    expected: dict[bytes, bytes] = {}
    for kind, first, second in ops:
        if kind == "rec":
            log.rec(first, second)
            expected[str(first).encode()] = str(second).encode()
        elif kind == "tomb":
            log.tomb(first)
            expected.pop(str(first).encode(), None)
        elif kind == "roll":
            log.roll()
        else:
            keys = [second, (second + 3) % 8]
            log.txn(first, keys)
            (log.commit if kind == "commit" else log.abort)(first)
            if kind == "commit":
                expected.update({str(k).encode(): str(k).encode() for k in keys})
    return lake, expected


def _latest(store: ObjectStore) -> dict[bytes, bytes]:
    table = pa.Table.from_batches(list(read_lake(store, LATEST)), schema=arrow_schema(include_headers=False))
    rows = table.to_pylist()
    keys = [row["key"] for row in rows]
    assert len(keys) == len(set(keys))
    assert [row["offset"] for row in rows] == sorted(row["offset"] for row in rows)
    return {row["key"]: row["value"] for row in rows}


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_the_compacted_view_is_the_dictionary_of_the_raw_log(ops: list[Op]) -> None:
    lake, expected = _write(ops)
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder) / "lake")
        lake.sync(store)
        adopt(store, now_ms=NOW, clock=FakeClock())
        assert _latest(store) == expected
        run_at(store, kafka_test_config(300), NOW + 1_000)
        assert _latest(store) == expected


def test_the_compacted_view_is_the_same_after_a_round_that_cleans(tmp_path: Path) -> None:
    ops: list[Op] = [("rec", i % 4, i) for i in range(40)] + [
        ("tomb", 1, 0),
        ("abort", 1, 2),
        ("commit", 2, 5),
    ]
    lake, expected = _write(ops)
    store = LocalStore(tmp_path / "lake")
    lake.sync(store)
    adopt(store, now_ms=NOW, clock=FakeClock())
    before = _latest(store)
    cleaned(run_at(store, kafka_test_config(300), NOW + 1_000), TP)
    assert before == _latest(store) == expected
    retired = resolve_manifest(store).retired
    assert retired
    store.delete(retired[0].key)
    with pytest.raises(
        VersionGoneError, match=f"retired by version 2 at .* \\({retired[0].reason}\\)"
    ) as caught:
        _latest_at(store, version=1)
    assert retired[0].key in str(caught.value)


def _latest_at(store: ObjectStore, *, version: int) -> None:
    list(read_lake(store, {**LATEST, "versionAsOf": str(version)}))
