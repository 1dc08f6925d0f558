"""The differential suite's comparisons and generator, without the oracle: what they call a difference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kafka_segments.records import iter_batches

from fidelity.compare import (
    compare_checkpoints,
    compare_report,
    compare_segments,
    compare_txn_indexes,
    round_down,
)
from fidelity.generator import generate
from fidelity.sides import checkpoint_text, config_yaml

pytestmark = pytest.mark.unit


def _batch(**fields: Any) -> dict[str, Any]:
    batch = {"pos": 0, "size": 100, "crc": 1, "base_offset": 0, "last_offset": 1, "compression": "none"}
    return {**batch, "records": [{"offset": 0, "key": "6b"}], **fields}


def _segment(*batches: dict[str, Any], sha: str = "a") -> dict[str, Any]:
    return {"file": "00000000000000000000.log", "size": 100, "sha256": sha, "batches": list(batches)}


def test_same_bytes_are_no_difference() -> None:
    assert compare_segments([_segment(_batch())], [_segment(_batch(crc=2))]) == []


def test_a_header_field_is_named() -> None:
    found = compare_segments([_segment(_batch())], [_segment(_batch(last_offset=2), sha="b")])
    assert [d.check for d in found] == ["batch.last_offset"]


def test_other_compressed_bytes_of_the_same_records_are_told_apart() -> None:
    kafka, ours = _batch(compression="zstd"), _batch(compression="zstd", size=97, crc=2)
    assert [d.check for d in compare_segments([_segment(kafka)], [_segment(ours, sha="b")])] == [
        "batch.zstd-bytes"
    ]
    other = _batch(compression="gzip", size=97, crc=2)
    found = compare_segments([_segment(_batch(compression="gzip"))], [_segment(other, sha="b")])
    assert {d.check for d in found} == {"batch.size", "batch.crc"}


def test_a_record_difference_is_not_a_compression_one() -> None:
    ours = _batch(compression="zstd", size=97, records=[{"offset": 0, "key": "6c"}])
    found = compare_segments([_segment(_batch(compression="zstd"))], [_segment(ours, sha="b")])
    assert "record" in [d.check for d in found]


def test_other_segment_files() -> None:
    ours = {**_segment(_batch()), "file": "00000000000000000005.log"}
    assert [d.check for d in compare_segments([_segment(_batch())], [ours])] == ["segments.files"]


def test_checkpoints_and_txn_indexes(tmp_path: Path) -> None:
    (tmp_path / "k").mkdir()
    (tmp_path / "o").mkdir()
    (tmp_path / "k" / "cleaner-offset-checkpoint").write_text(checkpoint_text(18))
    (tmp_path / "o" / "cleaner-offset-checkpoint").write_text(checkpoint_text(19))
    names = ["cleaner-offset-checkpoint", "absent"]
    found = compare_checkpoints(tmp_path / "k", tmp_path / "o", names)
    assert [d.check for d in found] == ["checkpoint.cleaner-offset-checkpoint"]
    found = compare_checkpoints(tmp_path / "o", tmp_path / "k", names, reset_to=19)
    assert [d.check for d in found] == ["checkpoint.kept-below-log-start"]
    assert compare_txn_indexes({0: b"x", 5: b""}, {0: b"x", 5: b""}) == []
    assert [d.check for d in compare_txn_indexes({0: b"x"}, {0: b""})] == ["segments.txnindex"]


def test_the_first_uncleanable_offset_is_rounded_to_its_segment() -> None:
    assert round_down(165, [0, 161, 164, 175]) == 164
    assert round_down(None, [0]) is None
    kafka = {
        "policy": {"compact": True},
        "cleanable": {
            "first_dirty_offset": 0,
            "first_uncleanable_offset": 165,
            "total_bytes": 0,
            "force_update_checkpoint": False,
        },
        "checkpoint_before": None,
        "eligible": False,
        "max_compaction_delay_ms": 0,
    }
    ours = {
        "first_dirty_offset": 0,
        "first_uncleanable_offset": 164,
        "checkpoint": {"before": None, "state": "absent"},
        "status": "skipped",
        "max_compaction_delay_ms": 0,
    }
    assert compare_report(kafka, {"compaction": {"partitions": [ours]}}, [0, 164, 175]) == []
    assert [d.check for d in compare_report(kafka, {"compaction": {"partitions": [ours]}}, [0, 175])] == [
        "report.cleanable.first_uncleanable_offset"
    ]


@pytest.mark.parametrize("seed", range(20))
def test_generated_logs_are_well_formed(seed: int) -> None:
    """Same seed, same case; every segment decodes with increasing offsets from its base offset."""
    case = generate(seed)
    assert case == generate(seed)
    last = -1
    for round_ in case.rounds:
        for base, data in round_.segments:
            headers = [batch.header for batch in iter_batches(data, verify_crc=True)]
            assert headers[0].base_offset == base > last
            for header in headers:
                assert header.base_offset > last
                last = header.last_offset
    assert "internal.segment.bytes" in config_yaml(case.props, dedupe_buffer_size=case.dedupe_buffer_size)
