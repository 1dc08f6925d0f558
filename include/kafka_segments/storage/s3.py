"""S3 (or any S3-compatible server: MinIO, moto) as an object store.

The boto3 client is built lazily from the standard AWS settings, and dropped when the store is pickled
(Spark ships stores to executors). Errors are translated once, here, by code and status
(``s3_errors.translate_s3_error``); transient reads and deletes are retried on top of botocore's retries,
which never repeat a body read. ``UpdateIfMatch`` on a missing key raises ``PreconditionFailedError``, as
locally.

Before its first write (put, delete) in a process, the store proves that the endpoint honours conditional
writes (``s3_probe``: one probe per endpoint, bucket and prefix per process; reads never probe), else it
refuses with ``ConditionalWritesUnsupportedError``.

``get_into(..., verify_checksum=False)`` skips botocore's response checksum (a second client with
``when_required``) for callers that check the bytes themselves: the manifest's sha256, or every batch's
CRC-32C of an ``If-Match`` read. It costs more than a CRC-32C pass over every batch (bench/RESULTS.md)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from kafka_segments.errors import (
    DeleteObjectsError,
    PreconditionFailedError,
)
from kafka_segments.storage.base import (
    Create,
    ObjectMeta,
    Overwrite,
    Progress,
    PutMode,
    PutResult,
    UpdateIfMatch,
    WritableBuffer,
    check_range,
    key_location,
    validate_folder,
    validate_key,
    validate_prefix,
)
from kafka_segments.storage.buffers import check_fits, etag_mismatch, writable_view
from kafka_segments.storage.s3_errors import READ_ATTEMPTS, retried, translate_s3_error, transport_errors
from kafka_segments.storage.s3_probe import ProbeTarget, ensure_conditional_writes
from kafka_segments.storage.s3_reads import READ_CHUNK_BYTES, ResumedRead, stream_into
from kafka_segments.storage.s3_session import new_session

__all__ = ["DELETE_BATCH_SIZE", "READ_CHUNK_BYTES", "S3Store"]

DELETE_BATCH_SIZE = 1000  # DeleteObjects' limit
T = TypeVar("T")


class S3Store:
    """Objects under ``s3://bucket/prefix``. ``prefix`` gets a trailing ``/`` if it has none."""

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        client_factory: Callable[[], Any] | None = None,
        read_attempts: int = READ_ATTEMPTS,
    ) -> None:
        if not bucket or "/" in bucket:
            raise ValueError(f"invalid S3 bucket name {bucket!r}")
        prefix = prefix.lstrip("/")
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        validate_prefix(prefix, location=f"s3://{bucket}/")
        self.bucket = bucket
        self.prefix = prefix
        self.endpoint_url = endpoint_url
        self.region = region
        self.client_factory = client_factory
        self.read_attempts = read_attempts
        self._client: Any = None
        self._unverified_client: Any = None
        self._client_lock = threading.Lock()
        # The endpoint this store proved honours conditional writes (it travels with a pickled store).
        self._writes_checked_at: str | None = None

    def describe(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def location(self, key: str) -> str:
        return key_location(self.describe(), key)

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        return f"S3Store({self.bucket!r}, {self.prefix!r}, endpoint_url={self.endpoint_url!r})"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_client"] = None
        state["_unverified_client"] = None
        del state["_client_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._client_lock = threading.Lock()

    def check_conditional_writes(self) -> None:
        """Prove (once per process per endpoint, bucket and prefix) that the endpoint honours ``If-None-Match:
        *`` and ``If-Match``; else ``ConditionalWritesUnsupportedError``, and nothing of the lake is written.
        Every write calls it first (``s3_probe``)."""
        target = ProbeTarget(client=self.client(), bucket=self.bucket, prefix=self.prefix)
        self._writes_checked_at = ensure_conditional_writes(target, checked_at=self._writes_checked_at)

    def client(self) -> Any:
        """The boto3 S3 client (built on first use)."""
        if self._client is None:
            with self._client_lock:
                if self._client is None:
                    self._client = self._build_client()
        return self._client

    def _client_without_response_checksums(self) -> Any:
        """The client for reads that skip botocore's response checksum (built on first use); the main
        client when the store has a ``client_factory``."""
        if self.client_factory is not None:
            return self.client()
        if self._unverified_client is None:
            with self._client_lock:
                if self._unverified_client is None:
                    self._unverified_client = self._build_client(response_checksum_validation="when_required")
        return self._unverified_client

    def _build_client(self, **options: str) -> Any:
        if self.client_factory is not None:
            return self.client_factory()
        from botocore.config import Config

        custom_endpoint = (
            self.endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        )
        config = Config(
            retries={"mode": "standard"},
            s3={"addressing_style": "path"} if custom_endpoint else None,
            **options,
        )
        session = new_session()
        return session.client("s3", endpoint_url=self.endpoint_url, region_name=self.region, config=config)

    # -- reads ---------------------------------------------------------------------------------------------

    def get(self, key: str) -> bytes:
        full = self._full_key(key)

        def attempt() -> bytes:
            with self._translated(full):
                body = self.client().get_object(Bucket=self.bucket, Key=full)["Body"]
                try:
                    return bytes(body.read())
                finally:
                    body.close()

        return self._retried(attempt)

    def get_into(
        self,
        key: str,
        out: WritableBuffer,
        *,
        verify_checksum: bool = True,
        progress: Progress | None = None,
        if_match: str | None = None,
    ) -> int:
        """The object's bytes into ``out[:size]``; returns ``size`` (``storage.buffers``).

        One GET streamed with ``readinto`` straight into ``out``, its ``ContentLength`` checked against
        ``out`` first; the final empty ``readinto`` makes botocore check the length (``TransientStoreError``
        when short) and, with ``verify_checksum``, the stored checksum. A read cut short is read again
        (``read_attempts`` in all); once ``progress`` was told of bytes, retries are pinned to the first
        reply's etag, so the bytes handed over stay the same (an object replaced meanwhile:
        ``PreconditionFailedError``)."""
        full = self._full_key(key)
        location = f"s3://{self.bucket}/{full}"
        view = writable_view(out, location=location)
        client = self.client() if verify_checksum else self._client_without_response_checksums()
        read = ResumedRead(if_match=if_match, progress=progress)

        def attempt() -> int:
            pin = read.pin()
            conditions = {} if pin is None else {"IfMatch": pin}
            with self._translated(full, expected_etag=pin):
                response = client.get_object(Bucket=self.bucket, Key=full, **conditions)
                body = response["Body"]
                try:
                    read.etag = str(response.get("ETag", "")) or None
                    size = int(response["ContentLength"])
                    check_fits(size, len(view), location=location)
                    stream_into(
                        body, view[:size], location=location, progress=read.forward if progress else None
                    )
                finally:
                    body.close()
            return size

        return self._retried(attempt)

    def get_range(self, key: str, *, start: int, end: int, if_match: str | None = None) -> bytes:
        """Bytes ``[start, end)`` (``ObjectStore.get_range``); ``if_match``: of that etag's version only,
        else ``PreconditionFailedError`` (S3's ``If-Match`` on a ranged GET)."""
        check_range(start, end)
        full = self._full_key(key)
        if start == end:  # an empty range cannot be expressed in a Range header
            found = self.head(key).etag
            if if_match is not None:
                etag_mismatch(if_match, found, location=self.location(key))
            return b""
        conditions = {} if if_match is None else {"IfMatch": if_match}

        def attempt() -> bytes:
            with self._translated(full, expected_etag=if_match):
                from botocore.exceptions import ClientError

                try:
                    response = self.client().get_object(
                        Bucket=self.bucket, Key=full, Range=f"bytes={start}-{end - 1}", **conditions
                    )
                except ClientError as exc:
                    if exc.response.get("Error", {}).get("Code") == "InvalidRange":
                        return b""  # start is past the end of an existing object
                    raise
                body = response["Body"]
                try:
                    return bytes(body.read())
                finally:
                    body.close()

        return self._retried(attempt)

    def head(self, key: str) -> ObjectMeta:
        full = self._full_key(key)

        def attempt() -> Any:
            with self._translated(full):
                return self.client().head_object(Bucket=self.bucket, Key=full)

        response = self._retried(attempt)
        return ObjectMeta(
            key=key,
            size=int(response["ContentLength"]),
            etag=str(response["ETag"]),
            last_modified_ms=int(response["LastModified"].timestamp() * 1000),
        )

    def list(self, prefix: str = "", *, start_after: str | None = None) -> Iterator[ObjectMeta]:
        validate_prefix(prefix, location=self.describe())
        request = {"Prefix": self.prefix + prefix}
        if start_after is not None:
            request["StartAfter"] = self.prefix + start_after
        for page in self._pages(request):
            for item in page.get("Contents", ()):
                yield ObjectMeta(
                    key=str(item["Key"])[len(self.prefix) :],
                    size=int(item["Size"]),
                    etag=str(item["ETag"]),
                    last_modified_ms=int(item["LastModified"].timestamp()) * 1000,  # seconds, as HEAD's
                )

    def list_folders(self, prefix: str = "") -> Iterator[str]:
        validate_folder(prefix, location=self.describe())
        for page in self._pages({"Prefix": self.prefix + prefix, "Delimiter": "/"}):
            for item in page.get("CommonPrefixes", ()):
                yield str(item["Prefix"])[len(self.prefix) :]

    def _pages(self, request: dict[str, str]) -> Iterator[Any]:
        """The pages of a ``ListObjectsV2`` request, each page's request retried on its own."""
        request = {"Bucket": self.bucket, **request}
        while True:

            def attempt() -> Any:
                with self._translated(request["Prefix"]):
                    return self.client().list_objects_v2(**request)

            page = self._retried(attempt)
            yield page
            if not page.get("IsTruncated") or not page.get("NextContinuationToken"):
                return
            request["ContinuationToken"] = str(page["NextContinuationToken"])

    # -- writes --------------------------------------------------------------------------------------------

    def put(self, key: str, data: bytes, *, mode: PutMode = Overwrite()) -> PutResult:  # noqa: B008
        full = self._full_key(key)
        self.check_conditional_writes()
        conditions: dict[str, str] = {}
        if isinstance(mode, Create):
            conditions["IfNoneMatch"] = "*"
        elif isinstance(mode, UpdateIfMatch):
            conditions["IfMatch"] = mode.etag
        with self._translated(full, mode):
            response = self.client().put_object(Bucket=self.bucket, Key=full, Body=data, **conditions)
        return PutResult(key=key, etag=str(response["ETag"]))

    def delete(self, key: str) -> None:
        full = self._full_key(key)
        self.check_conditional_writes()

        def attempt() -> None:
            with self._translated(full):
                self.client().delete_object(Bucket=self.bucket, Key=full)

        self._retried(attempt)

    def delete_many(self, keys: Iterable[str]) -> None:
        full_keys = [self._full_key(key) for key in keys]  # validate every key before deleting any
        if full_keys:
            self.check_conditional_writes()
        failed: dict[str, str] = {}
        for first in range(0, len(full_keys), DELETE_BATCH_SIZE):
            batch = full_keys[first : first + DELETE_BATCH_SIZE]

            def attempt(batch: list[str] = batch) -> Any:
                with self._translated(batch[0]):
                    return self.client().delete_objects(
                        Bucket=self.bucket, Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True}
                    )

            response = self._retried(attempt)
            for error in response.get("Errors", ()):
                failed[self._relative_key(str(error.get("Key", "?")))] = str(error.get("Code", "error"))
        if failed:
            shown = ", ".join(f"{k} ({c})" for k, c in sorted(failed.items())[:10])
            more = f" and {len(failed) - 10} more" if len(failed) > 10 else ""
            raise DeleteObjectsError(
                f"{len(failed)} object(s) not deleted: {shown}{more}", location=self.describe(), failed=failed
            )

    # -- helpers -------------------------------------------------------------------------------------------

    def _retried(self, call: Callable[[], T]) -> T:
        """``call()`` (a read or a delete: repeatable), again after a ``TransientStoreError``
        (``s3_errors.retried``, ``read_attempts`` tries in all). Puts are never repeated here: a conditional
        put whose reply was lost is the caller's to settle (``lake.commit``)."""
        return retried(call, attempts=self.read_attempts)

    def _full_key(self, key: str) -> str:
        return self.prefix + validate_key(key, location=self.describe())

    def _relative_key(self, full_key: str) -> str:
        """A bucket key back to a store key (``DeleteObjectsError.failed`` names store keys)."""
        return full_key[len(self.prefix) :] if full_key.startswith(self.prefix) else full_key

    @contextmanager
    def _translated(
        self, full_key: str, mode: PutMode | None = None, *, expected_etag: str | None = None
    ) -> Iterator[None]:
        """botocore's (and the transport's) errors as this package's; a read's ``expected_etag``
        (``If-Match``) is named in the ``PreconditionFailedError`` of a 412."""
        try:
            yield
        except transport_errors() as exc:
            error = translate_s3_error(exc, bucket=self.bucket, key=full_key, mode=mode)
            if expected_etag is not None and isinstance(error, PreconditionFailedError):
                error = PreconditionFailedError(
                    f"the object changed: its etag is no longer {expected_etag} ({error.reason})",
                    location=error.location,
                )
            raise error from exc
