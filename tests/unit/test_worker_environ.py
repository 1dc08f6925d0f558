"""``engines.worker_environ``: how a job's driver hands its ``AWS_*`` settings to its workers with each task
(instead of ``spark.executorEnv.*`` on the ``spark-submit`` command line)."""

from __future__ import annotations

import os
import pickle

import pytest
from kafka_segments.pipeline.engines.worker_environ import InWorkerEnviron, in_worker_environ

pytestmark = pytest.mark.unit

NAME = "KAFKA_SEGMENTS_TEST_WORKER_SETTING"


def test_no_settings_leave_the_function_as_it_is() -> None:
    assert in_worker_environ(os.getenv, {}) is os.getenv


def test_the_settings_are_set_before_the_task_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NAME, "the worker's own")  # restored (to unset) after the test
    task = in_worker_environ(os.getenv, {NAME: "from the driver"})
    assert isinstance(task, InWorkerEnviron)
    shipped = pickle.loads(pickle.dumps(task))  # as Spark ships it to a worker
    assert shipped(NAME) == "from the driver"
    assert os.environ[NAME] == "from the driver"
