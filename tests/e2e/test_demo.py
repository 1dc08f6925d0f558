"""``./scripts/demo``, the quick start's main job, run for real: set-up check, the embedded S3 server, the
demo lake, Airflow (SQLite) running the maintenance DAG twice with local Spark and Great Expectations, and
the per-partition summaries it prints; then the lake it leaves behind, read with the library. Its Spark
JVMs start as the Spark tests' do (``spark_startup.QUICK_JVM_OPTIONS``: the JIT's quick compiler only)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from kafka_segments.lake.history import read_head
from kafka_segments.storage import LocalStore
from spark_startup import with_quick_jvm

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "scripts" / "demo"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    output = tmp_path_factory.mktemp("demo") / "out"
    env = with_quick_jvm({k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "AWS_"))})
    result = subprocess.run(
        [str(DEMO), "--output", str(output)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    return result, output


def test_the_demo_runs_the_dag_twice_and_prints_each_runs_partitions(
    demo: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    result, output = demo
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    assert "== run 1: committed" in out
    assert "== run 2: nothing to change" in out
    first, second = out.split("== run 2:")
    assert "clickstream-0: log start 0 -> 160, log end 240; deleted consumed: 4 segment(s)" in first
    assert "clickstream-1: log start 0 -> 80, log end 240; deleted retention.ms: 2 segment(s)" in first
    assert re.search(
        r"clickstream-2: log start 50 -> 120, log end 240; deleted log-start-offset: 1 segment", first
    )
    assert "WARNING: group analytics (committed offset 25) loses 55 unread record(s)" in first
    # the compacted topic is cleaned by the first run (superseded profiles, a tombstone, the aborted import)
    for partition in (0, 1):
        assert re.search(
            rf"customers-{partition}: cleaned \(min.cleanable.dirty.ratio\) offsets 0..47, dirty ratio "
            r"1.00 -> 0.00, checkpoint - -> 47; .* tombstones kept 1 removed 1, aborted records removed 3",
            first,
        ), first
    # nothing due anywhere: the second run reads no partition (format 2: the summaries say so), so it has
    # no compaction line (a run over every partition printed "compaction: 0 of 2 … cleaned")
    assert "compaction:" not in second
    assert "cleaned" not in second
    assert "validation: passed" in first
    assert "total: 0 segment(s), 0 bytes deleted" in second
    assert "demo OK" in out
    # the last step: a query on a table (docs/tables.md), the compacted view of customers, one row per key
    query = out.split("== tables sync --topics customers")[1]
    assert "customers_latest: table kafka_segments.customers_latest created" in query
    assert re.search(r"== query: customers_latest.scan\(\).to_arrow\(\): \d+ rows, one per key ==", query)
    assert re.search(r"customers-0 offset \d+: customer-0-\d+ = \{", query)
    assert f"log:       {output / 'demo.log'}" in out
    assert (output / "demo.log").stat().st_size > 0


def test_the_demo_leaves_the_committed_lake_its_report_and_data_docs(
    demo: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    result, output = demo
    assert result.returncode == 0
    lake = LocalStore(str(output / "lake"))
    head = read_head(lake)
    assert head is not None
    assert head.version == 2  # adoption of the demo lake, then the first run; the second changed nothing
    starts = {str(state.topic_partition): state.log_start_offset for state in head.partitions}
    assert {tp: starts[tp] for tp in ("clickstream-0", "clickstream-1", "clickstream-2")} == {
        "clickstream-0": 160,
        "clickstream-1": 80,
        "clickstream-2": 120,
    }
    report_line = next(line for line in result.stdout.splitlines() if line.strip().startswith("report:"))
    report = json.loads(Path(report_line.split(":", 1)[1].strip()).read_text())
    assert report["outcome"] == "committed"
    assert report["labels"]["airflow_dag_id"] == "kafka_segments_maintenance"
    assert report["offsets_snapshot"]["source"] == "lake"
    docs_line = next(line for line in result.stdout.splitlines() if line.strip().startswith("Data Docs:"))
    docs = Path(docs_line.split("file://", 1)[1].strip())
    assert docs.name == "index.html"
    assert docs.is_file()
