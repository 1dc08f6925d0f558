"""Great Expectations suites over a run's staged output: the only package that imports great_expectations
(docs/validation.md).

``validate_run(store, run_id, config=...)`` is the validation stage of a staged run: it stores
``validation.json`` and a Data Docs site in the run's folder, and on failure rejects the run and raises
``ValidationFailedError``. GX is imported inside functions only (its import takes seconds)."""

from segment_quality.results import ExpectationOutcome, SuiteResult, ValidationReport
from segment_quality.validate import ValidationFailedError, validate_run

__all__ = ["ExpectationOutcome", "SuiteResult", "ValidationFailedError", "ValidationReport", "validate_run"]
