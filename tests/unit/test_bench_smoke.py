"""The codec benchmark runs end to end in ``--quick`` mode and prints its tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.unit

BENCH = Path(__file__).resolve().parents[2] / "bench" / "codec_bench.py"


def test_quick_bench_prints_the_tables_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--data-dir", str(tmp_path / "data"), "--json", str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    table = result.stdout
    for heading in (
        "**Header scan**",
        "**Full decode**",
        "**CRC-32C verification**",
        "**Numba compilation**",
    ):
        assert heading in table
    for label in ("100 B none", "100 B lz4", "100 B zstd"):
        assert table.count(f"| {label} |") == 3  # one row in each throughput table
    report = json.loads(out.read_text())
    assert [r["segment"] for r in report["results"]] == ["100 B none", "100 B lz4", "100 B zstd"]
    assert all(r["records"] == 3_000 for r in report["results"])
    assert report["machine"]["nproc"] >= 1
    assert all(value > 0 for r in report["results"] for value in r["decode_records_per_s"].values())


ADOPTION_BENCH = BENCH.parent / "adoption_bench.py"


def test_quick_adoption_bench_reads_no_body_when_nothing_changed(tmp_path: Path) -> None:
    out = tmp_path / "adoption.json"
    result = subprocess.run(
        [sys.executable, str(ADOPTION_BENCH), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=180,
    )
    assert "**Adoption** (20 partitions x 3 segments" in result.stdout
    report = json.loads(out.read_text())
    assert report["body_reads_on_readopt"] == [0]
    assert set(report["seconds"]) == {"upload", "reference", "adopt", "readopt", "plan"}


RETENTION_PLAN_BENCH = BENCH.parent / "retention_plan_bench.py"


def test_quick_retention_plan_bench_plans_from_the_manifest_without_segment_reads(tmp_path: Path) -> None:
    out = tmp_path / "retention_plan.json"
    result = subprocess.run(
        [sys.executable, str(RETENTION_PLAN_BENCH), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    table = result.stdout
    assert "**Retention planning** (20 partitions x 10 segments = 200 segment entries" in table
    for heading in ("**Plan**", "**Scaling**"):
        assert heading in table
    for label in (
        "reference: `json.loads`",
        "`plan_retention` over every partition",
        "total plan from the lake",
    ):
        assert table.count(f"| {label}") == 1
    report = json.loads(out.read_text())
    assert report["body_reads"] == 0
    assert report["store_calls"] == {"lists": 1, "gets": 1, "body_reads": 0}
    steps = report["steps"]
    names = {"reference", "get", "decode", "read", "config", "snapshot", "index", "plan", "total"}
    assert set(steps) == names
    assert steps["reference"]["vs_reference"] == 1.0
    assert all(step["seconds"] > 0 and step["tracemalloc_peak_bytes"] > 0 for step in steps.values())
    plan = report["plan"]
    assert plan["partitions"] == 20
    assert 0 < plan["partitions_changed"] <= 20
    assert set(plan["by_reason"]) == {"log-start-offset", "retention.bytes", "consumed", "retention.ms"}
    assert plan["segments_deleted"] == sum(row["segments"] for row in plan["by_reason"].values()) > 0
    assert [row["segments"] for row in report["scaling"]][-1] == 200
    child = report["child"]
    assert child["body_reads"] == 0
    assert child["segments_deleted"] == plan["segments_deleted"]
    assert child["max_rss"] >= child["max_rss_before"] > 0


COMPACTION_BENCH = BENCH.parent / "compaction_bench.py"


def test_quick_compaction_bench_compacts_s3_to_s3(tmp_path: Path) -> None:
    out = tmp_path / "compaction.json"
    result = subprocess.run(
        [
            sys.executable,
            str(COMPACTION_BENCH),
            "--quick",
            "--data-dir",
            str(tmp_path / "data"),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=180,
    )
    assert "**Compaction, S3 (moto) to S3, per core**" in result.stdout
    report = json.loads(out.read_text())
    assert [r["segment"] for r in report["results"]] == ["100 B none", "100 B lz4", "100 B zstd"]
    assert all(r["ratio"] > 0 and r["retained"] > 0 for r in report["results"])
    routes = {"kafka-segments", "kafka-segments, read then compact", "kafka-python"}
    assert all(set(r["routes"]) == routes for r in report["results"])


SCALE_BENCH = BENCH.parent / "scale_bench.py"


def test_quick_scale_bench_runs_every_step_at_two_sizes(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    result = subprocess.run(
        [sys.executable, str(SCALE_BENCH), "--quick", "--work-dir", str(tmp_path), "--json", str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "**Scale** (local lake; 3 segments per partition" in result.stdout
    report = json.loads(out.read_text())
    assert [row["partitions"] for row in report["sizes"]] == [20, 40]
    assert all(set(row["steps"]) == {"plan", "run", "gc", "describe"} for row in report["sizes"])


STEPS = ["adopt", "gc, first pass", "run, nothing due", "run, 1% new, 1% due", "describe"]


def test_quick_metadata_scale_bench_counts_what_each_step_writes(tmp_path: Path) -> None:
    out = tmp_path / "metadata.json"
    argv = ["--metadata", "--quick", "--work-dir", str(tmp_path), "--json", str(out)]
    result = subprocess.run(
        [sys.executable, str(SCALE_BENCH), *argv],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "**Metadata at scale** (local lake" in result.stdout
    format_1, format_2 = json.loads(out.read_text())["shapes"]
    assert (format_1["manifest_format"], format_2["manifest_format"]) == (1, 2)
    assert format_1["segments"] == format_2["segments"] == 60
    steps = format_1["steps"]
    assert list(steps) == STEPS
    assert [step["head_version"] for step in steps.values()] == [1, 1, 1, 2, 2]
    # A new version writes metadata; gc, a run with nothing due and describe write none.
    written = [step["counts"]["metadata_written"] for step in steps.values()]
    assert written[0] >= steps["adopt"]["head_manifest_bytes"] > 0
    assert written[3] > 0
    assert written[1] == written[2] == written[4] == 0
    assert steps["describe"]["counts"]["requests"]["get"] >= 1
    # Format 1's steps commit format 1 (no partition pieces); format 2's adopt (the streamed bootstrap)
    # writes them.
    assert all(step["counts"]["bytes_written"].get("partitions", 0) == 0 for step in steps.values())
    assert format_2["steps"]["adopt"]["counts"]["bytes_written"]["partitions"] > 0
    steps = format_2["steps"]
    assert list(steps) == STEPS
    assert [step["head_version"] for step in steps.values()] == [1, 1, 1, 2, 2]
    # Format 2's commit of one changed partition writes less than format 1's whole manifest.
    assert 0 < steps["run, 1% new, 1% due"]["counts"]["metadata_written"] < written[3]
    # The 1% whose retention is due (one partition here) lose their first segment, in both formats; the run
    # with nothing due deletes nothing.
    for shape in (format_1, format_2):
        assert shape["steps"]["run, nothing due"]["total"].startswith("total: 0 segment(s), 0 bytes deleted")
        assert shape["steps"]["run, 1% new, 1% due"]["total"].startswith("total: 1 segment(s)")
    # gc's first pass on format 2 lists the lake once and records where it stopped (gc.json), so the next
    # passes list only the partitions that changed; on format 1 it writes nothing.
    assert steps["gc, first pass"]["counts"]["bytes_written"].get("meta", 0) > 0
    assert format_1["steps"]["gc, first pass"]["counts"]["bytes_written"] == {}


VS_KAFKA_BENCH = BENCH.parent / "vs_kafka_cleaner.py"


def _vs_kafka(tmp_path: Path, env: dict[str, str], *extra: str) -> tuple[str, dict[str, Any]]:
    out = tmp_path / "vs_kafka.json"
    argv = [sys.executable, str(VS_KAFKA_BENCH), "--quick", "--data-dir", str(tmp_path), "--json", str(out)]
    result = subprocess.run([*argv, *extra], capture_output=True, text=True, env=env, check=True, timeout=600)
    report: dict[str, Any] = json.loads(out.read_text())
    return result.stdout, report


def test_vs_kafka_bench_without_the_oracle_measures_the_product_alone(tmp_path: Path) -> None:
    env = {name: value for name, value in os.environ.items() if name != "KAFKA_ORACLE"}
    table, report = _vs_kafka(tmp_path, env)
    assert "KAFKA_ORACLE is not set" in table
    assert "| 100 B lz4 (kafka-python) | 0 | — | — |" in table
    (result,) = report["results"]
    assert result["spec"] == {"records": 2_000, "value_bytes": 100, "codec": "lz4", "builder": "kafka-python"}
    assert set(result["samples"]) == {"local"}
    assert result["local"]["wall_s"] > result["local"]["total_s"] > 0
    assert result["local"]["messages_written"] == 400  # 2,000 records over 400 keys (the active one apart)


@pytest.mark.skipif(not os.environ.get("KAFKA_ORACLE"), reason="KAFKA_ORACLE does not name Kafka's harness")
def test_vs_kafka_bench_writes_kafkas_bytes_locally_and_on_s3(tmp_path: Path) -> None:
    table, report = _vs_kafka(tmp_path, dict(os.environ), "--s3", "--transactional", "100,lz4")
    inputs = ["100 B none", "100 B lz4 (kafka-python)", "100 B lz4 (transactional)"]
    assert [r["input"] for r in report["results"]] == inputs
    for result in report["results"]:
        assert set(result["samples"]) == {"kafka", "local", "s3"}
        assert result["local"]["identical"]
        assert result["s3"]["identical"]
        assert result["local"]["messages_written"] == result["kafka"]["messages_written"]
    assert table.count("| yes |") == 6
