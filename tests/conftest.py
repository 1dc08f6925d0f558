"""Shared test configuration. Fixtures live next to the tests that use them."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from kafka_segments.embedded_s3 import EmbeddedS3
from s3_fixtures import s3_server_fixture

settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def s3_server() -> Iterator[EmbeddedS3]:
    """moto's S3 server on loopback for the whole session, bucket ``s3_fixtures.BUCKET`` created."""
    yield from s3_server_fixture()
