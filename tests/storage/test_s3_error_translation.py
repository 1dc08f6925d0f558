"""botocore errors become project errors by error code and HTTP status, never by message text."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)
from kafka_segments.errors import (
    ConditionalWriteConflictError,
    DeleteObjectsError,
    KafkaSegmentsError,
    ObjectAlreadyExistsError,
    ObjectNotFoundError,
    ObjectStoreError,
    PreconditionFailedError,
    StoreAccessError,
    TransientStoreError,
)
from kafka_segments.storage import Create, Overwrite, PutMode, S3Store, UpdateIfMatch, translate_s3_error

pytestmark = pytest.mark.unit

BUCKET = "lake-bucket"
KEY = "_kafka_segments/manifest/00000000000000000007.json"


def client_error(code: str, status: int, message: str = "boom", operation: str = "PutObject") -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}},
        operation,
    )


def translate(exc: Exception, mode: PutMode | None = None) -> ObjectStoreError:
    return translate_s3_error(exc, bucket=BUCKET, key=KEY, mode=mode)


@pytest.mark.parametrize(
    ("code", "status", "mode", "expected", "retriable"),
    [
        ("NoSuchKey", 404, None, ObjectNotFoundError, False),
        ("404", 404, None, ObjectNotFoundError, False),  # HeadObject's bodiless 404
        ("NotFound", 404, Overwrite(), ObjectNotFoundError, False),
        ("NoSuchKey", 404, UpdateIfMatch('"e1"'), PreconditionFailedError, False),
        ("PreconditionFailed", 412, Create(), ObjectAlreadyExistsError, False),
        ("412", 412, Create(), ObjectAlreadyExistsError, False),
        ("PreconditionFailed", 412, UpdateIfMatch('"e1"'), PreconditionFailedError, False),
        ("412", 412, None, PreconditionFailedError, False),
        ("ConditionalRequestConflict", 409, Create(), ConditionalWriteConflictError, True),
        ("409", 409, UpdateIfMatch('"e1"'), ConditionalWriteConflictError, True),
        ("SlowDown", 503, None, TransientStoreError, True),
        ("503", 503, None, TransientStoreError, True),
        ("ServiceUnavailable", 503, None, TransientStoreError, True),
        ("InternalError", 500, None, TransientStoreError, True),
        ("AccessDenied", 403, None, StoreAccessError, False),
        ("403", 403, None, StoreAccessError, False),
        ("NoSuchBucket", 404, None, ObjectStoreError, False),
        ("SomethingNew", 400, None, ObjectStoreError, False),
    ],
)
def test_client_errors(
    code: str, status: int, mode: PutMode | None, expected: type[ObjectStoreError], retriable: bool
) -> None:
    error = translate(client_error(code, status), mode)
    assert type(error) is expected
    assert isinstance(error, KafkaSegmentsError)
    assert error.retriable is retriable
    assert f"s3://{BUCKET}/{KEY}" in str(error)
    assert error.location == f"s3://{BUCKET}/{KEY}"


def test_conflict_is_a_retriable_precondition_failure() -> None:
    error = translate(client_error("ConditionalRequestConflict", 409), UpdateIfMatch('"e"'))
    assert isinstance(error, PreconditionFailedError)
    assert error.retriable


def test_the_code_decides_not_the_message() -> None:
    error = translate(client_error("AccessDenied", 403, message="The specified key was not found"))
    assert type(error) is StoreAccessError
    error = translate(client_error("NoSuchKey", 404, message="Access Denied, slow down, precondition failed"))
    assert type(error) is ObjectNotFoundError


def test_the_status_decides_when_the_code_is_unknown() -> None:
    assert type(translate(client_error("Weird", 502))) is TransientStoreError
    assert type(translate(client_error("Weird", 403))) is StoreAccessError
    assert type(translate(client_error("Weird", 412), Create())) is ObjectAlreadyExistsError


@pytest.mark.parametrize(
    "exc",
    [
        EndpointConnectionError(endpoint_url="http://127.0.0.1:1"),
        ConnectionClosedError(endpoint_url="http://127.0.0.1:1"),
        ReadTimeoutError(endpoint_url="http://127.0.0.1:1"),
    ],
    ids=["endpoint", "closed", "read-timeout"],
)
def test_connection_errors_are_transient(exc: Exception) -> None:
    error = translate(exc)
    assert type(error) is TransientStoreError
    assert error.retriable
    assert KEY in str(error)


def test_missing_credentials_are_an_access_error() -> None:
    error = translate(NoCredentialsError())
    assert type(error) is StoreAccessError
    assert not error.retriable


def test_translated_errors_pickle() -> None:
    error = translate(client_error("PreconditionFailed", 412), Create())
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is ObjectAlreadyExistsError
    assert (str(copy), copy.location, copy.reason) == (str(error), error.location, error.reason)


class _PartialDeleteClient:
    """A client whose DeleteObjects reports one key as failed, as S3 does per key."""

    def delete_objects(self, *, Bucket: str, Delete: dict[str, Any]) -> dict[str, Any]:  # noqa: N803
        first = Delete["Objects"][0]["Key"]
        return {"Errors": [{"Key": first, "Code": "AccessDenied", "Message": "no"}]}


def test_delete_many_names_failed_keys_relative_to_the_store(monkeypatch: pytest.MonkeyPatch) -> None:
    store = S3Store("bucket", "lake/prefix")
    store._client = _PartialDeleteClient()
    monkeypatch.setattr(store, "check_conditional_writes", lambda: None)  # the fake has no PUT to probe with
    with pytest.raises(DeleteObjectsError, match="1 object") as caught:
        store.delete_many(["orders-0/a.log", "orders-0/b.log"])
    assert caught.value.failed == {"orders-0/a.log": "AccessDenied"}
