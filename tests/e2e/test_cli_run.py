"""``kafka-segments run``, ``plan`` and ``delete-records`` as a user runs them: real processes on a local lake
and on S3 (the embedded moto server through ``AWS_ENDPOINT_URL``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_harness import cli
from e2e.s3_cli import s3_lake_env
from kafka_segments.lake.history import manifest_versions
from kafka_segments.storage import LocalStore
from kit import T0
from lake.retention_helpers import bases, group, upload_fifteen_records, write_snapshot

pytestmark = pytest.mark.e2e

DAY = 86_400_000

CONFIG = """\
broker:
  log.retention.hours: 168
topics:
  t:
    retention.ms: 10000
    file.delete.delay.ms: 0
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "kafka-segments.yaml"
    path.write_text(CONFIG)
    return path


def test_a_topic_the_lake_does_not_have_is_an_input_error(tmp_path: Path, config_file: Path) -> None:
    """``--topics`` naming a topic the lake does not have, once adopted, exits 2 naming it and the lake's
    topics, instead of planning nothing and succeeding (issue 37); nothing is committed."""
    root = tmp_path / "lake"
    store = LocalStore(root)
    upload_fifteen_records(store, ts=10)
    for command in ("plan", "run"):
        done = cli(command, "--lake", str(root), "--config", str(config_file), "--topics", "orders")
        assert done.returncode == 2, done.stderr
        last = done.stderr.splitlines()[-1]
        assert last.startswith(f"kafka-segments {command}: {root}: run ")
        assert last.endswith("chose orders, not in the lake (topics: t)")
        assert "Traceback" not in done.stderr
    assert manifest_versions(store) == []


def test_plan_then_run_then_rerun(tmp_path: Path, config_file: Path) -> None:
    root = tmp_path / "lake"
    store = LocalStore(root)
    upload_fifteen_records(store, ts=10)
    common = ["--lake", str(root), "--config", str(config_file), "--now", str(T0)]

    planned = cli("plan", *common, "--json")
    assert planned.returncode == 0, planned.stderr
    plan = json.loads(planned.stdout)
    assert plan["outcome"] == "dry run"
    assert plan["plan"]["totals"]["by_reason"]["retention.ms"]["segments"] == 3
    assert manifest_versions(store) == []  # nothing changed, not even the adoption

    report_path = tmp_path / "report.json"
    ran = cli("run", *common, "--engine", "inline", "--report", str(report_path))
    assert ran.returncode == 0, ran.stderr
    assert "[run] adopt: listing the lake" in ran.stderr
    assert "[run] commit: staging and committing the new state" in ran.stderr
    assert "t-0: log start 0 -> 15, log end 15; deleted retention.ms: 3 segment(s)" in ran.stdout
    report = json.loads(report_path.read_text())
    assert report["outcome"] == "committed"
    assert report["plan"]["partitions"][0]["log_start_offset"] == {"before": 0, "after": 15}
    assert bases(store) == []

    again = cli("run", *common, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["outcome"] == "nothing to change"


def test_run_reports_the_group_holding_consumed_retention_back(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    upload_fifteen_records(LocalStore(root), ts=T0 - 2 * DAY)
    config = tmp_path / "c.yaml"
    config.write_text(
        "topics:\n  t:\n    retention.commitoffset.enable: true\n    retention.commitoffset.ms: 86400000\n"
    )
    snapshot = write_snapshot(
        tmp_path / "offsets.json",
        [group("billing", [(0, 7, T0)], subscribed=["t"]), group("audit", [(0, 15, T0)], subscribed=["t"])],
        taken_at_ms=T0,
    )

    ran = cli(
        "run", "--lake", str(root), "--config", str(config), "--offsets", str(snapshot), "--now", str(T0)
    )

    assert ran.returncode == 0, ran.stderr
    assert "deleted consumed: 1 segment(s)" in ran.stdout
    assert "held back by group billing (at 7; lag 8 records" in ran.stdout


def test_delete_records_prints_kafka_tool_lines_and_fails_per_partition(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    store = LocalStore(root)
    upload_fifteen_records(store, ts=T0)
    request = tmp_path / "delete.json"
    request.write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [
                    {"topic": "t", "partition": 0, "offset": 6},
                    {"topic": "t", "partition": 9, "offset": 1},
                ],
            }
        )
    )

    done = cli("delete-records", "--lake", str(root), "--offset-json-file", str(request), "--now", str(T0))

    assert done.returncode == 1
    assert "partition: t-0\tlow_watermark: 6" in done.stdout
    assert "partition: t-9\terror: UNKNOWN_TOPIC_OR_PARTITION" in done.stdout
    assert "1 of 2 partition(s) failed" in done.stderr
    assert bases(store) == [5, 10]
    dumped = cli("dump", "--lake", str(root), "--topic", "t", "--partition", "0", "--json")
    assert dumped.returncode == 0, dumped.stderr
    document = json.loads(dumped.stdout)
    offsets = [r["offset"] for s in document["segments"] for b in s["batches"] for r in b["records"]]
    assert offsets == list(range(6, 15))
    exported = cli("export", "--lake", str(root), "--to", str(tmp_path / "logdir"))
    assert exported.returncode == 0, exported.stderr
    # a broker opening the export hides offsets 5 and below in the kept segment [5-9], as Kafka does
    assert (tmp_path / "logdir" / "log-start-offset-checkpoint").read_text() == "0\n1\nt 0 6\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"version": 2, "partitions": []}', "Not supported version field value 2"),
        ('{"version": 1}', "Missing partitions field"),
        (
            '{"partitions": [{"topic": "t", "partition": 0, "offset": 1}, '
            '{"topic": "t", "partition": 0, "offset": 2}]}',
            "Offset json file contains duplicate topic partitions: t-0",
        ),
        ("not json", "not valid JSON"),
    ],
)
def test_delete_records_refuses_a_bad_file_whole(tmp_path: Path, content: str, message: str) -> None:
    root = tmp_path / "lake"
    upload_fifteen_records(LocalStore(root), ts=T0)
    request = tmp_path / "delete.json"
    request.write_text(content)
    done = cli("delete-records", "--lake", str(root), "--offset-json-file", str(request))
    assert done.returncode == 2
    assert message in done.stderr
    assert manifest_versions(LocalStore(root)) == []


def test_run_rejects_a_bad_config_before_any_work(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    upload_fifteen_records(LocalStore(root), ts=10)
    config = tmp_path / "bad.yaml"
    config.write_text("topics:\n  t:\n    retention.ms: -5\n")
    ran = cli("run", "--lake", str(root), "--config", str(config), "--now", str(T0))
    assert ran.returncode == 2
    assert "retention.ms" in ran.stderr
    assert manifest_versions(LocalStore(root)) == []


def test_run_on_s3(tmp_path: Path, config_file: Path) -> None:
    with s3_lake_env("cli-run", "kafka", lambda store: upload_fifteen_records(store, ts=10)) as env:
        lake = "s3://cli-run/kafka"
        ran = cli("run", "--lake", lake, "--config", str(config_file), "--now", str(T0), "--json", env=env)
        assert ran.returncode == 0, ran.stderr
        report = json.loads(ran.stdout)
        assert report["committed_version"] == 1  # adoption and retention in one commit
        described = cli("describe", "--lake", lake, "--json", env=env)
        assert described.returncode == 0, described.stderr
        (partition,) = json.loads(described.stdout)["partitions"]
        assert (partition["log_start_offset"], partition["log_end_offset"]) == (15, 15)


def test_describe_shows_the_group_holding_consumed_retention_back(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    upload_fifteen_records(LocalStore(root), ts=T0 - 2 * DAY)
    config = tmp_path / "c.yaml"
    config.write_text(
        "topics:\n  t:\n    retention.commitoffset.enable: true\n    retention.commitoffset.ms: 86400000\n"
    )
    snapshot = write_snapshot(
        tmp_path / "offsets.json", [group("billing", [(0, 7, T0)], subscribed=["t"])], taken_at_ms=T0
    )
    assert cli("adopt", "--lake", str(root), "--now", str(T0)).returncode == 0
    common = [
        "describe",
        "--lake",
        str(root),
        "--config",
        str(config),
        "--offsets",
        str(snapshot),
        "--now",
        str(T0),
    ]

    text = cli(*common)
    as_json = cli(*common, "--json")

    assert text.returncode == 0, text.stderr
    assert "held back by group billing (at 7; lag 8 records" in text.stdout
    (partition,) = json.loads(as_json.stdout)["partitions"]
    assert partition["holder"]["group_id"] == "billing"
    assert partition["consumed"]["min_committed_offset"] == 7
    assert partition["next_run"]["deleted"]["consumed"]["segments"] == 1
