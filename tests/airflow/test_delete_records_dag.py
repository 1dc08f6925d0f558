"""The delete-records DAG for real (``dag.test()``): KIP-107's deleteRecords from the
``kafka-delete-records.sh`` JSON, a dry run by default, per-partition results in the log and the report (XCom
and lake), one commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dag_helpers import AIRFLOW_WARNINGS, asset_events, lineage_outputs, return_value, run_dag, task_states
from kafka_segments.lake.history import head_version
from kafka_segments.storage import LocalStore
from lake.retention_helpers import TP, bases, partition, upload_fifteen_records

pytestmark = [pytest.mark.airflow, *(pytest.mark.filterwarnings(w) for w in AIRFLOW_WARNINGS)]

DAG_ID = "kafka_segments_delete_records"
REQUEST = {
    "version": 1,
    "partitions": [
        {"topic": "t", "partition": 0, "offset": 7},
        {"topic": "missing", "partition": 0, "offset": 1},
    ],
}


@pytest.fixture
def lake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalStore:
    """A local lake with t-0 = segments [0-4] [5-9] [10-14], named by the Variable; ``dag.test()``'s user
    (``dag_test``) may commit; no other settings."""
    store = LocalStore(tmp_path / "lake")
    upload_fifteen_records(store)
    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_SEGMENTS_LAKE", str(tmp_path / "lake"))
    for name in ("AIRFLOW_VAR_KAFKA_SEGMENTS_CONFIG", "AIRFLOW_VAR_KAFKA_SEGMENTS_OFFSETS_SOURCE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AIRFLOW_CONN_AWS_DEFAULT", raising=False)
    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_SEGMENTS_DELETE_RECORDS_ALLOWED", "dag_test")
    return store


def test_delete_records_is_a_dry_run_unless_told_otherwise(
    lake: LocalStore, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO")
    run = run_dag(DAG_ID, {"request": REQUEST})

    assert run.state == "success", task_states(run)
    report = return_value(run, "delete_records")
    assert report["outcome"] == "dry run"
    assert report["dry_run"] is True
    assert report["committed_version"] is None
    assert [(r["topic"], r["low_watermark"], r["error"]) for r in report["results"]] == [
        ("t", 7, None),
        ("missing", None, "UNKNOWN_TOPIC_OR_PARTITION"),
    ]
    assert report["failed_partitions"] == 1
    assert head_version(lake) is None  # nothing committed, nothing adopted
    stored = json.loads(lake.get(report["report_key"]))
    assert stored == report
    assert "partition: t-0\tlow_watermark: 7" in caplog.text
    assert "partition: missing-0\terror: UNKNOWN_TOPIC_OR_PARTITION" in caplog.text


def test_delete_records_commits_the_new_log_start_offsets_and_emits_a_lake_event(
    lake: LocalStore, openlineage_events: Path
) -> None:
    from orchestration.assets import lake_asset, lake_asset_uri
    from orchestration.lineage import topic_asset

    run = run_dag(DAG_ID, {"request": REQUEST, "dry_run": False})

    assert run.state == "success", task_states(run)
    report = return_value(run, "delete_records")
    assert report["outcome"] == "committed"
    assert report["committed_version"] == head_version(lake) == 1
    assert partition(lake).log_start_offset == 7  # Partition.deleteRecordsOnLeader: max(current, offset)
    assert bases(lake) == [5, 10]  # [0-4] is wholly below 7: retired in the same commit
    assert report["results"][1]["error"] == "UNKNOWN_TOPIC_OR_PARTITION"  # its error changes nothing else
    assert json.loads(lake.get(report["report_key"]))["run_id"] == report["run_id"]
    assert lake.get("log-start-offset-checkpoint").decode().splitlines()[2:] == [
        f"{TP.topic} {TP.partition} 7"
    ]
    events = asset_events(lake_asset(str(lake.root)).uri)
    assert [(e["extra"]["version"], e["source_run_id"]) for e in events] == [(1, run.run_id)]
    topic_events = asset_events(topic_asset(str(lake.root), TP.topic).uri)
    assert [(e["extra"]["version"], e["source_run_id"]) for e in topic_events] == [(1, run.run_id)]
    # OpenLineage (docs/airflow.md, "Lineage"): the lake and the topic it changed, as local files
    root = lake_asset_uri(str(lake.root)).removeprefix("file://")
    assert set(lineage_outputs(openlineage_events, run, "delete_records")) == {
        ("file", root),
        ("file", f"{root}/{TP.topic}"),
    }


def test_a_malformed_request_fails_the_run_without_a_retry(lake: LocalStore) -> None:
    duplicated = {"version": 1, "partitions": [REQUEST["partitions"][0], REQUEST["partitions"][0]]}

    run = run_dag(DAG_ID, {"request": duplicated, "dry_run": False})

    assert run.state == "failed"
    assert task_states(run) == {"delete_records": "failed"}  # not up_for_retry: retrying cannot help
    assert head_version(lake) is None


def test_a_dry_run_means_the_same_from_the_dag_and_the_command_line(
    lake: LocalStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The DAG's default trigger and ``delete-records --dry-run`` give the same results and leave every
    object outside their own run folders byte-identical (docs/lake.md, "Dry runs")."""
    from kafka_segments.cli.main import main

    def outside(run_ids: set[str]) -> dict[str, bytes]:
        folders = tuple(f"_kafka_segments/runs/{run_id}/" for run_id in run_ids)
        return {meta.key: lake.get(meta.key) for meta in lake.list() if not meta.key.startswith(folders)}

    before = outside(set())
    report = return_value(run_dag(DAG_ID, {"request": REQUEST}), "delete_records")
    request_file = tmp_path / "delete.json"
    request_file.write_text(json.dumps(REQUEST))
    capsys.readouterr()
    argv = ["delete-records", "--lake", str(lake.root), "--offset-json-file", str(request_file)]
    assert main([*argv, "--dry-run", "--json", "--now", str(report["now_ms"])]) == 1  # one partition fails
    cli = json.loads(capsys.readouterr().out)

    assert cli["results"] == report["results"]
    assert cli["committed_version"] is report["committed_version"] is None
    assert head_version(lake) is None
    assert outside({report["run_id"], cli["run_id"]}) == before


def test_a_deeply_nested_request_param_fails_the_task_with_the_named_error(lake: LocalStore) -> None:
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from airflow.sdk.exceptions import AirflowFailException
    from orchestration.delete_records import delete_records_run

    request: list[object] = []
    inner = request
    for _ in range(100_000):  # json.dumps of it would end in a RecursionError
        inner.append([])
        inner = inner[0]  # type: ignore[assignment]
    when = datetime(2026, 1, 1, tzinfo=UTC)
    dag_run = SimpleNamespace(
        run_after=when, logical_date=None, data_interval_end=when, run_type="manual", run_id="m1"
    )
    context = {"params": {"request": {"version": 1, "partitions": request}}, "dag_run": dag_run}

    with pytest.raises(AirflowFailException) as failed:
        delete_records_run(context)  # type: ignore[arg-type]

    assert "DeleteRecordsFileError: the run's Param 'request': the input is nested deeper than 100" in str(
        failed.value
    )
    assert head_version(lake) is None
