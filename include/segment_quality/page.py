"""``validation.html``: the run's validation results as one self-contained page, readable without a network
(docs/validation.md, "What is stored"). GX's Data Docs load their CSS and JavaScript from CDNs and show a
blank page offline; this page has its style inline, no script and no external reference.

It shows the verdict, the staged objects the suites checked, and per suite and expectation the invariant,
Kafka's rule, GX's expectation type and arguments, pass or fail, and the observed values."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

from kafka_segments.lake.run_folder import STAGED_MANIFEST, VALIDATION, run_file_key, write_run_bytes
from kafka_segments.storage.base import ObjectStore

PAGE = "validation.html"
STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ccc;padding:.35em .5em;vertical-align:top}
th{background:#f3f3f3;text-align:left}pre{margin:0;white-space:pre-wrap;font-size:.85em}
.pass{color:#176d1d;font-weight:bold}.fail{color:#b00020;font-weight:bold}.note{color:#555}
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _verdict(success: object) -> str:
    return '<span class="pass">passed</span>' if success else '<span class="fail">FAILED</span>'


def _json(value: object) -> str:
    return f"<pre>{_e(json.dumps(value, indent=1, sort_keys=True, default=str))}</pre>"


def _expectation_row(expectation: Mapping[str, Any]) -> str:
    return (
        "<tr>"
        f"<td>{_verdict(expectation.get('success'))}</td>"
        f"<td><b>{_e(expectation.get('invariant', ''))}</b><br>{_e(expectation.get('rule', ''))}</td>"
        f"<td>{_e(expectation.get('type', ''))}{_json(expectation.get('kwargs', {}))}</td>"
        f"<td>{_json(expectation.get('result', {}))}</td>"
        "</tr>"
    )


def _suite_section(suite: Mapping[str, Any]) -> str:
    rows = "".join(_expectation_row(e) for e in suite.get("expectations", []))
    return (
        f"<h2>{_e(suite.get('name', ''))}: {_verdict(suite.get('success'))} "
        f"<span class='note'>({_e(suite.get('rows', 0))} row(s))</span></h2>"
        "<table><tr><th>result</th><th>invariant and rule</th><th>expectation</th><th>observed</th></tr>"
        f"{rows}</table>"
    )


def render_page(document: Mapping[str, Any]) -> str:
    """The page of a ``validation.json`` document (``ValidationReport.to_document()``)."""
    run_id = str(document.get("run_id", ""))
    checked = [run_file_key(run_id, STAGED_MANIFEST), run_file_key(run_id, "")]
    note = document.get("note") or ""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Validation of run {_e(run_id)}</title><style>{STYLE}</style></head><body>"
        f"<h1>Validation of lake run {_e(run_id)}: {_verdict(document.get('success'))}</h1>"
        f"<p>Checked: the run's staged output, <code>{_e(checked[0])}</code> and the run's files in "
        f"<code>{_e(checked[1])}</code>.</p>"
        + (f"<p class='note'>{_e(note)}</p>" if note else "")
        + "".join(_suite_section(suite) for suite in document.get("suites", []))
        + f"<p class='note'>The same results as JSON: <code>{_e(run_file_key(run_id, VALIDATION))}"
        "</code>.</p></body></html>\n"
    )


def write_page(store: ObjectStore, run_id: str, document: Mapping[str, Any]) -> str:
    """Write the page of ``document`` to the run's folder; return its key."""
    return write_run_bytes(store, run_id, PAGE, render_page(document).encode())
