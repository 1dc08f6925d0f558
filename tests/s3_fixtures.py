"""The embedded S3 server for tests (moto's server over real HTTP on loopback, one per session) and fresh
stores on it. The ``s3_server`` fixture is registered in ``tests/conftest.py``.

Every store is on a fresh prefix of one bucket, and moto lists a prefix by scanning every key of the bucket:
left for the whole session, the objects of earlier test files made each listing slower (a session's lists
cost the square of its objects). ``PREFIXES`` keeps the prefixes handed out, and the objects under those of
a test file are deleted once the file has ended (``conftest.s3_objects_of_ended_files``), except the ones a
session-scoped fixture made, which live as long as the session."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Collection, Iterator

import pytest
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS, EmbeddedS3, embedded_s3_server
from kafka_segments.storage import S3Store

BUCKET = "lake-tests"


def s3_server_fixture() -> Iterator[EmbeddedS3]:
    """Start the server with the embedded credentials in the environment and the test bucket created."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_ACCESS_KEY_ID", EMBEDDED_CREDENTIALS["aws_access_key_id"])
        mp.setenv("AWS_SECRET_ACCESS_KEY", EMBEDDED_CREDENTIALS["aws_secret_access_key"])
        mp.delenv("AWS_PROFILE", raising=False)
        mp.delenv("AWS_SESSION_TOKEN", raising=False)
        with embedded_s3_server() as server:
            server.client().create_bucket(Bucket=BUCKET)
            yield server


class Prefixes:
    """The prefixes ``new_s3_prefix`` handed out in this process that end with their test file."""

    def __init__(self) -> None:
        self._of_the_file: list[str] = []
        self._session_setups = 0

    def new(self) -> str:
        prefix = f"t-{uuid.uuid4().hex}"
        if not self._session_setups:
            self._of_the_file.append(prefix)
        return prefix

    @contextlib.contextmanager
    def for_the_session(self) -> Iterator[None]:
        """The prefixes handed out meanwhile (a session-scoped fixture's setup) live for the session."""
        self._session_setups += 1
        try:
            yield
        finally:
            self._session_setups -= 1

    def of_ended_file(self) -> frozenset[str]:
        """The prefixes handed out since the last call, outside session-scoped fixtures' setups."""
        ended, self._of_the_file = frozenset(self._of_the_file), []
        return ended


PREFIXES = Prefixes()


def new_s3_prefix() -> str:
    return PREFIXES.new()


def delete_objects_under(prefixes: Collection[str]) -> int:
    """Delete the objects under ``prefixes`` from the bucket of the embedded server running in this process,
    in one pass over its keys (listing each prefix would scan them all once per prefix); returns how many."""
    if not prefixes:
        return 0
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    bucket = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].buckets.get(BUCKET)
    if bucket is None:
        return 0
    gone = [name for name in list(bucket.keys.keys()) if name.split("/", 1)[0] in prefixes]
    for name in gone:
        bucket.keys.pop(name)
    return len(gone)


def new_s3_store(server: EmbeddedS3) -> S3Store:
    """A store on a fresh prefix of the shared bucket (tests stay independent)."""
    return S3Store(BUCKET, new_s3_prefix(), endpoint_url=server.endpoint_url, region=DEFAULT_REGION)
