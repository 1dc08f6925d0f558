"""``put_many``: write a set of objects with concurrent PUTs (a cleaned segment's ``.log``, ``.index`` and
``.timeindex``, say), and what a caller learns when some of them fail.

The PUTs run on a small thread pool: boto3 clients are thread-safe and botocore releases the GIL while it
sends the body, so the small objects' round trips overlap the large one's; ``LocalStore`` is thread-safe
too (temp file + link/rename per put). Every key is validated before the first PUT (an invalid key writes
nothing). After the first failure no further PUT starts; those already running finish.

A failure raises ``PutManyError`` (from the first failure) with every key's outcome, because a partial
write leaves objects behind and only the caller knows whether they matter:

* ``written``: these objects exist now, with these etags. Under keys unique to the caller (a lake run's
  objects, named after the run) they can stay: a run that never commits has its objects swept by
  ``recover`` / GC. A caller that must leave nothing deletes exactly these keys
  (``store.delete_many(error.written)``).
* ``failed``: key -> its error. ``ObjectAlreadyExistsError`` (``Create``) and ``PreconditionFailedError``
  (``UpdateIfMatch``) wrote nothing: the object there is someone else's and must never be deleted in a
  clean-up. Any other error (transient, a lost response) leaves the outcome unknown: the object may exist
  with these bytes; ``head``/``get`` tells.
* ``not_attempted``: keys whose PUT never started; nothing was written for them.

Retrying means calling ``put_many`` again with the failed and not attempted keys; with ``Create``, a PUT
whose response was lost then fails with ``ObjectAlreadyExistsError``, and comparing the stored bytes tells
whether it was this caller's (as ``lake.commit`` does for a run's objects).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed

from kafka_segments.errors import ObjectStoreError
from kafka_segments.storage.base import ObjectStore, Overwrite, PutMode, PutResult, validate_key
from kafka_segments.storage.buffers import object_location

DEFAULT_MAX_WORKERS = 4
_OVERWRITE = Overwrite()


class PutManyError(ObjectStoreError):
    """Some PUTs of a ``put_many`` failed (``location``: the first failed object; ``__cause__``: its error).

    Attributes:
        written: key -> ``PutResult`` of every object written.
        failed: key -> error of every PUT that failed, in the order they failed.
        not_attempted: the keys whose PUT never started (nothing written).
    """

    def __init__(
        self,
        reason: str,
        *,
        location: str,
        written: Mapping[str, PutResult],
        failed: Mapping[str, Exception],
        not_attempted: Sequence[str],
    ) -> None:
        self.written = dict(written)
        self.failed = dict(failed)
        self.not_attempted = tuple(not_attempted)
        super().__init__(reason, location=location)

    @property
    def first_error(self) -> Exception:
        """The error of the first PUT that failed."""
        return next(iter(self.failed.values()))


def put_many(
    store: ObjectStore,
    objects: Mapping[str, bytes],
    *,
    mode: PutMode = _OVERWRITE,
    max_workers: int = DEFAULT_MAX_WORKERS,
) -> dict[str, PutResult]:
    """PUT every ``key -> bytes`` of ``objects`` with ``mode``, up to ``max_workers`` at a time.

    Returns:
        key -> ``PutResult``, in the order of ``objects``.

    Raises:
        InvalidObjectKeyError: a key is invalid (nothing written).
        PutManyError: a PUT failed (see the module docstring for what the caller does).
        ValueError: ``max_workers < 1``.
    """
    if max_workers < 1:
        raise ValueError(f"max_workers must be at least 1, got {max_workers}")
    for key in objects:
        validate_key(key, location=store.describe())
    written: dict[str, PutResult] = {}
    failed: dict[str, Exception] = {}
    workers = min(max_workers, len(objects))
    if workers <= 1:
        _put_in_turn(store, objects, mode, written, failed)
    else:
        _put_concurrently(store, objects, mode, workers, written, failed)
    if failed:
        raise _failure(store, objects, written, failed) from next(iter(failed.values()))
    return {key: written[key] for key in objects}


def _put_in_turn(
    store: ObjectStore,
    objects: Mapping[str, bytes],
    mode: PutMode,
    written: dict[str, PutResult],
    failed: dict[str, Exception],
) -> None:
    for key, data in objects.items():
        try:
            written[key] = store.put(key, data, mode=mode)
        except Exception as exc:
            failed[key] = exc
            return


def _put_concurrently(
    store: ObjectStore,
    objects: Mapping[str, bytes],
    mode: PutMode,
    workers: int,
    written: dict[str, PutResult],
    failed: dict[str, Exception],
) -> None:
    stop = threading.Event()

    def put_one(key: str, data: bytes) -> PutResult | None:
        """The PUT, unless one has failed already (``None``: not attempted)."""
        if stop.is_set():
            return None
        try:
            return store.put(key, data, mode=mode)
        except BaseException:
            stop.set()  # before this worker takes the next key
            raise

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="put-many")
    try:
        futures = {pool.submit(put_one, key, data): key for key, data in objects.items()}
        for future in as_completed(futures):
            key = futures[future]
            error = future.exception()
            if error is None:
                result = future.result()
                if result is not None:
                    written[key] = result
            elif isinstance(error, Exception):
                failed[key] = error
            else:
                raise error  # KeyboardInterrupt, SystemExit: not a PUT's outcome
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)


def _failure(
    store: ObjectStore,
    objects: Mapping[str, bytes],
    written: Mapping[str, PutResult],
    failed: Mapping[str, Exception],
) -> PutManyError:
    first_key, first_error = next(iter(failed.items()))
    not_attempted = [key for key in objects if key not in written and key not in failed]
    reason = (
        f"{len(failed)} of {len(objects)} PUT(s) failed, the first: {type(first_error).__name__}: "
        f"{first_error}; written: {_names(written)}; not attempted: {_names(not_attempted)}"
    )
    return PutManyError(
        reason,
        location=object_location(store, first_key),
        written=written,
        failed=failed,
        not_attempted=not_attempted,
    )


def _names(keys: Mapping[str, object] | Sequence[str]) -> str:
    shown = list(keys)[:10]
    more = f" and {len(keys) - 10} more" if len(keys) > 10 else ""
    return (", ".join(shown) + more) if shown else "none"
