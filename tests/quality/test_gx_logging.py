"""Great Expectations' own log noise stays out of task logs: its loggers say WARNING and above only."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from kafka_segments.config import Config
from kafka_segments.state import Manifest
from segment_quality.gx_runtime import GX_LOGGER, run_suites
from segment_quality.staged.frames import frames_of
from segment_quality.suites import suite_specs

pytestmark = pytest.mark.quality


def test_a_validation_logs_nothing_of_gx_below_warning(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    empty = Manifest(version=1, parent_version=None, run_id="r", operation="run", committed_at_ms=0, now_ms=0)
    frames = frames_of(empty, empty, {}, config=Config.default(), now_ms=0)
    caplog.set_level(logging.DEBUG)
    suites = run_suites(frames, suite_specs(), run_name="quiet", docs_dir=tmp_path / "docs")
    assert all(suite.success for suite in suites)
    noise = [r for r in caplog.records if r.name.startswith(GX_LOGGER) and r.levelno < logging.WARNING]
    assert noise == [], [r.getMessage() for r in noise[:5]]
    assert logging.getLogger(GX_LOGGER).getEffectiveLevel() == logging.WARNING
