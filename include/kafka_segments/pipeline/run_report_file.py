"""The last stage of a run: its report, ``report.json`` in the run's folder (``finish_run``), from the staged
report, the run's outcome, the validation summary and what gc and the tables stage did (split out of
``pipeline/stages.py``, which re-exports it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka_segments.lake.gc_report import GcReport
from kafka_segments.lake.run_folder import (
    REPORT,
    STAGED,
    VALIDATION,
    read_outcome,
    read_run_json,
    read_run_json_or_none,
    run_file_key,
    write_run_json,
)
from kafka_segments.lake.runs import RunOutcome
from kafka_segments.pipeline.tables_stage import TablesOutcome
from kafka_segments.storage.base import ObjectStore


def finish_run(
    store: ObjectStore,
    run_id: str,
    *,
    gc: GcReport | Mapping[str, Any] | None = None,
    tables: TablesOutcome | Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The run's report (``report.json``): the staged report with the outcome, the committed version, the
    validation summary, gc and the tables stage (each the report, or its ``to_dict()`` as an orchestrator
    passes it between tasks). Returns the document."""
    staged = read_run_json(store, run_id, STAGED)
    report: dict[str, Any] = dict(staged["report"])
    ended = read_outcome(store, run_id)
    if ended is None:
        report["outcome"] = "not committed"
    else:
        report["outcome"] = ended.label
        if ended.run_outcome is RunOutcome.COMMITTED:
            report["committed_version"] = ended.version
    validation = read_run_json_or_none(store, run_id, VALIDATION)
    report["validation"] = None if validation is None else _validation_summary(validation)
    report["gc"] = None if gc is None else dict(gc) if isinstance(gc, Mapping) else gc.to_dict()
    report["tables"] = (
        None if tables is None else dict(tables) if isinstance(tables, Mapping) else tables.to_dict()
    )
    report["report_key"] = run_file_key(run_id, REPORT)
    write_run_json(store, run_id, REPORT, report)
    return report


def _validation_summary(document: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "success": document.get("success"),
        "suites": [
            {"name": suite.get("name"), "success": suite.get("success")}
            for suite in document.get("suites", [])
        ],
        "data_docs": document.get("data_docs"),
        "page": document.get("page"),
        "key": run_file_key(str(document.get("run_id")), VALIDATION),
    }
