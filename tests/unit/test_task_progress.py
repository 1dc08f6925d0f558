"""The demo's task progress (``orchestration.task_progress``, ``demo_stack.run_step(on_line=…)``): a line as
each task starts and ends, read from ``airflow dags test``'s output while it runs."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
from orchestration.demo_stack import DemoStackError, run_step
from orchestration.task_progress import TaskProgress

pytestmark = pytest.mark.unit

# What ``airflow dags test`` (Airflow 3.3) logs for a task that succeeds and a mapped one that fails (each
# line's timestamp and level cut off, long fields trimmed).
API = "[airflow.api_fastapi.execution_api.routes.task_instances]"
DAGS_TEST_OUTPUT = [
    "Created dag run.               [airflow.models.dagrun] dagrun=<DagRun tiny>",
    "[DAG TEST] starting task_id=a map_index=-1 [airflow.sdk.definitions.dag] loc=dag.py:1501",
    "[DAG TEST] running task <TaskInstance: tiny.a manual__x [TaskInstanceState.SCHEDULED]>",
    f"Task started                   {API} previous_state=queued",
    f"Task instance state updated    {API} loc=task_instances.py:485 new_state=success rows_affected=1",
    "[DAG TEST] end task task_id=a map_index=-1 [airflow.sdk.definitions.dag] loc=dag.py:1563",
    "[DAG TEST] starting task_id=b map_index=2 [airflow.sdk.definitions.dag] loc=dag.py:1501",
    "Task failed with exception     [task] loc=task_runner.py:1676",
    f"Task instance state updated    {API} new_state=failed rows_affected=1",
    "\x1b[1m[DAG TEST] end task task_id=b map_index=2\x1b[0m [airflow.sdk.definitions.dag]",
]


def test_each_task_prints_when_it_starts_and_how_it_ended() -> None:
    ticks = itertools.count(0.0, 1.5)
    progress = TaskProgress(clock=lambda: next(ticks))
    messages = [m for line in DAGS_TEST_OUTPUT if (m := progress.line(line)) is not None]
    assert messages == [
        "  task a: started",
        "  task a: success (1.5 s)",
        "  task b[2]: started",
        "  task b[2]: FAILED (1.5 s)",
    ]


def test_a_task_without_a_state_line_still_ends() -> None:
    progress = TaskProgress(clock=lambda: 0.0)
    assert progress.line("[DAG TEST] starting task_id=report map_index=-1") == "  task report: started"
    assert progress.line("[DAG TEST] end task task_id=report map_index=-1") == "  task report: ended (0.0 s)"


def test_run_step_feeds_lines_while_the_command_runs(tmp_path: Path) -> None:
    seen: list[tuple[float, str]] = []
    script = "echo first; sleep 2; echo second; printf last"
    started = time.monotonic()
    run_step(
        "lines",
        ["bash", "-c", script],
        env={"PATH": "/usr/bin:/bin"},
        log=tmp_path / "out.log",
        on_line=lambda line: seen.append((time.monotonic() - started, line)),
    )
    assert [line for _at, line in seen] == ["first", "second", "last"]
    assert seen[0][0] < seen[1][0] - 1.0  # "first" arrived before the command ended, not at its end
    assert "first\nsecond\nlast" in (tmp_path / "out.log").read_text()  # the log still has everything


def test_run_step_with_progress_still_fails_and_times_out(tmp_path: Path) -> None:
    log = tmp_path / "out.log"
    with pytest.raises(DemoStackError, match="exited with 3"):
        run_step("fails", ["bash", "-c", "exit 3"], env={"PATH": "/usr/bin:/bin"}, log=log, on_line=print)
    with pytest.raises(DemoStackError, match="did not finish within 1 s"):
        run_step("hangs", ["sleep", "30"], env={"PATH": "/usr/bin:/bin"}, log=log, timeout_s=1, on_line=print)
