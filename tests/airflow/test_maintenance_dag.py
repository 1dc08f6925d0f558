"""The maintenance DAG for real (``dag.test()``): recover → snapshot → prepare → the retention step →
GX validation → commit → gc → report, on moto's S3 server through the ``aws_default`` connection.

A committing run, with the retention step as a Spark job (spark-submit on ``local[*]``: the one Airflow test
of the Spark job end to end); a manual dry run (read by two tests: what it reports, and that the command
line's dry runs, inline and on Spark, report the same) and a run whose staged output is corrupted between
the retention step and the validation, both with the step inline (Variable ``kafka_segments_engine``: their
claims are the DAG's, not Spark's). A run with an unusable lake fails at once.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from dag_helpers import (
    AIRFLOW_WARNINGS,
    asset_events,
    lineage_outputs,
    return_value,
    run_dag,
    task_states,
    try_numbers,
)
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS, EmbeddedS3
from kafka_segments.lake.checkpoint_files import checkpoint_files_match
from kafka_segments.lake.history import head_version
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.lake.run_folder import read_outcome, run_file_key
from kafka_segments.lake.runs import Outcome
from kafka_segments.pipeline.stages import VALIDATION
from kafka_segments.segment.writer import write_segment
from kafka_segments.storage import S3Store
from kafka_segments.topic_partition import TopicPartition
from kit import upload_segment
from lake.retention_helpers import bases, group, partition, single_record_batch, write_snapshot
from s3_fixtures import BUCKET, new_s3_store
from statsd_listener import StatsdListener

pytestmark = [pytest.mark.airflow, *(pytest.mark.filterwarnings(w) for w in AIRFLOW_WARNINGS)]

DAG_ID = "kafka_segments_maintenance"
HOUR = 3_600_000
DAY = 24 * HOUR
RETAINED = TopicPartition("t", 0)
"""retention.ms = 7 days: two segments are 10 days old."""
CONSUMED = TopicPartition("c", 0)
"""Consumed retention (KIP-68): group g has committed offset 7."""
CONFIG = """\
topics:
  t:
    retention.ms: 604800000
  c:
    retention.commitoffset.enable: true
    retention.commitoffset.ms: 0
"""
AFTER_VALIDATE = ("commit", "tables", "gc", "report")
ENGINE_VARIABLE = "AIRFLOW_VAR_KAFKA_SEGMENTS_ENGINE"


@dataclasses.dataclass(frozen=True)
class Lake:
    store: S3Store
    uri: str
    snapshot: Path


@pytest.fixture
def lake(
    s3_server: EmbeddedS3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kafka_segments_cache: Path
) -> Lake:
    """Segments [0-4] [5-9] [10-14] in t-0 and c-0 on a fresh S3 prefix, the Variables and the
    ``aws_default`` connection pointing at them; the process's own AWS settings removed, so the tasks reach
    S3 only through the connection (and the Spark job through the settings the operator passes on). The
    retention step runs inline unless a test sets the engine Variable to ``spark``."""
    return new_lake(s3_server, tmp_path, monkeypatch, cache=kafka_segments_cache)


@dataclasses.dataclass(frozen=True)
class ManualRun:
    """A manual trigger with the form's defaults (a dry run) on a fresh ``lake``, and the lake's committed
    state before it."""

    lake: Lake
    before: dict[str, bytes]
    run: Any
    gauges: dict[str, float]
    """The gauges StatsD received while the run ran."""


@pytest.fixture(scope="module")
def manual_run(
    s3_server: EmbeddedS3,
    tmp_path_factory: pytest.TempPathFactory,
    kafka_segments_cache: Path,
    statsd: StatsdListener,
) -> ManualRun:
    """One manual dry run of the DAG, which two tests read (each DAG run costs a validation): what it
    reports and leaves, and that the other doors report the same for it."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        lake = new_lake(
            s3_server, tmp_path_factory.mktemp("manual-run"), monkeypatch, cache=kafka_segments_cache
        )
        before = _committed_state(lake.store, set())
        sent_before = statsd.mark()
        run = run_dag(DAG_ID, {"offsets_source": str(lake.snapshot)})
        statsd.settle()
    return ManualRun(lake, before, run, statsd.gauges(since=sent_before))


def new_lake(s3_server: EmbeddedS3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, cache: Path) -> Lake:
    """What the ``lake`` fixture returns, with the environment set through ``monkeypatch`` (the library
    archive and its kernels cached in ``cache``, the session's, so the kernels are compiled once)."""
    store = new_s3_store(s3_server)
    now = int(time.time() * 1000)
    for tp, stamps in (
        (RETAINED, (now - 10 * DAY, now - 10 * DAY, now - HOUR)),
        (CONSUMED, (now - HOUR,) * 3),
    ):
        for base, stamp in zip((0, 5, 10), stamps, strict=True):
            batches = [single_record_batch(o, ts=stamp) for o in range(base, base + 5)]
            upload_segment(store, tp, write_segment(batches, base_offset=base))
    config = tmp_path / "kafka-segments.yaml"
    config.write_text(CONFIG)
    snapshot = write_snapshot(
        tmp_path / "offsets.json", [group("g", [(0, 7, now - HOUR)], topic="c")], taken_at_ms=now - 60_000
    )
    uri = f"s3://{BUCKET}/{store.prefix}"
    connection = {
        "conn_type": "aws",
        "login": EMBEDDED_CREDENTIALS["aws_access_key_id"],
        "password": EMBEDDED_CREDENTIALS["aws_secret_access_key"],
        "extra": {"endpoint_url": s3_server.endpoint_url, "region_name": DEFAULT_REGION},
    }
    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_SEGMENTS_LAKE", uri)
    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_SEGMENTS_CONFIG", str(config))
    monkeypatch.delenv("AIRFLOW_VAR_KAFKA_SEGMENTS_OFFSETS_SOURCE", raising=False)
    monkeypatch.setenv("AIRFLOW_CONN_AWS_DEFAULT", json.dumps(connection))
    monkeypatch.delenv("AIRFLOW_CONN_SPARK_DEFAULT", raising=False)
    monkeypatch.setenv("KAFKA_SEGMENTS_CACHE_DIR", str(cache))
    monkeypatch.setenv(ENGINE_VARIABLE, "inline")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    return Lake(store, uri, snapshot)


def _partitions(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"{p['topic']}-{p['partition']}": p for p in report["plan"]["partitions"]}


def test_a_committing_run_applies_retention_and_publishes_its_report(
    lake: Lake, statsd: StatsdListener, openlineage_events: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestration.assets import lake_asset
    from orchestration.lineage import topic_asset

    monkeypatch.setenv(ENGINE_VARIABLE, "spark")  # the DAG's Spark job, end to end
    config = Path(os.environ["AIRFLOW_VAR_KAFKA_SEGMENTS_CONFIG"])  # t as a table (docs/tables.md)
    catalog = config.with_name("catalog.db")
    config.write_text(
        CONFIG.replace("  t:\n", "  t:\n    kafka_segments.table.enable: true\n")
        + f"broker:\n  kafka_segments.table.catalog: [uri=sqlite:///{catalog}]\n"
    )
    sent_before = statsd.mark()
    run = run_dag(DAG_ID, {"dry_run": False, "offsets_source": str(lake.snapshot)})

    assert run.state == "success", task_states(run)
    assert head_version(lake.store) == 1
    assert partition(lake.store, RETAINED).log_start_offset == 10
    assert bases(lake.store, RETAINED) == [10]
    assert partition(lake.store, CONSUMED).log_start_offset == 5
    assert bases(lake.store, CONSUMED) == [5, 10]
    head = resolve_manifest(lake.store)
    assert checkpoint_files_match(lake.store, head)
    # LogManager.checkpointLogStartOffsetsInDir lists only log start offsets above the first segment's base;
    # both partitions now start exactly at a segment (version 0, no entries)
    assert lake.store.get("log-start-offset-checkpoint").decode().splitlines() == ["0", "0"]
    assert lake.store.get("cleaner-offset-checkpoint").decode().splitlines() == ["0", "0"]

    report = return_value(run, "report")
    assert report["outcome"] == "committed"
    assert report["engine"] == "spark"
    assert report["committed_version"] == 1
    assert report["now_ms"] == int(run.logical_date.timestamp() * 1000)  # a manual run's: its logical date
    assert report["labels"]["airflow_run_id"] == run.run_id
    partitions = _partitions(report)
    assert partitions["t-0"]["log_start_offset"] == {"before": 0, "after": 10}
    assert partitions["t-0"]["deleted"]["retention.ms"]["segments"] == 2
    assert partitions["c-0"]["log_start_offset"] == {"before": 0, "after": 5}
    assert partitions["c-0"]["deleted"]["consumed"]["segments"] == 1
    assert partitions["c-0"]["holder"]["group_id"] == "g"
    assert report["plan"]["totals"]["by_reason"]["retention.ms"]["bytes"] > 0
    assert report["validation"]["success"] is True
    assert report["validation"]["data_docs"].endswith("index.html")
    assert report["validation"]["page"] == run_file_key(report["run_id"], "validation.html")  # offline page
    assert b"<script" not in lake.store.get(report["validation"]["page"])
    assert report["gc"]["dry_run"] is False
    assert report["tables"]["synced"] is True  # the tables task, after the commit
    [table] = report["tables"]["report"]["tables"]
    assert (table["table"], table["to_version"], table["versions"][0]["rows_added"]) == (
        "kafka_segments.t",
        1,
        5,
    )
    assert list(lake.store.list("_kafka_segments/tables/warehouse/"))  # in the lake's own prefix
    assert json.loads(lake.store.get(report["report_key"])) == report
    events = asset_events(lake_asset(lake.uri).uri)
    assert [(e["extra"]["version"], e["extra"]["run_id"], e["source_run_id"]) for e in events] == [
        (1, report["run_id"], run.run_id)
    ]
    for topic in ("c", "t"):
        [event] = asset_events(topic_asset(lake.uri, topic).uri)
        assert (event["extra"]["version"], event["source_run_id"]) == (1, run.run_id)
    # OpenLineage (docs/airflow.md, "Lineage"): the commit's outputs are the lake and the topics it changed
    assert set(lineage_outputs(openlineage_events, run, "commit")) == {
        (f"s3://{BUCKET}", lake.store.prefix.rstrip("/")),
        (f"s3://{BUCKET}", f"{lake.store.prefix.rstrip('/')}/c"),
        (f"s3://{BUCKET}", f"{lake.store.prefix.rstrip('/')}/t"),
    }
    statsd.settle()
    _assert_metrics_received(statsd.gauges(since=sent_before), report)


def _assert_metrics_received(received: dict[str, float], report: dict[str, Any]) -> None:
    """The report's metrics reached StatsD through Airflow's metrics, under the names of docs/metrics.md."""
    from orchestration.metrics import metric_gauges

    sent = {f"airflow.{name}": float(value) for name, value, _ in metric_gauges(report["metrics"], lake="")}
    assert {name: received.get(name) for name in sent} == sent
    holder = _partitions(report)["c-0"]["holder"]
    assert received["airflow.kafka_segments.log.t.0.LogStartOffset"] == 10
    assert received["airflow.kafka_segments.log.c.0.consumed-retention-held-records"] == holder["lag_records"]
    assert received["airflow.kafka_segments.retention.retention.ms.segments-deleted"] == 2
    assert (
        received["airflow.kafka_segments.retention.bytes-deleted"]
        == report["plan"]["totals"]["bytes_deleted"]
    )
    assert received["airflow.kafka_segments.uncleanable-partitions-count"] == 0
    assert "airflow.kafka_segments.max-dirty-percent" in received


def test_a_manual_trigger_is_a_dry_run_that_commits_nothing(manual_run: ManualRun) -> None:
    from orchestration.assets import lake_asset

    lake, run = manual_run.lake, manual_run.run

    assert run.state == "success", task_states(run)
    states = task_states(run)
    assert {task: states[task] for task in AFTER_VALIDATE} == {  # the grid shows what did not happen
        "commit": "skipped",
        "tables": "skipped",
        "gc": "skipped",
        "report": "success",
    }
    assert [name for name in manual_run.gauges if "kafka_segments" in name] == []  # a preview publishes none
    report = return_value(run, "report")
    assert report["outcome"] == "dry run"
    assert report["engine"] == "inline"  # the Variable kafka_segments_engine: no Spark job
    assert report["dry_run"] is True
    assert report["committed_version"] is None
    assert report["validation"]["success"] is True
    assert _partitions(report)["t-0"]["log_start_offset"] == {"before": 0, "after": 10}  # what would happen
    assert report["gc"]["dry_run"] is True
    assert head_version(lake.store) is None
    ended = read_outcome(lake.store, report["run_id"])
    assert ended is not None
    assert ended.outcome is Outcome.ABORTED
    assert report["offsets_snapshot"]["id"] is None  # a dry run stores and pins nothing
    assert json.loads(lake.store.get(report["report_key"])) == report
    assert asset_events(lake_asset(lake.uri).uri) == []


def test_the_runs_task_instances_link_to_its_lake_runs_files(manual_run: ManualRun) -> None:
    """Issue 37 point 7: from the Airflow run to its report, validation page and Data Docs (the plugin's
    extra links, as the API server asks them for the UI); the files they name are in the lake run's folder."""
    from airflow.models.taskinstancekey import TaskInstanceKey
    from dag_helpers import load_dag
    from orchestration.lake_run_links import run_file_links

    run = manual_run.run
    lake_run = return_value(run, "report")["run_id"]
    operator = load_dag(DAG_ID).get_task("report")
    key = TaskInstanceKey(DAG_ID, "report", run.run_id, 1, -1)
    links = {link.name: link.get_link(operator, ti_key=key) for link in run_file_links()}
    files = f"/kafka-segments/lakes/default/runs/{lake_run}/"
    assert links == {
        "Lake run: report": files + "report.json",
        "Lake run: validation": files + "validation.html",
        "Lake run: Data Docs": files + "data-docs/index.html",
    }
    for name in ("report.json", "validation.html", "data-docs/index.html"):
        assert manual_run.lake.store.get(run_file_key(lake_run, name))
    other = TaskInstanceKey("kafka_segments_delete_records", "report", run.run_id, 1, -1)
    assert run_file_links()[0].get_link(operator, ti_key=other) == ""


def test_a_corrupted_staged_output_fails_validation_and_is_never_committed(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestration import maintenance

    validate = maintenance.validate
    corrupted: list[str] = []

    def corrupt_then_validate(context: Any, prepared: dict[str, Any]) -> dict[str, Any]:
        _corrupt_staged_manifest(lake.store, prepared["run_id"])
        corrupted.append(prepared["run_id"])
        return validate(context, prepared)

    monkeypatch.setattr(maintenance, "validate", corrupt_then_validate)

    run = run_dag(DAG_ID, {"dry_run": False, "offsets_source": str(lake.snapshot)})

    assert run.state == "failed"
    states = task_states(run)
    assert states["spark_retention"] == "success"
    assert states["validate"] == "failed"
    assert {states[task] for task in AFTER_VALIDATE} == {"upstream_failed"}
    assert try_numbers(run)["validate"] == 1  # no retry: the data will not get better
    assert head_version(lake.store) is None
    [run_id] = corrupted
    validation = json.loads(lake.store.get(run_file_key(run_id, VALIDATION)))
    assert validation["success"] is False
    failed = [e["invariant"] for s in validation["suites"] for e in s["expectations"] if not e["success"]]
    assert "log-end-offset-unchanged" in failed
    ended = read_outcome(lake.store, run_id)
    assert ended is not None
    assert ended.outcome is Outcome.ABORTED


def test_an_unusable_lake_fails_the_run_at_once_without_a_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_SEGMENTS_LAKE", "ftp://example.com/lake")

    run = run_dag(DAG_ID, {"dry_run": False})

    assert run.state == "failed"
    states = task_states(run)
    assert states["recover"] == "failed"
    assert try_numbers(run)["recover"] == 1
    assert {state for task, state in states.items() if task != "recover"} == {"upstream_failed"}


def _corrupt_staged_manifest(store: S3Store, run_id: str) -> None:
    """Move t-0's log end offset in the run's staged manifest: deleting segments never does that."""
    from kafka_segments.lake.codec import manifest_to_json
    from kafka_segments.lake.layout import staged_manifest_key
    from kafka_segments.lake.run_folder import read_staged_manifest
    from kafka_segments.storage import Overwrite

    staged = read_staged_manifest(store, run_id)
    partitions = tuple(
        dataclasses.replace(state, log_end_offset=state.log_end_offset + 1000)
        if state.topic_partition == RETAINED
        else state
        for state in staged.partitions
    )
    store.put(
        staged_manifest_key(run_id),
        manifest_to_json(dataclasses.replace(staged, partitions=partitions)),
        mode=Overwrite(),
    )


def _committed_state(store: S3Store, dry_run_ids: set[str]) -> dict[str, bytes]:
    """Every object of the lake with its bytes, less what the dry runs wrote under their own names."""
    return {
        meta.key: store.get(meta.key)
        for meta in store.list()
        if not any(
            meta.key.startswith(f"_kafka_segments/runs/{run_id}/") or f"-{run_id}." in meta.key
            for run_id in dry_run_ids
        )
    }


def test_a_dry_run_means_the_same_through_every_door(
    manual_run: ManualRun,
    s3_server: EmbeddedS3,
    kafka_segments_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The DAG's manual trigger, ``run --dry-run`` inline and ``run --dry-run --engine spark``: the same lake,
    configuration, offsets and ``now`` give the same report, and the lake's committed state stays
    byte-identical (docs/lake.md, "Dry runs")."""
    from kafka_segments.cli.main import main

    lake, before = manual_run.lake, manual_run.before
    dag_report = return_value(manual_run.run, "report")
    monkeypatch.setenv("KAFKA_SEGMENTS_CACHE_DIR", str(kafka_segments_cache))
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint_url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", EMBEDDED_CREDENTIALS["aws_access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", EMBEDDED_CREDENTIALS["aws_secret_access_key"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", DEFAULT_REGION)
    config = str(Path(str(lake.snapshot)).with_name("kafka-segments.yaml"))
    common = ["--lake", lake.uri, "--config", config, "--offsets", str(lake.snapshot)]
    reports = {"dag": dag_report}
    for door, extra in (("inline", []), ("spark", ["--engine", "spark", "--spark-master", "local[1]"])):
        capsys.readouterr()
        argv = ["run", "--dry-run", "--json", "--now", str(dag_report["now_ms"]), *common, *extra]
        assert main(argv) == 0
        reports[door] = json.loads(capsys.readouterr().out)

    for door, report in reports.items():
        assert report["outcome"] == "dry run", door
        assert report["committed_version"] is None, door
        assert report["plan"] == dag_report["plan"], door
        assert report["adoption"] == dag_report["adoption"], door
    assert head_version(lake.store) is None
    assert _committed_state(lake.store, {report["run_id"] for report in reports.values()}) == before
