"""What a validation found, as values, and ``validation.json`` (format version 1; docs/validation.md, "What is
stored"), the document ``commit_staged`` reads: it requires ``run_id`` = the run and ``success`` true."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

VALIDATION_FORMAT_VERSION = 1
NOTHING_STAGED = "nothing staged: the run changes nothing, so every expectation passes trivially (zero rows)"


@dataclass(frozen=True, slots=True)
class ExpectationOutcome:
    """One expectation's verdict."""

    invariant: str
    """The project's name of the invariant (``segment_quality.suites``)."""
    type: str
    """GX's expectation type (``expect_column_pair_values_a_to_be_greater_than_b``)."""
    kwargs: Mapping[str, Any]
    success: bool
    result: Mapping[str, Any]
    """A small JSON-safe summary: counts and up to a few failing rows (their index columns and values)."""
    rule: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "kwargs": dict(self.kwargs),
            "success": self.success,
            "result": dict(self.result),
            "invariant": self.invariant,
            "rule": self.rule,
        }


@dataclass(frozen=True, slots=True)
class SuiteResult:
    """One suite over one frame."""

    name: str
    success: bool
    expectations: tuple[ExpectationOutcome, ...]
    rows: int = 0

    @property
    def failed(self) -> tuple[ExpectationOutcome, ...]:
        return tuple(outcome for outcome in self.expectations if not outcome.success)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "success": self.success,
            "rows": self.rows,
            "expectations": [outcome.to_dict() for outcome in self.expectations],
        }


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """The verdict on a run's staged output and where its documents are."""

    run_id: str
    success: bool
    suites: tuple[SuiteResult, ...]
    validation_key: str
    """Key of ``validation.json`` in the lake."""
    data_docs_key: str | None
    """Key of the Data Docs ``index.html`` in the lake."""
    data_docs_location: str | None
    """Where a person opens it (``s3://…`` or a local path)."""
    validation_location: str | None = None
    """Where ``validation.json`` is (``s3://…`` or a local path)."""
    note: str = field(default="")
    """E.g. that nothing was staged and the suites passed trivially."""
    page_key: str | None = None
    """Key of ``validation.html``, the results readable without a network (``segment_quality.page``)."""
    page_location: str | None = None
    """Where a person opens it (``s3://…`` or a local path)."""

    @property
    def failed(self) -> tuple[tuple[str, ExpectationOutcome], ...]:
        """``(suite name, outcome)`` of every failed expectation."""
        return tuple((suite.name, outcome) for suite in self.suites for outcome in suite.failed)

    @property
    def failed_invariants(self) -> tuple[str, ...]:
        return tuple(outcome.invariant for _suite, outcome in self.failed)

    def summary(self) -> str:
        """One line: the verdict, the failed expectations, and where to look."""
        where = f"; Data Docs: {self.data_docs_location}" if self.data_docs_location else ""
        where += f"; offline page: {self.page_location}" if self.page_location else ""
        if self.success:
            checked = sum(len(suite.expectations) for suite in self.suites)
            note = f" ({self.note})" if self.note else ""
            return f"run {self.run_id} passed validation: {checked} expectation(s){note}{where}"
        failed = ", ".join(f"{suite}/{outcome.invariant} ({outcome.type})" for suite, outcome in self.failed)
        return f"run {self.run_id} failed validation: {failed}{where}"

    def to_document(self) -> dict[str, Any]:
        """The ``validation.json`` document."""
        return {
            "format_version": VALIDATION_FORMAT_VERSION,
            "run_id": self.run_id,
            "success": self.success,
            "suites": [suite.to_dict() for suite in self.suites],
            "data_docs": self.data_docs_key,
            "data_docs_location": self.data_docs_location,
            "note": self.note,
            "page": self.page_key,
            "page_location": self.page_location,
        }
