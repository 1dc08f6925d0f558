"""``validate_run``: the validation stage of a staged run (between ``execute_run`` and ``commit_staged``):
frames → the GX suites → Data Docs and ``validation.json`` in the run's folder; on failure the run is
rejected (``stages.reject_run``: it can never commit) and ``ValidationFailedError`` is raised."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.config import Config
from kafka_segments.errors import LakeError
from kafka_segments.lake.run_folder import VALIDATION, read_run, run_file_key, write_run_json
from kafka_segments.pipeline.stages import reject_run
from kafka_segments.storage.base import ObjectStore

from segment_quality.docs import upload_site
from segment_quality.page import PAGE, write_page
from segment_quality.results import NOTHING_STAGED, SuiteResult, ValidationReport
from segment_quality.staged.frames import quality_frames
from segment_quality.suites import SuiteSpec, suite_specs

log = logging.getLogger("segment_quality")


class ValidationFailedError(LakeError):
    """The run's staged output broke at least one expectation: the run is rejected and nothing is committed.

    The message lists the failed expectations (``suite/invariant (type)``) and where the Data Docs are;
    ``report`` holds the whole verdict, ``location`` is the run's ``validation.json``."""

    def __init__(self, reason: str, *, location: str, report: ValidationReport | None = None) -> None:
        self.report = report
        super().__init__(reason, location=location)


def validate_run(
    store: ObjectStore,
    run_id: str,
    *,
    config: Config,
    specs: tuple[SuiteSpec, ...] | None = None,
    clock: Clock = wall_clock_ms,
) -> ValidationReport:
    """Validate run ``run_id``'s staged output; return the report when every expectation passed.

    Args:
        config: the configuration the run was planned with (the rule limits come from it).
        specs: the suites (default: ``suite_specs()``).

    Raises:
        ValidationFailedError: an expectation failed (``validation.json`` and the Data Docs are written and
            the run is rejected first).
        RunStateError: the run was not prepared or executed.
        ManifestFormatError, QualityInputError: the run's files are not valid or contradict each other.
    """
    read_run(store, run_id)  # a run the lake does not know is named as such, before its stages' files
    frames = quality_frames(store, run_id, config=config)
    with tempfile.TemporaryDirectory(prefix="kafka-segments-data-docs-") as folder:
        from segment_quality.gx_runtime import run_suites

        suites = run_suites(
            frames, suite_specs() if specs is None else specs, run_name=run_id, docs_dir=Path(folder)
        )
        docs_key = upload_site(store, run_id, Path(folder))
    report = _report(store, run_id, suites, docs_key, note="" if frames.staged else NOTHING_STAGED)
    document = report.to_document()
    write_page(store, run_id, document)
    write_run_json(store, run_id, VALIDATION, document)
    if report.success:
        log.info("%s; result: %s", report.summary(), report.validation_location)
        return report
    log.error("%s; result: %s", report.summary(), report.validation_location)
    reject_run(store, run_id, reason=f"validation failed: {', '.join(report.failed_invariants)}", clock=clock)
    raise ValidationFailedError(report.summary(), location=str(report.validation_location), report=report)


def _report(
    store: ObjectStore, run_id: str, suites: tuple[SuiteResult, ...], docs_key: str, *, note: str
) -> ValidationReport:
    key = run_file_key(run_id, VALIDATION)
    page_key = run_file_key(run_id, PAGE)
    return ValidationReport(
        run_id=run_id,
        success=all(suite.success for suite in suites),
        suites=suites,
        validation_key=key,
        data_docs_key=docs_key,
        data_docs_location=store.location(docs_key),
        validation_location=store.location(key),
        note=note,
        page_key=page_key,
        page_location=store.location(page_key),
    )
