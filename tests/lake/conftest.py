"""Fixtures of the lake tests: every test that takes ``store`` runs on a local directory and on S3 (moto's
server over real HTTP on loopback); ``clock`` is a settable wall clock."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka_segments.embedded_s3 import DEFAULT_REGION, EMBEDDED_CREDENTIALS, EmbeddedS3, embedded_s3_server
from kafka_segments.storage import LocalStore, ObjectStore, S3Store

from lake.helpers import FakeClock

BUCKET = "lake-tests"


@pytest.fixture(scope="session")
def s3_server() -> Iterator[EmbeddedS3]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_ACCESS_KEY_ID", EMBEDDED_CREDENTIALS["aws_access_key_id"])
        mp.setenv("AWS_SECRET_ACCESS_KEY", EMBEDDED_CREDENTIALS["aws_secret_access_key"])
        mp.delenv("AWS_PROFILE", raising=False)
        mp.delenv("AWS_SESSION_TOKEN", raising=False)
        with embedded_s3_server() as server:
            server.client().create_bucket(Bucket=BUCKET)
            yield server


def new_s3_store(server: EmbeddedS3) -> S3Store:
    """A store on a fresh prefix of the shared bucket (tests stay independent)."""
    return S3Store(BUCKET, f"t-{uuid.uuid4().hex}", endpoint_url=server.endpoint_url, region=DEFAULT_REGION)


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    if request.param == "local":
        return LocalStore(tmp_path / "lake")
    return new_s3_store(request.getfixturevalue("s3_server"))


@pytest.fixture
def local_store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "lake")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
