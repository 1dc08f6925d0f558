"""The delete-records DAG's task: KIP-107's ``deleteRecords`` on the lake from the ``kafka-delete-records.sh``
JSON (docs/airflow.md, "The delete-records DAG").

As Kafka's tool does, a malformed request is refused whole, and a partition's error does not fail the task
(it is logged and counted). A committing run is refused before it reads anything unless the triggering user
is entitled (``orchestration.entitlement``). The newest pinned offsets snapshot is used read-only to warn
about groups that would lose unread records."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from kafka_segments.redaction import redact_uri

from orchestration.entitlement import require_commit_permission
from orchestration.failures import task_failures
from orchestration.run_parameters import resolve_dry_run, run_labels, run_now_ms, run_type_of
from orchestration.settings import lake_store, load_run_config, read_lake_settings

if TYPE_CHECKING:
    from airflow.sdk import Context
    from kafka_segments.pipeline.delete_records_run import DeleteRecordsOutcome

log = logging.getLogger(__name__)

REQUEST_LOCATION = "the run's Param 'request'"
OPERATION = "delete-records"


def delete_records_run(context: Context) -> dict[str, Any]:
    """Task ``delete_records``: apply the request (or preview it in a dry run), write and return the report;
    a commit emits events for the lake's Asset and the topics it changed (``orchestration.lineage``)."""
    from kafka_segments.lake.run_folder import REPORT, run_file_key, write_run_json
    from kafka_segments.pipeline.delete_records_run import delete_records
    from kafka_segments.pipeline.offsets_input import OffsetsChoice, resolve_offsets
    from kafka_segments.retention.delete_records import parse_delete_records_value

    from orchestration.lineage import committed_topics, record_commit_lineage

    params = context["params"]
    dag_run = context["dag_run"]
    now_ms = run_now_ms(dag_run)
    with task_failures("delete_records"):
        dry_run = resolve_dry_run(params.get("dry_run"), run_type_of(dag_run))
        if not dry_run:
            user = require_commit_permission(dag_run.triggering_user_name)
            log.info("%s: %s may commit (Variable kafka_segments_delete_records_allowed)", OPERATION, user)
        settings = read_lake_settings()
        requests = parse_delete_records_value(params.get("request"), location=REQUEST_LOCATION)
        config = load_run_config(settings.config_path)
        log.info(
            "%s: %d partition(s) on lake %s at now=%d%s",
            OPERATION,
            len(requests),
            redact_uri(settings.lake),
            now_ms,
            " (dry run: nothing is changed)" if dry_run else "",
        )
        with lake_store(settings.lake) as store:
            offsets = resolve_offsets(store, OffsetsChoice(earlier_pin=True), now_ms=now_ms, dry_run=True)
            outcome = delete_records(
                store,
                requests,
                config=config,
                now_ms=now_ms,
                snapshot=None if offsets is None else offsets.snapshot,
                dry_run=dry_run,
            )
            report_run_id = outcome.run_id
            document = report_document(outcome, now_ms=now_ms, dry_run=dry_run, labels=run_labels(dag_run))
            document["report_key"] = run_file_key(report_run_id, REPORT)
            write_run_json(store, report_run_id, REPORT, document)
            where = store.location(document["report_key"])
            version = outcome.committed_version
            topics = [] if version is None else committed_topics(store, version)
    _log_results(outcome, dry_run=dry_run)
    if outcome.committed_version is not None:
        assets = record_commit_lineage(
            context["outlet_events"],
            settings.lake,
            topics,
            extra={"run_id": outcome.run_id, "version": outcome.committed_version, "now_ms": now_ms},
        )
        log.info(
            "asset events for %s (version %d)",
            ", ".join(asset.uri for asset in assets),
            outcome.committed_version,
        )
    log.info("report: %s", where)
    return document


def report_document(
    outcome: DeleteRecordsOutcome, *, now_ms: int, dry_run: bool, labels: dict[str, str]
) -> dict[str, Any]:
    """The run's report: ``outcome_to_dict`` with the operation, the outcome and where the run came from."""
    from kafka_segments.pipeline.delete_records_run import outcome_to_dict

    document: dict[str, Any] = {
        "operation": OPERATION,
        "now_ms": now_ms,
        "dry_run": dry_run,
        **outcome_to_dict(outcome),
    }
    document["failed_partitions"] = len(outcome.failed)
    document["labels"] = labels
    return document


def _log_results(outcome: DeleteRecordsOutcome, *, dry_run: bool) -> None:
    log.info("Dry run (nothing changed):" if dry_run else "Records delete operation completed:")
    for result in outcome.results:
        if result.ok:
            log.info("%s", result.line())
        else:
            log.warning("%s", result.line())
    for plan in outcome.plans:
        for loss in plan.unread_loss:
            log.warning(
                "%s: group %s (committed offset %s) loses %d unread record(s)",
                plan.topic_partition,
                loss.group_id,
                loss.committed_offset,
                loss.records,
            )
    if outcome.failed:
        log.warning("%d of %d partition(s) failed", len(outcome.failed), len(outcome.results))
    if outcome.committed_version is not None:
        log.info("committed version %d (lake run %s)", outcome.committed_version, outcome.run_id)
