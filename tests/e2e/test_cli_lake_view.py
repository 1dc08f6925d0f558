"""``kafka-segments describe --html OUT`` as a user runs it: the page's numbers are ``describe --json``'s
(without a browser: the cells' ``data-value``), with a history point per version, and nothing else."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_harness import cli
from kafka_segments.lake.history import read_manifest
from kafka_segments.lake.layout import run_prefix
from kafka_segments.storage import LocalStore
from views.lake_view_helpers import ViewLake, build_view_lake, expected_numbers, page_numbers

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> ViewLake:
    return build_view_lake(tmp_path_factory.mktemp("cli-lake-view") / "lake")


def describe(*args: str) -> subprocess.CompletedProcess[str]:
    return cli("describe", *args)


def test_the_page_shows_describe_jsons_numbers(lake: ViewLake, tmp_path: Path) -> None:
    out = tmp_path / "lake.html"
    common = ("--lake", str(lake.root), "--config", str(lake.config), "--now", str(lake.now_ms))
    result = describe(*common, "--json", "--html", str(out))
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document == json.loads(describe(*common, "--json").stdout)  # --html adds nothing to --json
    numbers = page_numbers(out.read_text())
    expected = expected_numbers(document)
    assert {tp: {k: row[k] for k in expected[tp]} for tp, row in numbers.partitions.items()} == expected
    assert numbers.partitions[("orders", 0)]["dirty_ratio"] != ""  # a compacted topic, with --config
    store = LocalStore(lake.root)
    for version in (1, 2):
        orders = [p for p in read_manifest(store, version).partitions if p.topic_partition.topic == "orders"]
        point = (sum(p.size_bytes for p in orders), sum(p.log_start_offset for p in orders))
        assert numbers.points["orders"][version] == point
    page = out.read_text()
    assert "https://" not in page
    assert "http://" not in page


def test_without_a_configuration_the_page_has_no_outlook(lake: ViewLake, tmp_path: Path) -> None:
    out = tmp_path / "plain.html"
    result = describe("--lake", str(lake.root), "--now", str(lake.now_ms), "--html", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("TOPIC")  # the table as without --html
    numbers = page_numbers(out.read_text())
    assert numbers.partitions[("orders", 0)]["dirty_ratio"] == ""
    assert "need a configuration" in out.read_text()


def test_a_tampered_head_report_is_one_line_naming_the_field(lake: ViewLake, tmp_path: Path) -> None:
    """Issue 38: ``segments_replaced: 5`` in the head run's report was a ``TypeError`` traceback."""
    copy = tmp_path / "lake"
    shutil.copytree(lake.root, copy)
    key = run_prefix(lake.head.run_id) + "report.json"
    report = json.loads((copy / key).read_text())
    report["compaction"]["totals"]["cleaned"] = 1
    report["compaction"]["partitions"][0]["segments_replaced"] = 5
    (copy / key).write_text(json.dumps(report))

    result = describe("--lake", str(copy), "--now", str(lake.now_ms), "--html", str(tmp_path / "page.html"))

    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line == (
        f"kafka-segments describe: {copy}/{key}: field 'compaction.partitions[0].segments_replaced': "
        "expected a list of strings, found 5"
    )
