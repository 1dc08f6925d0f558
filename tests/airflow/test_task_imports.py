"""What a maintenance task's process imports. Every task runs in a fresh process (Airflow's task runner
parses the DAG file, then calls the task), so what the task's callable imports is paid by every task of
every run, and by every look of a run waiting for its turn on the lake: only the retention step run inline
(which compacts) loads the compiled kernels (numba), and only the validation loads Great Expectations and
its data frameworks.

The modules are the imports written inside the task functions of ``orchestration.maintenance`` (and of
``stages.execute_run`` for the inline step), read from the source so that a new lazy import is checked too,
imported in one fresh interpreter after the DAG file (one interpreter: each costs some 4 s of CPU)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.airflow

REPO = Path(__file__).resolve().parents[2]
MAINTENANCE = REPO / "include" / "orchestration" / "maintenance.py"
STAGES = REPO / "include" / "kafka_segments" / "pipeline" / "stages.py"
DAG_FILE = REPO / "dags" / "kafka_segments_maintenance.py"
KERNELS = "numba"
DATA_FRAMEWORKS = ("great_expectations", "pandas", "pyarrow", "pyspark")
LIGHT_TASKS = (
    "recover_in_turn",
    "recover_lake",
    "snapshot_consumer_offsets",
    "prepare",
    "commit",
    "sync_tables",
    "collect_garbage",
    "publish_report",
)
"""The task functions that neither compact nor validate (``sync_tables`` loads pyarrow and pyiceberg only
when a topic is a table)."""
TASK_HELPERS = ("orchestration.lake_turns", "orchestration.lineage", "orchestration.metrics")


def function_imports(path: Path, *names: str) -> set[str]:
    """The modules that ``from M import ...`` / ``import M`` statements inside the functions ``names`` of
    ``path`` name (top-level imports of the module are left out: importing the module covers them)."""
    modules: set[str] = set()
    for node in ast.parse(path.read_text(), filename=str(path)).body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and inner.module and inner.level == 0:
                    modules.add(inner.module)
                elif isinstance(inner, ast.Import):
                    modules.update(alias.name for alias in inner.names)
    return modules


@pytest.fixture(scope="module")
def loaded() -> dict[str, set[str]]:
    """The watched packages loaded by the light tasks' imports, then also by the inline step's (one fresh
    interpreter for both, which imports ``airflow.sdk`` and the DAG file first, as a task process does)."""
    light = function_imports(MAINTENANCE, *LIGHT_TASKS) | {"orchestration.maintenance", *TASK_HELPERS}
    assert "kafka_segments.pipeline.stages" in light
    inline = function_imports(MAINTENANCE, "execute_inline") | function_imports(STAGES, "execute_run")
    watched = [KERNELS, *DATA_FRAMEWORKS]
    report = f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({watched!r}))))"
    code = "\n".join(
        [
            "import json, runpy, sys, airflow.sdk",
            f"runpy.run_path({str(DAG_FILE)!r})",
            *(f"import {module}" for module in sorted(light)),
            report,
            *(f"import {module}" for module in sorted(inline)),
            report,
        ]
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    after_light, after_inline = (set(json.loads(line)) for line in result.stdout.strip().splitlines()[-2:])
    return {"light": after_light, "inline": after_inline}


def test_a_task_that_neither_compacts_nor_validates_loads_no_kernels_and_no_data_framework(
    loaded: dict[str, set[str]],
) -> None:
    assert loaded["light"] == set()


def test_the_inline_retention_step_loads_the_kernels_but_no_data_framework(
    loaded: dict[str, set[str]],
) -> None:
    assert loaded["inline"] == {KERNELS}


def test_the_rule_sees_a_function_level_import(tmp_path: Path) -> None:
    module = tmp_path / "tasks.py"
    module.write_text("import os\n\ndef task():\n    from numba import njit\n    import pandas\n")
    assert function_imports(module, "task") == {"numba", "pandas"}
