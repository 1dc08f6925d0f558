"""``kafka-segments adopt``, ``recover`` and ``gc`` as a user runs them: real processes on a local lake that
started as a copied Kafka log directory, and on S3 (the embedded moto server through ``AWS_ENDPOINT_URL``)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import cli
from e2e.s3_cli import s3_lake_env
from kafka_segments.checkpoint import format_offset_checkpoint
from kafka_segments.demo import sample_topic
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.commit import commit_manifest
from kafka_segments.lake.history import manifest_versions, read_head
from kafka_segments.lake.run_folder import read_staged_manifest
from kafka_segments.lake.staging import begin_run, build_manifest, stage_manifest
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.timefmt import parse_time_ms
from kafka_segments.topic_partition import TopicPartition

pytestmark = pytest.mark.e2e

BUCKET = "cli-admin"
NOW = "2025-11-21T04:40:00Z"


def copy_log_dir(store: ObjectStore) -> None:
    """The sample topic as a broker's log directory: segment files plus a log-start-offset-checkpoint."""
    for segment in sample_topic():
        for key, data in segment.objects().items():
            store.put(key, data)
    store.put("log-start-offset-checkpoint", format_offset_checkpoint({TopicPartition("orders", 1): 3}))


def test_adopt_bootstraps_a_copied_log_directory_then_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    store = LocalStore(root)
    copy_log_dir(store)

    first = cli("adopt", "--lake", str(root), "--now", NOW, "--json")

    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["committed_version"] == 1
    head = read_head(store)
    assert head is not None
    assert [(str(p.topic_partition), p.log_start_offset, len(p.segments)) for p in head.partitions] == [
        ("orders-0", 0, 2),
        ("orders-1", 3, 2),
    ]
    again = cli("adopt", "--lake", str(root), "--now", NOW)
    assert again.returncode == 0, again.stderr
    assert manifest_versions(store) == [1]
    described = cli("describe", "--lake", str(root))
    assert described.returncode == 0, described.stderr
    assert "orders" in described.stdout


CORRUPT_KEY = "orders-1/00000000000000000000.log"


def copy_log_dir_with_a_corrupt_segment(store: ObjectStore) -> None:
    """The copied log directory with a damaged batch in ``CORRUPT_KEY``."""
    copy_log_dir(store)
    data = bytearray(store.get(CORRUPT_KEY))
    data[80] ^= 0xFF
    store.put(CORRUPT_KEY, bytes(data))


def test_adopt_quarantines_a_corrupt_segment_and_exits_1(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    store = LocalStore(root)
    copy_log_dir_with_a_corrupt_segment(store)

    result = cli("adopt", "--lake", str(root), "--now", NOW)

    assert result.returncode == 1
    assert result.stderr == "kafka-segments adopt: 1 partition(s) quarantined: orders-1\n"
    assert CORRUPT_KEY in result.stdout
    head = read_head(store)
    assert head is not None
    assert [str(p.topic_partition) for p in head.partitions] == ["orders-0"]


def test_adopt_streams_the_bootstrap_in_format_2_and_reports_as_format_1_did(tmp_path: Path) -> None:
    """``adopt`` on a lake without a version (the streamed bootstrap, format 2) prints the report the format 1
    bootstrap gives (the previous release's), quarantine and exit code included, and commits version 1 in
    format 2."""
    reference_root = tmp_path / "lake-1"
    copy_log_dir_with_a_corrupt_segment(LocalStore(reference_root))
    reference = adopt(LocalStore(reference_root), now_ms=parse_time_ms(NOW), manifest_format=1)
    root = tmp_path / "lake-2"
    store = LocalStore(root)
    copy_log_dir_with_a_corrupt_segment(store)
    result = cli("adopt", "--lake", str(root), "--now", NOW, "--json")
    assert result.returncode == 1
    assert result.stderr == "kafka-segments adopt: 1 partition(s) quarantined: orders-1\n"
    head = read_head(store)
    assert head is not None
    assert (head.format_version, [str(p.topic_partition) for p in head.partitions]) == (2, ["orders-0"])
    printed = json.loads(result.stdout)
    ignored = {"run_id": "", "recover": None}
    assert {**printed, **ignored} == {**reference.to_dict(), **ignored}
    assert len(printed["adopted"]) == 2


def test_gc_is_a_dry_run_unless_told_to_execute(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    copy_log_dir(LocalStore(root))
    assert cli("adopt", "--lake", str(root), "--now", NOW).returncode == 0

    dry = cli("gc", "--lake", str(root), "--json")
    executed = cli("gc", "--lake", str(root), "--execute", "--json")

    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["dry_run"] is True
    assert executed.returncode == 0, executed.stderr
    assert json.loads(executed.stdout)["dry_run"] is False


def test_gc_deletes_the_folders_of_ended_runs_only_with_a_run_folder_retention(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    copy_log_dir(LocalStore(root))
    assert cli("adopt", "--lake", str(root), "--now", NOW).returncode == 0  # commits version 1
    assert cli("adopt", "--lake", str(root), "--now", NOW).returncode == 0  # nothing new: ends uncommitted
    runs = root / "_kafka_segments" / "runs"
    head = read_head(LocalStore(root))
    assert head is not None
    first = head.run_id
    (second,) = {path.name for path in runs.iterdir()} - {first}  # run ids of one second sort at random
    later = ["--now", "2099-01-01T00:00:00Z", "--execute", "--json"]

    kept = cli("gc", "--lake", str(root), *later)
    expired = cli("gc", "--lake", str(root), *later, "--run-folder-retention-ms", "86400000")

    assert kept.returncode == 0, kept.stderr
    assert json.loads(kept.stdout)["expired_runs"] == []
    assert expired.returncode == 0, expired.stderr
    assert [run["run_id"] for run in json.loads(expired.stdout)["expired_runs"]] == [second]
    assert sorted(path.name for path in runs.iterdir() if any(path.iterdir())) == [first]  # the head's


def test_a_run_folder_retention_under_an_hour_is_refused_as_a_bad_argument(tmp_path: Path) -> None:
    result = cli("gc", "--lake", str(tmp_path), "--run-folder-retention-ms", "60000")

    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert "argument --run-folder-retention-ms: must be at least 3600000 (1 hour" in last
    assert "Traceback" not in result.stderr


def test_recover_on_a_settled_lake_reports_nothing_to_do(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    copy_log_dir(LocalStore(root))
    assert cli("adopt", "--lake", str(root), "--now", NOW).returncode == 0
    (root / "log-start-offset-checkpoint").unlink()  # a crash after the commit, before the files

    result = cli("recover", "--lake", str(root), "--json")

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["checkpoint_files_rewritten"] is True
    assert (root / "log-start-offset-checkpoint").read_bytes() == format_offset_checkpoint(
        {TopicPartition("orders", 1): 3}
    )


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["adopt", "--lake", "/nonexistent/lake"], "no lake at /nonexistent/lake"),
        (["gc", "--lake", "ftp://host/lake"], "unsupported scheme"),
        (["recover", "--lake", "s3://"], "missing or invalid S3 bucket"),
    ],
)
def test_bad_lakes_get_a_one_line_reason(args: list[str], reason: str) -> None:
    result = cli(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert reason in result.stderr
    assert result.stderr.startswith(f"kafka-segments {args[0]}: ")


@pytest.fixture(scope="module")
def s3_env() -> Iterator[dict[str, str]]:
    with s3_lake_env(BUCKET, "team/lake", copy_log_dir) as env:
        yield env


def test_adopt_recover_gc_on_s3(s3_env: dict[str, str]) -> None:
    lake = f"s3://{BUCKET}/team/lake"
    adopted = cli("adopt", "--lake", lake, "--now", NOW, "--json", env=s3_env)
    assert adopted.returncode == 0, adopted.stderr
    assert json.loads(adopted.stdout)["committed_version"] == 1
    assert cli("recover", "--lake", lake, env=s3_env).returncode == 0
    gc = cli("gc", "--lake", lake, env=s3_env)
    assert gc.returncode == 0, gc.stderr
    assert "dry run" in gc.stdout.lower()


def test_adopt_starts_by_settling_a_run_that_committed_but_crashed_before_finishing(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    store = LocalStore(root)
    copy_log_dir(store)
    assert cli("adopt", "--lake", str(root), "--now", NOW).returncode == 0
    head = read_head(store)
    assert head is not None
    run, base = begin_run(store, now_ms=0, operation="run")
    stage_manifest(store, run, build_manifest(run, base=base, partitions=head.partitions))
    commit_manifest(store, dataclasses.replace(read_staged_manifest(store, run.run_id), committed_at_ms=1))
    # the process died here: no outcome, checkpoint files not rewritten

    result = cli("adopt", "--lake", str(root), "--now", NOW, "--json")

    assert result.returncode == 0, result.stderr
    settled = json.loads(result.stdout)["recover"]
    assert [(r["run_id"], r["action"]) for r in settled["runs"]] == [(run.run_id, "finished")]
