"""``python -m kafka_segments.cli.warm`` runs a whole run's kernels on a tiny lake (one partition per
codec), so that ``scripts/setup`` leaves them compiled and a user's first run only loads them (issue 22,
point 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka_segments.cli import warm
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.log import scan_headers

pytestmark = pytest.mark.unit


def test_the_warm_up_cleans_one_partition_per_codec(tmp_path: Path) -> None:
    warm.warm(tmp_path)
    for partition, codec in enumerate(CompressionType):
        before = (tmp_path / "lake" / f"warm-{partition}" / f"{0:020d}.log").read_bytes()
        after = (tmp_path / "export" / f"warm-{partition}" / f"{0:020d}.log").read_bytes()
        headers = list(scan_headers(after))
        assert len(after) < len(before), codec
        assert {h.compression for h in headers if not h.is_control} == {codec}
        assert sum(h.records_count for h in headers) < sum(h.records_count for h in scan_headers(before))


def test_a_failed_step_says_which(tmp_path: Path) -> None:
    (tmp_path / "lake").write_text("not a folder")
    with pytest.raises((warm.WarmUpError, OSError)):
        warm.warm(tmp_path)
