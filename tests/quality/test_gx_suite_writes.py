"""Each suite reaches GX's expectations store in one write: it is filled before it is added to the context
(an added suite writes itself to the store again on every ``add_expectation``), and it still holds every
invariant of its spec."""

from __future__ import annotations

from typing import Any

import pytest
from kafka_segments.config import Config
from kafka_segments.state import Manifest
from segment_quality.gx_runtime import _gx, run_suites
from segment_quality.staged.frames import frames_of
from segment_quality.suites import suite_specs

pytestmark = pytest.mark.quality


def test_suites_are_stored_whole_and_not_once_per_expectation(monkeypatch: pytest.MonkeyPatch) -> None:
    _gx()
    from great_expectations.data_context.store.expectations_store import ExpectationsStore

    writes: list[str] = []
    original = ExpectationsStore.add_expectation

    def counted(self: Any, suite: Any, expectation: Any) -> Any:
        writes.append(suite.name)
        return original(self, suite=suite, expectation=expectation)

    monkeypatch.setattr(ExpectationsStore, "add_expectation", counted)
    empty = Manifest(version=1, parent_version=None, run_id="r", operation="run", committed_at_ms=0, now_ms=0)
    frames = frames_of(empty, empty, {}, config=Config.default(), now_ms=0)
    specs = suite_specs()

    suites = run_suites(frames, specs, run_name="one-write", docs_dir=None, detail=False)

    assert writes == []
    assert [len(suite.expectations) for suite in suites] == [len(spec.invariants) for spec in specs]
    assert all(suite.success for suite in suites)
