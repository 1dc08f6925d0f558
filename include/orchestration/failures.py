"""The library's errors as task outcomes: inside ``task_failures(stage)`` a transient error propagates for the
retry policy; any other error of the project becomes ``AirflowFailException`` with its own message (no
retry, one clear log line); anything else (a bug) propagates and is not retried."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from airflow.sdk.exceptions import AirflowFailException
from kafka_segments.errors import KafkaSegmentsError

from orchestration.retries import is_transient

log = logging.getLogger(__name__)

_HINTS = {
    "CommitConflictError": "another run committed first; nothing of this run is visible (the next run "
    "plans again from the new head)",
    "ValidationFailedError": "the staged output failed validation; nothing is committed",
    "ValidationGateError": "the staged output has no successful validation; nothing is committed",
}


def _is_project_error(exc: BaseException) -> bool:
    if isinstance(exc, KafkaSegmentsError):
        return True
    return type(exc).__module__.split(".")[0] in {"orchestration", "segment_quality"}


def failure_message(stage: str, exc: BaseException) -> str:
    """The one-line reason of a failed stage: the error's class and message, and what it means."""
    name = type(exc).__name__
    hint = _HINTS.get(name)
    return f"{stage}: {name}: {exc}" + (f" ({hint})" if hint else "")


@contextmanager
def task_failures(stage: str) -> Iterator[None]:
    """Map the errors raised inside the block (see the module docstring)."""
    try:
        yield
    except AirflowFailException:
        raise
    except Exception as exc:
        if is_transient(exc):
            log.warning(
                "%s: transient error, the task will be retried: %s: %s", stage, type(exc).__name__, exc
            )
            raise
        if _is_project_error(exc):
            raise AirflowFailException(failure_message(stage, exc)) from exc
        raise
