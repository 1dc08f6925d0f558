"""The embedded S3 server for tests (moto's server over real HTTP on loopback, one per session) and fresh
stores on it. The ``s3_server`` fixture is registered in ``tests/conftest.py``."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

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


def new_s3_prefix() -> str:
    return f"t-{uuid.uuid4().hex}"


def new_s3_store(server: EmbeddedS3) -> S3Store:
    """A store on a fresh prefix of the shared bucket (tests stay independent)."""
    return S3Store(BUCKET, new_s3_prefix(), endpoint_url=server.endpoint_url, region=DEFAULT_REGION)
