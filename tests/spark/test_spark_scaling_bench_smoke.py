"""The Spark scaling benchmark runs end to end in ``--quick`` mode: every engine cleans every partition of the
lake, on warmed workers, with the same result.

The bench needs two Spark masters (``local[1]``, then ``local[2]``) and its own moto server, so it runs as a
subprocess (the session's ``spark`` fixture is not used): a JVM start and a few tiny runs, about 45 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark

BENCH = Path(__file__).resolve().parents[2] / "bench" / "spark_scaling_bench.py"
ENGINES = ["inline", "local[1]", "local[2]"]
CORES = {"inline": 1, "local[1]": 1, "local[2]": 2}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("spark-scaling")
    out = folder / "scaling.json"
    result = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--data-dir", str(folder / "data"), "--json", str(out)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "**Compaction scaling on Spark** (4 partitions x 2,000 records" in result.stdout
    assert "| none | **local[2] / local[1]** |" in result.stdout
    document: dict[str, Any] = json.loads(out.read_text())
    return document


def test_the_report_has_one_and_two_cores_and_the_inline_reference(report: dict[str, Any]) -> None:
    assert report["engines"] == ENGINES
    (row,) = report["results"]
    assert row["codec"] == "none"
    assert list(row["engines"]) == ENGINES
    assert row["ratio_2_over_1"] > 0
    assert row["ratio_2_over_1"] == pytest.approx(
        row["engines"]["local[1]"]["rounds_s"] / row["engines"]["local[2]"]["rounds_s"]
    )
    for numbers in row["engines"].values():
        assert numbers["rounds_s"] > 0
        assert numbers["execute_s"] >= numbers["rounds_s"]
        assert numbers["bytes_read"] > 0


def test_every_engine_cleans_every_partition_to_the_same_committed_result(report: dict[str, Any]) -> None:
    samples = report["samples"]
    assert sorted(s["engine"] for s in samples) == sorted(ENGINES)
    assert all(s["cleaned"] == report["partitions"] == 4 for s in samples)
    assert all(s["committed"] == "committed" for s in samples)
    kept = {tuple(s["kept"]) for s in samples}
    assert len(kept) == 1
    assert all(k > 0 for k in next(iter(kept)))
    fingerprints = {s["fingerprint"] for s in samples}
    assert len(fingerprints) == 1
    assert len(next(iter(fingerprints))) == 64  # a sha256 of the manifest and the written objects
    assert report["results"][0]["identical"] is True


def test_the_timed_rounds_ran_on_the_warmed_workers(report: dict[str, Any]) -> None:
    for sample in report["samples"]:
        assert len(sample["workers"]) == CORES[sample["engine"]]
        assert sample["workers_reused"] is True
        assert sample["warm_up_s"] > 0
    spark_workers = [set(s["workers"]) for s in report["samples"] if s["engine"] != "inline"]
    assert spark_workers[0].isdisjoint(spark_workers[1])  # a fresh context has fresh workers
