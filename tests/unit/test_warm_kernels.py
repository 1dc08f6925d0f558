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


class _Compiling:
    """A stand-in for the archive's warm-up process: records when it is waited for."""

    def __init__(self, events: list[str], *, returncode: int = 0) -> None:
        self.events = events
        self.returncode = returncode

    def communicate(self) -> tuple[str, str]:
        self.events.append("archive waited for")
        return "", "boom" if self.returncode else ""

    def kill(self) -> None:
        self.events.append("archive killed")


def test_the_archives_kernels_compile_while_the_source_trees_do(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--archive`` starts the archive's warm-up (its own process) before warming the source tree and waits
    for it after, so set-up waits for about one compilation on two cores, not two in a row (issue 37)."""
    events: list[str] = []

    def start() -> tuple[Path, _Compiling]:
        events.append("archive started")
        return Path("kafka_segments-x.zip"), _Compiling(events)

    monkeypatch.setattr(warm, "start_archive_warm_up", start)
    monkeypatch.setattr(warm, "warm", lambda work: events.append("source tree warmed"))
    archived = Path("kafka_segments-x.k1.zip")
    monkeypatch.setattr("kafka_segments.pipeline.engines.spark_submit.library_archive", lambda: archived)
    assert warm.main(["--archive"]) == 0
    assert events == ["archive started", "source tree warmed", "archive waited for"]
    assert "(kafka_segments-x.k1.zip, at the same time)" in capsys.readouterr().out


def test_a_failed_source_tree_warm_up_stops_the_archives(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    monkeypatch.setattr(warm, "start_archive_warm_up", lambda: (Path("a.zip"), _Compiling(events)))

    def fail(work: Path) -> None:
        raise warm.WarmUpError("run exited 1")

    monkeypatch.setattr(warm, "warm", fail)
    with pytest.raises(warm.WarmUpError, match="run exited 1"):
        warm.main(["--archive"])
    assert events == ["archive killed", "archive waited for"]


def test_a_failed_archive_warm_up_says_so() -> None:
    with pytest.raises(warm.WarmUpError, match=r"the warm-up from a\.zip exited 1: boom"):
        warm.finish_archive_warm_up(Path("a.zip"), _Compiling([], returncode=1))  # type: ignore[arg-type]
