"""The domain library must not import the orchestration, execution or validation frameworks."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

LIBRARY = Path(__file__).resolve().parents[2] / "include" / "kafka_segments"
FORBIDDEN = {"airflow", "pyspark", "great_expectations"}


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_library_imports_no_framework() -> None:
    offenders = {
        str(path.relative_to(LIBRARY)): sorted(_imported_roots(path) & FORBIDDEN)
        for path in sorted(LIBRARY.rglob("*.py"))
        if _imported_roots(path) & FORBIDDEN
    }
    assert offenders == {}


def test_the_rule_catches_an_offender(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("def f():\n    from airflow.sdk import dag\n    import pyspark.sql\n")
    assert _imported_roots(module) & FORBIDDEN == {"airflow", "pyspark"}


def test_importing_the_library_loads_no_framework() -> None:
    import subprocess
    import sys

    code = (
        "import sys, kafka_segments, kafka_segments.records, kafka_segments.errors;"
        "print(sorted(m for m in sys.modules"
        " if m.split('.')[0] in {'airflow', 'pyspark', 'great_expectations'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
