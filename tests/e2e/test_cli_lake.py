"""``kafka-segments describe``, ``dump`` and ``export`` as a user runs them: real processes on a local lake
and on S3 (the embedded moto server over HTTP, found through ``AWS_ENDPOINT_URL``)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import cli
from e2e.s3_cli import s3_lake_env
from kafka_segments.lake import Manifest
from kafka_segments.storage import LocalStore
from kit import FakeClock
from lake.read_helpers import PAYMENTS_LOG_START, commit_states, rich_lake

pytestmark = pytest.mark.e2e

BUCKET = "cli-lake"


def one_line_error(result: subprocess.CompletedProcess[str], command: str) -> str:
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"kafka-segments {command}: ")
    assert "Traceback" not in result.stderr
    return result.stderr


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Manifest]:
    """A local lake at version 2: the rich lake, then payments-0's log start offset moved to 6 (its first
    segment, 0-5, retired)."""
    root = tmp_path_factory.mktemp("cli-lake") / "lake"
    store = LocalStore(root)
    clock = FakeClock()
    first = rich_lake(store, clock)
    payments = first.partitions[2]
    moved = dataclasses.replace(payments, log_start_offset=6, segments=payments.segments[1:])
    commit_states(store, [*first.partitions[:2], moved, first.partitions[3]], clock=clock)
    return root, first


def test_describe_prints_a_table(lake: tuple[Path, Manifest]) -> None:
    root, _ = lake
    result = cli("describe", "--lake", str(root))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("TOPIC     PARTITION  LOG-START-OFFSET  LOG-END-OFFSET  SEGMENTS")
    assert [line.split()[:3] for line in lines[1:5]] == [
        ["orders", "0", "0"],
        ["orders", "1", "0"],
        ["payments", "0", "6"],
        ["payments", "1", "40"],
    ]
    assert lines[5].startswith("4 partition(s) of 2 topic(s)")
    assert "at version 2" in lines[5]
    assert result.stderr == ""


def test_describe_json_for_some_topics_at_an_older_version(lake: tuple[Path, Manifest]) -> None:
    root, first = lake
    result = cli("describe", "--lake", str(root), "--topic", "payments", "--version", "1", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["version"] == 1
    assert document["run_id"] == first.run_id
    assert [(p["topic"], p["partition"]) for p in document["partitions"]] == [
        ("payments", 0),
        ("payments", 1),
    ]
    assert document["partitions"][0]["log_start_offset"] == PAYMENTS_LOG_START


def test_dump_prints_the_visible_records_with_their_batches(lake: tuple[Path, Manifest]) -> None:
    root, _ = lake
    result = cli("dump", "--lake", str(root), "--topic", "payments", "--partition", "0", "--version", "1")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"Dumping payments-0 at version 1 of {root}: "
        "log start offset 3, log end offset 13, last stable offset 11"
    )
    assert lines[1] == "Segment payments-0/00000000000000000000.log (base offset 0)"
    assert lines[2].startswith("baseOffset: 2 lastOffset: 3 count: 2 ")
    assert lines[2].endswith(" isvalid: true")
    assert lines[3].startswith("| offset: 3 CreateTime: ")
    assert lines[3].endswith("key: k3 payload: vvvvvvvvvv")
    offsets = [int(line.split()[2]) for line in lines if line.startswith("| offset: ")]
    assert offsets == list(range(3, 13))
    assert any("endTxnMarker: ABORT coordinatorEpoch: 1" in line for line in lines)
    assert lines[-1] == "6 batch(es), 10 record(s) at offsets >= 3"


def test_dump_json_is_one_document(lake: tuple[Path, Manifest]) -> None:
    root, _ = lake
    result = cli("dump", "--lake", str(root), "--topic", "payments", "--partition", "0", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert (document["version"], document["log_start_offset"], document["last_stable_offset"]) == (2, 6, 11)
    assert [s["base_offset"] for s in document["segments"]] == [6, 10]
    records = [r for s in document["segments"] for b in s["batches"] for r in b["records"]]
    assert [r["offset"] for r in records] == list(range(6, 13))
    assert records[0]["key_base64"] == "cDY="  # b"p6"
    assert document["segments"][1]["batches"][0]["is_control"] is True


def test_export_writes_a_log_directory_and_refuses_to_overwrite(
    lake: tuple[Path, Manifest], tmp_path: Path
) -> None:
    root, _ = lake
    target = tmp_path / "kafka-logs"
    result = cli("export", "--lake", str(root), "--to", str(target))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].startswith(
        f"exported version 2 of {root} to {target}: 4 partition(s)"
    )
    assert (target / "log-start-offset-checkpoint").read_text() == "0\n0\n"  # 6 = payments-0's first base
    assert (target / "payments-0" / "00000000000000000010.txnindex").is_file()

    again = cli("export", "--lake", str(root), "--to", str(target))
    assert again.returncode == 2
    assert "is not empty" in one_line_error(again, "export")


def test_export_json_report(lake: tuple[Path, Manifest], tmp_path: Path) -> None:
    root, _ = lake
    result = cli("export", "--lake", str(root), "--to", str(tmp_path / "v1"), "--version", "1", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["version"] == 1
    assert report["files"] == sum(1 for p in (tmp_path / "v1").rglob("*") if p.is_file())
    assert (tmp_path / "v1" / "log-start-offset-checkpoint").read_text() == "0\n1\npayments 0 3\n"


def test_unknown_lake_path(tmp_path: Path) -> None:
    result = cli("dump", "--topic", "t", "--partition", "0", "--lake", str(tmp_path / "missing"))
    assert result.returncode == 2
    assert f"no lake at {tmp_path / 'missing'}: no such directory" in one_line_error(result, "dump")


def test_a_lake_without_a_manifest(tmp_path: Path) -> None:
    (tmp_path / "orders-0").mkdir()
    result = cli("export", "--lake", str(tmp_path), "--to", str(tmp_path / "out"))
    assert result.returncode == 1
    assert "no committed state yet — run `kafka-segments adopt`" in one_line_error(result, "export")
    assert not (tmp_path / "out").exists()


def test_bad_versions_topics_and_partitions_are_input_errors(lake: tuple[Path, Manifest]) -> None:
    """A version, topic or partition the lake does not have is the user's input: exit 2 (README)."""
    root, _ = lake
    result = cli("describe", "--lake", str(root), "--version", "7")
    assert result.returncode == 2
    error = one_line_error(result, "describe")
    assert "manifest version 7 was never committed (the head is version 2); available versions: 1-2" in error

    result = cli("dump", "--lake", str(root), "--topic", "payments", "--partition", "5")
    assert result.returncode == 2
    assert "partition payments-5 is not in manifest version 2" in one_line_error(result, "dump")

    result = cli("dump", "--lake", str(root), "--topic", "nope", "--partition", "0")
    assert result.returncode == 2
    assert "partition nope-0 is not in manifest version 2 (topics: " in one_line_error(result, "dump")

    result = cli("describe", "--lake", str(root), "--topic", "nope")
    assert result.returncode == 2
    assert "topic(s) nope not in manifest version 2" in one_line_error(result, "describe")

    result = cli("describe", "--lake", str(root), "--version", "0")
    assert result.returncode == 2
    assert "manifest versions start at 1" in result.stderr


@pytest.fixture(scope="module")
def s3_env() -> Iterator[dict[str, str]]:
    with s3_lake_env(BUCKET, "team/lake", lambda store: rich_lake(store, FakeClock())) as env:
        yield env


def test_the_commands_on_s3(s3_env: dict[str, str], tmp_path: Path) -> None:
    lake = f"s3://{BUCKET}/team/lake"
    described = cli("describe", "--lake", lake, "--json", env=s3_env)
    assert described.returncode == 0, described.stderr
    assert json.loads(described.stdout)["lake"] == f"{lake}/"

    dumped = cli("dump", "--lake", lake, "--topic", "orders", "--partition", "1", env=s3_env)
    assert dumped.returncode == 0, dumped.stderr
    assert dumped.stdout.splitlines()[-1] == "10 batch(es), 29 record(s) at offsets >= 0"

    exported = cli("export", "--lake", lake, "--to", str(tmp_path / "out"), env=s3_env)
    assert exported.returncode == 0, exported.stderr
    assert (tmp_path / "out" / "orders-1" / "00000000000000000020.log").is_file()

    empty = cli("describe", "--lake", f"s3://{BUCKET}/elsewhere", env=s3_env)
    assert empty.returncode == 1
    assert "no committed state yet" in one_line_error(empty, "describe")
