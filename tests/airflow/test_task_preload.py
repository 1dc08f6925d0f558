"""Task start-up (``orchestration.task_preload``, docs/airflow.md "Task start-up"): with the stack's settings
(``demo_stack.TASK_PRELOAD_SETTINGS``), Airflow's own code sets the scheduler's start method and fork-server
preload, and a worker the scheduler starts then (a ``multiprocessing.Process``, as ``LocalExecutor`` starts
its workers) begins with what the tasks import already loaded. Python's fork server skips a preload module
that fails to import without a word, so the child's modules are the only proof that it worked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from orchestration.demo_stack import TASK_PRELOAD_SETTINGS
from orchestration.task_modules import TASK_MODULES

WORKER = """
import json
import multiprocessing
import sys


def loaded(queue, modules):
    from kafka_segments.storage import s3_session

    names = ("great_expectations", "pyspark", *modules)
    queue.put({**{name: name in sys.modules for name in names}, "s3 model": bool(s3_session._loaders)})


if __name__ == "__main__":
    from airflow.utils.process_utils import set_component_mp_start_method

    set_component_mp_start_method("scheduler")
    queue = multiprocessing.SimpleQueue()
    worker = multiprocessing.Process(target=loaded, args=(queue, json.loads(sys.argv[1])))
    worker.start()
    worker.join(timeout=120)
    print(json.dumps({"start method": multiprocessing.get_start_method(), **queue.get()}))
"""


def worker_modules(tmp_path: Path, settings: dict[str, str]) -> dict[str, object]:
    script = tmp_path / "scheduler.py"
    script.write_text(WORKER)
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path / "home"), **settings}
    done = subprocess.run(
        [sys.executable, str(script), json.dumps(TASK_MODULES)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_worker_of_the_preloaded_scheduler_starts_with_the_tasks_imports_loaded(tmp_path: Path) -> None:
    loaded = worker_modules(tmp_path, TASK_PRELOAD_SETTINGS)
    assert loaded.pop("start method") == "forkserver"
    assert loaded.pop("great_expectations") is True  # a validation's import, the costliest
    assert loaded.pop("s3 model") is True  # S3's service model, parsed once (s3_session.warm_loader)
    assert loaded.pop("pyspark") is False  # GX was imported as a validation imports it: without its Spark
    # integration (its SQL one comes with Airflow's own SQLAlchemy, as in a task)
    assert loaded == dict.fromkeys(TASK_MODULES, True)


def test_the_modules_a_task_imports_are_named_and_importable() -> None:
    """The DAG files' own imports are among them: a task's first step parses its DAG file."""
    dags = Path(__file__).resolve().parents[2] / "dags"
    imported = set()
    for dag_file in dags.glob("*.py"):
        for line in dag_file.read_text().splitlines():
            if line.startswith("from orchestration."):
                imported.add(line.split()[1])
    assert imported
    assert imported <= set(TASK_MODULES), imported - set(TASK_MODULES)


@pytest.mark.parametrize("module", TASK_MODULES)
def test_each_preloaded_module_exists(module: str) -> None:
    import importlib.util

    assert importlib.util.find_spec(module) is not None, module
