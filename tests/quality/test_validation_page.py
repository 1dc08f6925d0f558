"""``validation.html`` (``segment_quality.page``): the run's validation results readable without a network,
linked from ``validation.json`` and the run report where the Data Docs are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kafka_segments.lake.layout import staged_manifest_key
from kafka_segments.lake.run_folder import run_file_key
from kafka_segments.pipeline.report import render_report
from kafka_segments.pipeline.stages import VALIDATION, finish_run, read_run_json
from kafka_segments.storage import LocalStore
from kit import FakeClock
from segment_quality import validate_run
from segment_quality.page import PAGE, render_page

from quality.helpers import four_pass_config, four_pass_lake, stage

pytestmark = pytest.mark.quality

EXTERNAL = re.compile(r"(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|\b(src|href)\s*=")


def test_the_page_shows_every_expectations_result_and_loads_nothing(
    local_store: LocalStore, tmp_path: Path, clock: FakeClock
) -> None:
    snapshot = four_pass_lake(local_store, tmp_path, clock)
    run_id = stage(local_store, four_pass_config(), clock, snapshot=snapshot)

    report = validate_run(local_store, run_id, config=four_pass_config())

    assert report.page_key == run_file_key(run_id, PAGE)
    assert report.page_location == local_store.location(report.page_key)
    page = local_store.get(report.page_key).decode()
    assert EXTERNAL.search(page) is None  # no stylesheet, script, image or link to fetch
    assert "<script" not in page
    assert staged_manifest_key(run_id) in page  # the staged object it checked
    document = read_run_json(local_store, run_id, VALIDATION)
    assert document["page"] == report.page_key
    for suite in document["suites"]:
        assert f'{suite["name"]}: <span class="pass">passed</span>' in page
        for expectation in suite["expectations"]:
            assert expectation["invariant"] in page
            assert expectation["type"] in page
    assert page.count('<span class="pass">passed</span>') == 1 + len(document["suites"]) + sum(
        len(suite["expectations"]) for suite in document["suites"]
    )
    assert "element_count" in page  # the observed values
    summary = finish_run(local_store, run_id)
    assert summary["validation"]["page"] == report.page_key
    assert f"offline page: {report.page_key}" in render_report(summary)


def test_a_failed_expectation_shows_as_failed_with_its_observed_values() -> None:
    failing = {
        "invariant": "log-end-offset-unchanged",
        "rule": "deleting segments never moves the log end offset",
        "type": "expect_column_pair_values_to_be_equal",
        "kwargs": {"column_A": "log_end_offset_before", "column_B": "log_end_offset_after"},
        "success": False,
        "result": {"unexpected_rows": [{"topic": "t<b>", "partition": 0, "log_end_offset_after": 1015}]},
    }
    document = {
        "run_id": "r1",
        "success": False,
        "suites": [{"name": "retention.partitions", "success": False, "rows": 1, "expectations": [failing]}],
        "note": "",
    }

    page = render_page(document)

    assert page.count('<span class="fail">FAILED</span>') == 3  # the run, the suite, the expectation
    assert "log-end-offset-unchanged" in page
    assert "1015" in page
    assert "t&lt;b&gt;" in page  # values are escaped
    assert "t<b>" not in page
    assert EXTERNAL.search(page) is None
