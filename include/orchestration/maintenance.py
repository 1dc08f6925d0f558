"""The maintenance DAG's tasks: one function per task, each one call into ``kafka_segments`` (or the quality
package), with the run's context in and a small JSON document out (``orchestration.handover``); the stages of
``kafka_segments.pipeline.stages``. A dry run skips recovery (a fence would be a commit) and commits nothing:
its ``commit`` and ``gc`` tasks end in Airflow's *skipped* state (after ending the lake run, and with gc's
report of what it would delete as their XCom), and its report sends no metrics.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kafka_segments.redaction import redact_uri

from orchestration.failures import task_failures
from orchestration.handover import RunHandle, offsets_from_xcom, offsets_to_xcom
from orchestration.run_parameters import RunParameters, lake_run_id, maintenance_parameters, run_now_ms
from orchestration.settings import LakeSettings, lake_store, load_run_config, read_lake_settings

if TYPE_CHECKING:
    from airflow.sdk import Context, PokeReturnValue
    from kafka_segments.pipeline.offsets_input import ResolvedOffsets

log = logging.getLogger(__name__)


def recover_in_turn(context: Context) -> PokeReturnValue:
    """Task ``recover`` (a sensor): wait for the run's turn on the lake (``lake_turns.take_turn_watching``:
    the run next in line watches the holder end), then ``recover_lake``; the recovery's document is the
    task's XCom."""
    from airflow.sdk import PokeReturnValue

    from orchestration.declarations import lake_turn_watch_seconds
    from orchestration.lake_turns import take_turn_watching

    with task_failures("recover"):
        settings = read_lake_settings()
        now_ms = run_now_ms(context["dag_run"])
        watch_s = lake_turn_watch_seconds()
        decision = take_turn_watching(context, settings.lake, now_ms=now_ms, watch_s=watch_s)
    if not decision.granted:
        return PokeReturnValue(is_done=False)
    return PokeReturnValue(is_done=True, xcom_value=recover_lake(context))


def recover_lake(context: Context) -> dict[str, Any]:
    """Task ``recover``: read the settings, resolve the run's parameters, and finish or discard interrupted
    runs (``lake.recover.recover``; skipped in a dry run)."""
    with task_failures("recover"):
        settings = read_lake_settings()
        parameters = maintenance_parameters(context, default_offsets_source=settings.offsets_source)
        _log_parameters(settings, parameters)
        recovered: dict[str, Any] | None = None
        from kafka_segments.pipeline.sequence import Stage, runs

        if not runs(Stage.RECOVER, dry_run=parameters.dry_run):
            log.info("dry run: recovery skipped (fencing an interrupted run would commit)")
        else:
            from kafka_segments.lake.recover import recover

            with lake_store(settings.lake) as store:
                report = recover(store)
            log.info("%s", report.to_text().rstrip())
            recovered = report.to_dict()
    return {"settings": settings.to_dict(), "parameters": parameters.to_dict(), "recovered": recovered}


def snapshot_consumer_offsets(context: Context, recovered: Mapping[str, Any]) -> dict[str, Any]:
    """Task ``snapshot_offsets``: the consumer offsets of the run's ``now``, pinned in the lake (unless a dry
    run) so that a rerun of the same time uses the same offsets (``stages.snapshot_offsets``)."""
    from kafka_segments.pipeline.stages import snapshot_offsets

    settings = LakeSettings.from_dict(recovered["settings"])
    parameters = RunParameters.from_dict(recovered["parameters"])
    with task_failures("snapshot_offsets"), lake_store(settings.lake) as store:
        resolved = snapshot_offsets(
            store,
            parameters.offsets_choice(),
            now_ms=parameters.now_ms,
            dry_run=parameters.dry_run,
            topics=parameters.topics,
        )
    _log_offsets(resolved)
    return {
        "settings": settings.to_dict(),
        "parameters": parameters.to_dict(),
        "offsets": offsets_to_xcom(resolved),
    }


def prepare(context: Context, snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """Task ``prepare``: register the lake run on the current head with its request and offsets
    (``stages.prepare_run``; a retried task registers the same run id again)."""
    from kafka_segments.pipeline.stages import prepare_run

    settings = LakeSettings.from_dict(snapshot["settings"])
    parameters = RunParameters.from_dict(snapshot["parameters"])
    with task_failures("prepare"), lake_store(settings.lake) as store:
        request = prepare_run(
            store,
            now_ms=parameters.now_ms,
            offsets=offsets_from_xcom(store, snapshot.get("offsets")),
            dry_run=parameters.dry_run,
            selection=parameters.selection(),
            labels=parameters.labels,
            full_listing=parameters.full_listing,
            run_id=lake_run_id(context["dag_run"]),
        )
    handle = RunHandle(settings.lake, settings.config_path, request.run_id, request.dry_run, request.now_ms)
    log.info(
        "lake run %s prepared on base version %s (now=%d, %s)",
        request.run_id,
        request.base_version,
        request.now_ms,
        "dry run" if request.dry_run else "will commit if validated",
    )
    return handle.to_dict()


def execute_inline(handle: RunHandle) -> None:
    """Task ``spark_retention`` with the Variable ``kafka_segments_engine`` set to ``inline``: the run's
    execute stage (``stages.execute_run``: adopt, compact, plan, stage the new manifest) in this process,
    with the engine of ``kafka-segments run --engine inline``, instead of a Spark job."""
    from kafka_segments.pipeline.stages import execute_run

    with task_failures("spark_retention"), lake_store(handle.lake) as store:
        staged = execute_run(store, load_run_config(handle.config_path), handle.run_id)
    log.info(
        "lake run %s executed inline (Variable kafka_segments_engine): %s; adopted %d segment(s), "
        "%d quarantined; planned %d partition(s)",
        handle.run_id,
        "staged a new manifest" if staged.changed else "nothing to change",
        len(staged.result.adoption.adopted),
        len(staged.result.adoption.quarantined),
        len(staged.result.plan.partitions),
    )


def validate(context: Context, prepared: Mapping[str, Any]) -> dict[str, Any]:
    """Task ``validate``: the expectation suites over the staged output (``segment_quality.validate_run``,
    which writes ``validation.json`` and, on failure, ends the run without a commit)."""
    handle = RunHandle.from_dict(prepared)
    with task_failures("validate"):
        from segment_quality import validate_run

        config = load_run_config(handle.config_path)
        with lake_store(handle.lake) as store:
            try:
                report = validate_run(store, handle.run_id, config=config)
            except Exception:
                _log_validation_file(store, handle.run_id)
                raise
    log.info(
        "validation %s for lake run %s; results: %s; Data Docs: %s; readable offline: %s",
        "passed" if report.success else "FAILED",
        handle.run_id,
        report.validation_key,
        report.data_docs_location,
        report.page_location,
    )
    return {
        "run_id": report.run_id,
        "success": report.success,
        "validation_key": report.validation_key,
        "data_docs_key": report.data_docs_key,
        "data_docs_location": report.data_docs_location,
        "page_key": report.page_key,
        "page_location": report.page_location,
    }


def commit(context: Context, prepared: Mapping[str, Any]) -> dict[str, Any]:
    """Task ``commit``: one conditional PUT of the staged manifest, only after a successful validation
    (``stages.commit_staged``); a dry run or a run with nothing to change ends without a commit. A
    commit emits events for the lake's Asset and for each topic it changed (``orchestration.lineage``)."""
    from kafka_segments.lake.runs import RunOutcome
    from kafka_segments.pipeline.stages import commit_staged

    from orchestration.lineage import committed_topics, record_commit_lineage

    handle = RunHandle.from_dict(prepared)
    topics: list[str] = []
    with task_failures("commit"), lake_store(handle.lake) as store:
        outcome = commit_staged(store, handle.run_id)
        if outcome.outcome is RunOutcome.COMMITTED and outcome.version is not None:
            topics = committed_topics(store, outcome.version)
    if outcome.outcome is RunOutcome.COMMITTED:
        assets = record_commit_lineage(
            context["outlet_events"],
            handle.lake,
            topics,
            extra={"run_id": handle.run_id, "version": outcome.version, "now_ms": handle.now_ms},
        )
        log.info(
            "lake run %s committed version %s; asset events for %s",
            handle.run_id,
            outcome.version,
            ", ".join(asset.uri for asset in assets),
        )
    else:
        log.info("lake run %s: %s; nothing committed", handle.run_id, outcome.outcome)
    result = {"run_id": outcome.run_id, "outcome": outcome.outcome.value, "version": outcome.version}
    if handle.dry_run:
        _skip_dry_run(context, result, "nothing is committed (the report says what would change)")
    return result


def sync_tables(
    context: Context, prepared: Mapping[str, Any], committed: Mapping[str, Any]
) -> dict[str, Any]:
    """Task ``tables``: bring the tables the configuration enables to the lake's head
    (``kafka_segments.tables.run_stage``; docs/tables.md, "After every run"); ``{}`` when it enables none.
    A failed sync does not fail the task (the lake committed; gc and the report still run): its one line is
    logged as an error, and the report task fails the DAG run with it after publishing the report. A dry run
    syncs nothing: the task ends *skipped*."""
    from kafka_segments.pipeline.sequence import Stage, runs
    from kafka_segments.pipeline.tables_stage import sync_after_commit
    from kafka_segments.tables.run_stage import sync_enabled_tables

    handle = RunHandle.from_dict(prepared)
    if not runs(Stage.TABLES, dry_run=handle.dry_run):
        _skip_dry_run(context, {}, "no table is synced")
    with task_failures("tables"), lake_store(handle.lake) as store:
        config = load_run_config(handle.config_path)
        outcome = sync_after_commit(sync_enabled_tables, store, config, version=committed.get("version"))
    if outcome is None:
        log.info("tables: no topic of the lake's head has kafka_segments.table.enable")
        return {}
    for line in outcome.lines:
        (log.error if outcome.failure else log.info)("%s", line)
    return outcome.to_dict()


def collect_garbage(context: Context, prepared: Mapping[str, Any]) -> dict[str, Any]:
    """Task ``gc``: delete retired objects whose ``file.delete.delay.ms`` has passed, orphans of runs that can
    no longer commit, old manifests and, with ``kafka_segments.run.folder.retention.ms`` set, the folders of
    runs that ended that long ago (``pipeline.run_gc``; a dry run only reports)."""
    from kafka_segments.lake.run_folder import read_run
    from kafka_segments.pipeline.run_gc import collect_run_garbage

    handle = RunHandle.from_dict(prepared)
    with task_failures("gc"), lake_store(handle.lake) as store:
        full = read_run(store, handle.run_id).request.full_listing  # the full_listing Param: gc's too
        config = load_run_config(handle.config_path)
        report = collect_run_garbage(store, config, dry_run=handle.dry_run, full=full)
    log.info("%s", report.to_text().rstrip())
    if handle.dry_run:
        _skip_dry_run(context, report.to_dict(), "nothing is deleted (the log above says what would be)")
    return report.to_dict()


def _skip_dry_run(context: Context, result: dict[str, Any], what: str) -> None:
    """End a dry run's task in Airflow's skipped state, ``result`` still its XCom (the report reads it)."""
    from airflow.sdk.exceptions import AirflowSkipException

    context["ti"].xcom_push("return_value", result)
    raise AirflowSkipException(f"dry run: {what}")


def publish_report(
    context: Context,
    prepared: Mapping[str, Any],
    gc: Mapping[str, Any] | None,
    tables: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Task ``report``: the run's report (``stages.finish_run``), written to the lake run's folder as
    ``report.json``, shown in the log, its metrics sent through Airflow's metrics (``orchestration.metrics``;
    not a dry run's: a preview publishes nothing) and returned as the task's XCom. When the tables did not
    sync, the task then fails with that line (the lake committed; the next run's sync catches up)."""
    from kafka_segments.pipeline.report import render_report
    from kafka_segments.pipeline.stages import finish_run

    from orchestration.metrics import publish_metrics

    handle = RunHandle.from_dict(prepared)
    with task_failures("report"), lake_store(handle.lake) as store:
        document = finish_run(store, handle.run_id, gc=gc, tables=tables or None)
        where = store.location(document["report_key"])
    if handle.dry_run:
        log.info("%s", dry_run_summary(document))
    for line in render_report(document).splitlines():
        log.info("%s", line)
    log.info("report of lake run %s: %s", handle.run_id, where)
    metrics = None if handle.dry_run else document.get("metrics")
    log.info("%s", publish_metrics(metrics, lake=redact_uri(handle.lake)))
    if tables and not tables["synced"]:
        _fail_after_report(context, document, tables["lines"][0])
    return document


def _fail_after_report(context: Context, document: dict[str, Any], line: str) -> None:
    """Fail the task (no retry) with the tables' line, the report still its XCom."""
    from airflow.sdk.exceptions import AirflowFailException

    context["ti"].xcom_push("return_value", document)
    raise AirflowFailException(line)


def dry_run_summary(document: Mapping[str, Any]) -> str:
    """``dry run: would delete N segment(s), B bytes; nothing was changed`` from a dry run's report."""
    totals = (document.get("plan") or {}).get("totals") or {}
    return (
        f"dry run: would delete {totals.get('segments_deleted', 0)} segment(s), "
        f"{totals.get('bytes_deleted', 0)} bytes; nothing was changed"
    )


def _log_parameters(settings: LakeSettings, parameters: RunParameters) -> None:
    log.info(
        "lake %s, configuration %s, now=%d, %s, topics %s, partitions %s, offsets %s",
        redact_uri(settings.lake),
        settings.config_path or "(Kafka's defaults)",
        parameters.now_ms,
        "dry run" if parameters.dry_run else "committing run",
        ", ".join(parameters.topics) if parameters.topics else "all",
        ", ".join(parameters.partitions) if parameters.partitions else "all",
        "pinned for this time or the newest earlier pin (backfill)"
        if parameters.earlier_pin
        else redact_uri(
            parameters.offsets_source
            or "none asked: the snapshot pinned for this time or the newest earlier pin"
        ),
    )


def _log_offsets(resolved: ResolvedOffsets | None) -> None:
    if resolved is None:
        log.info("offsets: no snapshot for this time (consumed retention cannot apply)")
        return
    snapshot = resolved.snapshot
    log.info(
        "offsets: snapshot %s (%s, source %s): %d group(s)%s",
        resolved.snapshot_id or "(not stored: dry run)",
        resolved.origin,
        snapshot.source,
        len(snapshot.groups),
        f"; note: {resolved.note}" if resolved.note else "",
    )
    for error in snapshot.errors:
        log.warning("offsets: group %s could not be read (%s)", error.group_id, error.error)


def _log_validation_file(store: Any, run_id: str) -> None:
    """On a failed validation: where its results and Data Docs are (from ``validation.json``)."""
    from kafka_segments.errors import KafkaSegmentsError
    from kafka_segments.lake.run_folder import VALIDATION, read_run_json, run_file_key

    try:
        document = read_run_json(store, run_id, VALIDATION)
    except KafkaSegmentsError:
        return
    for suite in document.get("suites", []):
        log.error("suite %s: %s", suite.get("name"), "passed" if suite.get("success") else "FAILED")
    log.error(
        "validation results: %s; Data Docs: %s; readable offline: %s",
        store.location(run_file_key(run_id, VALIDATION)),
        document.get("data_docs"),
        document.get("page_location"),
    )
