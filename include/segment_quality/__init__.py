"""Great Expectations suites over a run's staged output: the only package that imports great_expectations.

``validate_run(store, run_id, config=...)`` is the validation stage of a staged run: it checks the run's
staged output against the retention and compaction invariants (``segment_quality.suites``,
``segment_quality.compaction_suites``), stores ``validation.json`` and a Data Docs site in the run's folder,
and on failure rejects the run (nothing is committed) and raises ``ValidationFailedError``.
``python -m segment_quality validate --lake L --run-id R`` does the same from a shell.

GX is imported inside functions only (its import takes seconds), never at module import time.
"""

from segment_quality.results import ExpectationOutcome, SuiteResult, ValidationReport
from segment_quality.validate import ValidationFailedError, validate_run

__all__ = ["ExpectationOutcome", "SuiteResult", "ValidationFailedError", "ValidationReport", "validate_run"]
