"""``validate_run`` on honest staged runs: Kafka's own plan passes every suite, the result and the Data Docs
land in the run's folder, and ``commit_staged`` then commits. Also the trivial cases (nothing staged, dry
runs) and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kafka_segments.config import Config
from kafka_segments.demo import EmbeddedS3
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.history import head_version
from kafka_segments.lake.run_folder import run_file_key
from kafka_segments.pipeline.stages import VALIDATION, commit_staged, finish_run, read_run_json
from kafka_segments.storage import LocalStore, ObjectStore, S3Store
from kit import FakeClock
from lake.retention_helpers import bases, partition
from segment_quality import validate_run
from segment_quality.cli import main
from segment_quality.results import NOTHING_STAGED

from quality.helpers import (
    NOW,
    QUIET,
    TP,
    four_pass_config,
    four_pass_lake,
    four_pass_yaml,
    stage,
    upload_partition,
)

pytestmark = pytest.mark.quality


def _reasons(store: ObjectStore, run_id: str) -> list[str]:
    plan = read_run_json(store, run_id, "plan.json")["plan"]
    return [d["reason"] for p in plan["partitions"] for d in p["deleted_segments"]]


def test_kafkas_own_four_pass_plan_passes_and_commits(
    store: ObjectStore, tmp_path: Path, clock: FakeClock
) -> None:
    snapshot = four_pass_lake(store, tmp_path, clock)
    cfg = four_pass_config()
    run_id = stage(store, cfg, clock, snapshot=snapshot)
    assert _reasons(store, run_id) == ["log-start-offset", "retention.bytes", "consumed", "retention.ms"]

    report = validate_run(store, run_id, config=cfg)

    assert report.success
    assert [suite.name for suite in report.suites] == [
        "retention.partitions",
        "retention.deletions",
        "compaction.partitions",
        "compaction.segments",
    ]
    # t-0 only: the run leaves t-1 (nothing due by its summary) unread and the gate validates what it read;
    # no compacted topic: nothing cleaned
    assert [suite.rows for suite in report.suites] == [1, 4, 1, 0]
    assert report.failed == ()
    assert report.validation_key == run_file_key(run_id, VALIDATION)
    assert report.data_docs_key == run_file_key(run_id, "data-docs/index.html")
    assert report.data_docs_location == store.location(report.data_docs_key)
    assert b"retention.deletions" in store.get(report.data_docs_key)
    document = read_run_json(store, run_id, VALIDATION)
    assert document["run_id"] == run_id
    assert document["success"] is True
    assert document["data_docs"] == report.data_docs_key
    expectations = document["suites"][1]["expectations"]
    assert {e["invariant"] for e in expectations} >= {"consumed-deletion-below-min-committed-offset"}
    assert all(e["success"] and e["type"].startswith("expect_") for e in expectations)

    outcome = commit_staged(store, run_id, clock=clock)

    assert outcome.outcome == "committed"
    assert outcome.version == 2
    assert bases(store, TP) == [20, 25]
    assert partition(store, TP).log_start_offset == 20
    assert bases(store, QUIET) == [0, 5, 10]
    assert finish_run(store, run_id)["validation"]["data_docs"] == report.data_docs_key


def test_the_data_docs_site_is_complete_in_the_run_folder(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock
) -> None:
    snapshot = four_pass_lake(local_store, tmp_path, clock)
    run_id = stage(local_store, four_pass_config(), clock, snapshot=snapshot)

    report = validate_run(local_store, run_id, config=four_pass_config())
    again = validate_run(local_store, run_id, config=four_pass_config())  # a retried task

    docs = [meta.key for meta in local_store.list(run_file_key(run_id, "data-docs/"))]
    pages = [key for key in docs if key.endswith(".html") and "/static/" not in key]
    assert report.data_docs_key == again.data_docs_key
    assert len([key for key in pages if "/validations/" in key]) == 4  # the first run's pages were replaced
    assert len([key for key in pages if "/expectations/" in key]) == 4
    assert any(key.endswith(".css") for key in docs)
    assert Path(str(report.data_docs_location)).is_file()


def test_a_run_with_nothing_staged_passes_trivially_and_says_so(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock
) -> None:
    upload_partition(local_store, QUIET, (NOW, NOW, NOW))
    adopt(local_store, now_ms=NOW, clock=clock)
    run_id = stage(local_store, Config.default(), clock)  # 7 days of retention.ms: nothing to delete
    assert read_run_json(local_store, run_id, "staged.json")["changed"] is False

    report = validate_run(local_store, run_id, config=Config.default())

    assert report.success
    assert report.note == NOTHING_STAGED
    assert [suite.rows for suite in report.suites] == [0, 0, 0, 0]
    assert read_run_json(local_store, run_id, VALIDATION)["note"] == NOTHING_STAGED
    assert commit_staged(local_store, run_id, clock=clock).outcome == "nothing to change"
    assert head_version(local_store) == 1


def test_a_dry_run_is_validated_like_a_real_one_and_commits_nothing(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock
) -> None:
    snapshot = four_pass_lake(local_store, tmp_path, clock)
    run_id = stage(local_store, four_pass_config(), clock, snapshot=snapshot, dry_run=True)

    report = validate_run(local_store, run_id, config=four_pass_config())

    assert report.success
    assert [suite.rows for suite in report.suites] == [1, 4, 1, 0]  # t-1 unread, as above
    assert commit_staged(local_store, run_id, clock=clock).outcome == "dry run"
    assert head_version(local_store) == 1


def test_cli_validates_an_s3_lake_and_prints_where_the_results_are(
    s3_server: EmbeddedS3,
    tmp_path: Path,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from s3_fixtures import new_s3_store

    store: S3Store = new_s3_store(s3_server)
    snapshot = four_pass_lake(store, tmp_path, clock)
    run_id = stage(store, four_pass_config(), clock, snapshot=snapshot)
    config_file = tmp_path / "config.yaml"
    config_file.write_text(four_pass_yaml())
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint_url)
    lake = f"s3://{store.bucket}/{store.prefix}"

    code = main(["validate", "--lake", lake, "--run-id", run_id, "--config", str(config_file)])

    out = capsys.readouterr().out
    assert code == 0
    assert f"run {run_id} passed validation" in out
    assert f"Data Docs: s3://{store.bucket}/" in out
    assert run_file_key(run_id, "data-docs/index.html") in out
    assert run_file_key(run_id, VALIDATION) in out

    code = main(["validate", "--lake", lake, "--run-id", run_id, "--config", str(config_file), "--json"])

    assert code == 0
    assert json.loads(capsys.readouterr().out)["success"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "the following arguments are required"),
        (["validate", "--lake", "gs://bucket/x", "--run-id", "r1"], "unsupported scheme"),
        (
            ["validate", "--lake", "{lake}", "--run-id", "never-prepared"],
            "no run 'never-prepared' in this lake",
        ),
    ],
)
def test_cli_usage_and_input_errors_exit_2_with_one_line(
    tmp_path: Path, args: list[str], message: str
) -> None:
    lake = tmp_path / "lake"
    lake.mkdir()
    argv = [arg.replace("{lake}", str(lake)) for arg in args]
    done = subprocess.run(
        [sys.executable, "-m", "segment_quality", *argv], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert message in done.stderr
    if args:
        assert done.stderr.count("\n") == 1
    assert done.stdout == ""


def test_importing_segment_quality_loads_no_great_expectations() -> None:
    code = (
        "import sys, segment_quality, segment_quality.cli, segment_quality.suites;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'great_expectations', 'pandas'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
