"""Issue 37 point 1: one answer to "what will the next run do?". ``plan``, ``describe`` (text, ``--json``,
``--html``) and the lake view all take the next run's offsets by the runs' own rule
(``pipeline.stages.next_run_offsets``): an hour after the lake's only pin, with no offsets given, every door
uses that pin (``pinned-earlier``), names it and says how old it is. Before, the page used the pin while
``describe``'s text and ``--json`` said "no offsets snapshot" and ``plan`` said consumed retention could not
apply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kafka_segments.cli.main import main
from kafka_segments.offsets.snapshot_store import read_pin_at_or_before
from kafka_segments.storage import LocalStore
from manifest_files import format_1_commits

from views.lake_view_helpers import ViewLake, build_view_lake

pytestmark = pytest.mark.lake

HOUR_MS = 3_600_000


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> ViewLake:
    """In format 1: its runs read every partition, so ``plan`` lists payments-0 (nothing due there) with its
    holder; a format 2 plan lists only the partitions the run would read (docs/metadata-format-2.md)."""
    with format_1_commits():
        return build_view_lake(tmp_path_factory.mktemp("next-run") / "lake")


def pin_id(lake: ViewLake) -> str:
    pin = read_pin_at_or_before(LocalStore(lake.root), lake.now_ms)
    assert pin is not None
    return pin.snapshot_id


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert main(list(args)) == 0
    return capsys.readouterr().out


def planned_holder(document: dict[str, object], topic: str, partition: int) -> object:
    partitions = document["plan"]["partitions"]  # type: ignore[index]
    found = [p for p in partitions if (p["topic"], p["partition"]) == (topic, partition)]
    return found[0]["holder"]


def test_plan_describe_and_the_page_use_the_same_snapshot_and_say_how_old(
    lake: ViewLake, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    later = str(lake.now_ms + HOUR_MS)
    common = ("--lake", str(lake.root), "--config", str(lake.config), "--now", later)
    page = tmp_path / "lake.html"
    described = json.loads(run_cli(capsys, "describe", *common, "--json", "--html", str(page)))
    planned = json.loads(run_cli(capsys, "plan", *common, "--json"))
    text = run_cli(capsys, "describe", *common)
    expected = {"id": pin_id(lake), "origin": "pinned-earlier", "age_ms": HOUR_MS}
    for document in (described, planned):
        offsets = document["offsets_snapshot"]
        assert {key: offsets[key] for key in expected} == expected
    holders = {(p["topic"], p["partition"]): p["holder"] for p in described["partitions"] if "holder" in p}
    assert holders[("payments", 0)] == planned_holder(planned, "payments", 0)
    assert holders[("payments", 0)]["group_id"] == "billing"
    snapshot_line = f"offsets snapshot {pin_id(lake)} (pinned-earlier, source file)"
    assert snapshot_line in text
    assert "1 h 0 min old" in text
    assert snapshot_line in page.read_text(encoding="utf-8")
    assert "1 h 0 min old" in page.read_text(encoding="utf-8")


def test_a_view_says_it_did_not_ask_a_live_cluster(
    lake: ViewLake, capsys: pytest.CaptureFixture[str]
) -> None:
    later = str(lake.now_ms + HOUR_MS)
    common = ("--lake", str(lake.root), "--config", str(lake.config), "--now", later)
    text = run_cli(capsys, "describe", *common, "--offsets-source", "kafka://broker.invalid:9092")
    assert "a view does not ask the live cluster kafka://broker.invalid:9092" in text
    assert f"offsets snapshot {pin_id(lake)} (pinned-earlier" in text
