"""Retry only what may succeed on a second try (imported by DAG files: airflow and the standard library only).

The library marks the errors a retry can cure with the class attribute ``retriable = True``
(``kafka_segments.errors``): ``TransientStoreError`` (the store was unreachable, throttled or failing even
after the client's own retries), ``ConditionalWriteConflictError`` (S3's ``409 ConditionalRequestConflict``
on a concurrent conditional write) and ``CommitStateUnknownError`` (a commit's outcome could not be read
back; ``commit_staged`` reads back before it writes, so running it again settles it). A builtin
``ConnectionError`` or ``TimeoutError`` is transient too. Everything else (a commit conflict, a failed
validation, a bad configuration, a corrupt lake file, a bug) fails the task at once: retrying cannot change
the answer, and a clear red task says so sooner.

The policy is read by the task runner (Airflow 3.3's ``retry_policy``), after the task's own mapping of the
library's errors (``orchestration.failures``); ``AirflowFailException`` never reaches it.
"""

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
        self,
        exception: BaseException,
        try_number: int,
        max_tries: int,
        context: Context | None = None,
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
