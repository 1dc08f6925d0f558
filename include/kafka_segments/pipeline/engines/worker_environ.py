"""The settings a job's driver hands its workers with every task: the ``AWS_*`` settings of the store.

A cluster's workers need the lake's settings, but a standalone cluster's executors do not inherit the
launcher's environment, and Spark's way of passing them (``spark.executorEnv.*``) puts them on the
``spark-submit`` command line, where every local user sees them. So the driver, which got them from its own
environment, wraps each mapped function: the worker sets them in its environment before the task opens the
store (``tasks.worker_store``). They travel inside the pickled task, as its items do."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class InWorkerEnviron(Generic[T, R]):
    """``fn`` run after ``environ``'s variables are set in the worker's environment."""

    fn: Callable[[T], R]
    environ: tuple[tuple[str, str], ...]

    def __call__(self, item: T) -> R:
        os.environ.update(self.environ)
        return self.fn(item)


def in_worker_environ(fn: Callable[[T], R], environ: Mapping[str, str]) -> Callable[[T], R]:
    """``fn`` itself when ``environ`` is empty, else ``fn`` wrapped to set ``environ`` in the worker first."""
    if not environ:
        return fn
    return InWorkerEnviron(fn, tuple(sorted(environ.items())))
