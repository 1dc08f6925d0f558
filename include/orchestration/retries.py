"""Retry only what may succeed on a second try (imported by DAG files: airflow and the standard library only).

The library marks the errors a retry can cure with ``retriable = True`` (``kafka_segments.errors``); a
builtin ``ConnectionError`` or ``TimeoutError`` is transient too. Everything else fails at once: retrying
cannot change the answer. Read by the task runner (Airflow 3.3's ``retry_policy``) after
``orchestration.failures``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk import RetryDecision, RetryPolicy

if TYPE_CHECKING:
    from airflow.sdk import Context

TRANSIENT_BUILTINS: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError)


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is worth a retry (see the module docstring)."""
    return getattr(type(exc), "retriable", False) is True or isinstance(exc, TRANSIENT_BUILTINS)


class TransientOnlyRetryPolicy(RetryPolicy):
    """Retry transient errors (up to the task's ``retries``); fail everything else without a retry."""

    def evaluate(
        self, exception: BaseException, try_number: int, max_tries: int, context: Context | None = None
    ) -> RetryDecision:
        name = type(exception).__name__
        if is_transient(exception):
            return RetryDecision.retry(reason=f"transient error ({name}); retrying (try {try_number})")
        return RetryDecision.fail(reason=f"{name} is not transient: failing without a retry")

    def serialize(self) -> dict[str, Any]:
        return {"__type": type(self).__name__}

    @classmethod
    def deserialize(cls, data: dict[str, Any]) -> TransientOnlyRetryPolicy:
        return cls()
