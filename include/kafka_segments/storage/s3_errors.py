"""S3's failures as this package's errors, and the bounded retry of S3 calls that may be repeated.

``translate_s3_error`` decides by error code and HTTP status (never message text) and maps every transport
failure, including what botocore lets through unwrapped (urllib3's ``ProtocolError``, ``IncompleteRead``, a
raw ``ConnectionResetError``), to ``TransientStoreError``. ``retried`` repeats such a call, since botocore
does not retry a body cut short."""

from __future__ import annotations

import http.client
import time
from collections.abc import Callable
from typing import TypeVar

from kafka_segments.errors import (
    ConditionalWriteConflictError,
    ObjectAlreadyExistsError,
    ObjectNotFoundError,
    ObjectStoreError,
    PreconditionFailedError,
    StoreAccessError,
    TransientStoreError,
)
from kafka_segments.storage.base import Create, PutMode, UpdateIfMatch

T = TypeVar("T")

READ_ATTEMPTS = 3
"""How many times ``S3Store`` tries a read or a delete that failed with ``TransientStoreError``."""
RETRY_BACKOFF_S = 0.2
"""The pause before the second try; doubled before each further one."""

_NOT_FOUND_CODES = frozenset({"NoSuchKey", "NotFound", "404"})
_PRECONDITION_CODES = frozenset({"PreconditionFailed", "412"})
_CONFLICT_CODES = frozenset({"ConditionalRequestConflict", "409"})
_TRANSIENT_CODES = frozenset(
    {"SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "InternalError", "ServiceUnavailable"}
)
_ACCESS_CODES = frozenset(
    {"AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken"}
)


def transport_errors() -> tuple[type[Exception], ...]:
    """Every exception an S3 call can raise that ``translate_s3_error`` turns into a project error."""
    from botocore.exceptions import BotoCoreError, ClientError
    from urllib3.exceptions import HTTPError as URLLib3Error

    return (
        ClientError,
        BotoCoreError,
        URLLib3Error,
        http.client.HTTPException,
        ConnectionError,
        TimeoutError,
    )


def translate_s3_error(
    exc: Exception, *, bucket: str, key: str, mode: PutMode | None = None
) -> ObjectStoreError:
    """The project error for a botocore (or transport) error raised while accessing ``s3://bucket/key``.

    ``mode`` is the put mode when the failed call was a put: a 412 then means ``ObjectAlreadyExistsError``
    for ``Create`` and ``PreconditionFailedError`` for ``UpdateIfMatch``, and a 404 on ``UpdateIfMatch``
    means ``PreconditionFailedError``. Decided by error code and HTTP status only."""
    from botocore.exceptions import ClientError, FlexibleChecksumError, NoCredentialsError

    location = f"s3://{bucket}/{key}"
    if isinstance(exc, ClientError):
        return _client_error(exc, location=location, mode=mode)
    if isinstance(exc, NoCredentialsError):
        return StoreAccessError(f"no AWS credentials: {exc}", location=location)
    if isinstance(exc, FlexibleChecksumError):
        return ObjectStoreError(f"response checksum mismatch: {exc}", location=location)
    transient = _transport_failure(exc)
    if transient is not None:
        return TransientStoreError(transient, location=location)
    return ObjectStoreError(f"S3 request failed: {type(exc).__name__}: {exc}", location=location)


def _client_error(exc: Exception, *, location: str, mode: PutMode | None) -> ObjectStoreError:  # noqa: PLR0911 - one return per S3 error family (missing, precondition, conflict, access, throttling, …)
    response = getattr(exc, "response", {})
    error = response.get("Error", {})
    code = str(error.get("Code", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    detail = f"{code or 'error'} (HTTP {status})" if status else code or "error"
    if code in _NOT_FOUND_CODES or (status == 404 and code != "NoSuchBucket"):
        if isinstance(mode, UpdateIfMatch):
            return PreconditionFailedError(
                f"conditional update on a missing object (expected etag {mode.etag}): {detail}",
                location=location,
            )
        return ObjectNotFoundError(f"object not found: {detail}", location=location)
    if code in _PRECONDITION_CODES or status == 412:
        if isinstance(mode, Create):
            return ObjectAlreadyExistsError(
                f"object already exists (create-only write refused): {detail}", location=location
            )
        expected = f" (expected etag {mode.etag})" if isinstance(mode, UpdateIfMatch) else ""
        return PreconditionFailedError(f"precondition failed{expected}: {detail}", location=location)
    if code in _CONFLICT_CODES or status == 409:
        return ConditionalWriteConflictError(
            f"concurrent conditional write to the same key: {detail}", location=location
        )
    if code in _ACCESS_CODES or status == 403:
        return StoreAccessError(f"access denied: {detail}", location=location)
    if code in _TRANSIENT_CODES or (isinstance(status, int) and status >= 500):
        return TransientStoreError(f"store unavailable after retries: {detail}", location=location)
    return ObjectStoreError(f"S3 request failed: {detail}", location=location)


def _transport_failure(exc: Exception) -> str | None:
    """The reason for a transport-level failure (connection refused, reset or timed out; a reply or its body
    cut short), or ``None`` for any other error."""
    from botocore.exceptions import (
        ConnectionClosedError,
        ConnectionError,
        HTTPClientError,
        IncompleteReadError,
        ReadTimeoutError,
        ResponseStreamingError,
    )
    from urllib3.exceptions import HTTPError as URLLib3Error

    if isinstance(exc, IncompleteReadError | ResponseStreamingError):
        # The reply came, its body was cut short: botocore does not retry a body read.
        return f"response body cut short: {type(exc).__name__}: {exc}"
    if isinstance(exc, ConnectionError | ConnectionClosedError | ReadTimeoutError):
        return f"store unreachable after retries: {type(exc).__name__}"
    if isinstance(exc, HTTPClientError | URLLib3Error | http.client.HTTPException):
        return f"connection failed while the reply was read: {type(exc).__name__}: {_first_line(exc)}"
    if isinstance(exc, OSError):  # ConnectionResetError, TimeoutError and the like, unwrapped
        return f"connection failed: {type(exc).__name__}: {exc.strerror or exc}"
    return None


def _first_line(exc: Exception) -> str:
    """A short reason: urllib3 errors carry ``(message, cause)`` in their args."""
    text = str(exc.args[0]) if exc.args else str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def retried(call: Callable[[], T], *, attempts: int, sleep: Callable[[float], None] = time.sleep) -> T:
    """``call()``, tried again after a ``TransientStoreError`` up to ``attempts`` tries in all (backoff
    ``RETRY_BACKOFF_S``, doubling). The last try's error is raised, its reason naming the number of tries."""
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except TransientStoreError as exc:
            if attempt >= attempts:
                if attempts == 1:
                    raise
                raise TransientStoreError(
                    f"{exc.reason} ({attempts} attempts)", location=exc.location
                ) from exc
            sleep(RETRY_BACKOFF_S * 2 ** (attempt - 1))
    raise ValueError(f"attempts must be at least 1, not {attempts}")
