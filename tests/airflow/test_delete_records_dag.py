"""The delete-records DAG for real (``dag.test()``): KIP-107's deleteRecords from the
``kafka-delete-records.sh`` JSON, a dry run by default, per-partition results in the log and the report (XCom
and lake), one commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dag_helpers import AIRFLOW_WARNINGS, asset_events, return_value, run_dag, task_states
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


def test_delete_records_commits_the_new_log_start_offsets_and_emits_a_lake_event(lake: LocalStore) -> None:
    from orchestration.assets import lake_asset

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


def test_a_malformed_request_fails_the_run_without_a_retry(lake: LocalStore) -> None:
    duplicated = {"version": 1, "partitions": [REQUEST["partitions"][0], REQUEST["partitions"][0]]}

    run = run_dag(DAG_ID, {"request": duplicated, "dry_run": False})

    assert run.state == "failed"
    assert task_states(run) == {"delete_records": "failed"}  # not up_for_retry: retrying cannot help
    assert head_version(lake) is None
