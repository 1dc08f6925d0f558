"""Fixtures of the validation tests: ``store`` runs on a local directory and on S3 (moto's server over real
HTTP on loopback), ``local_store`` on a directory only (most scenarios: GX sees the same frames either way);
``clock`` is a settable wall clock."""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka_segments.storage import LocalStore, ObjectStore
from lake.helpers import FakeClock
from s3_fixtures import new_s3_store


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
