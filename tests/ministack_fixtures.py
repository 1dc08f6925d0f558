"""A second, independent S3 implementation for tests: ``ministack`` (PyPI, MIT; its own S3, not moto), in its
own virtualenv ``.venv-ministack`` (it pins another botocore than the project's lock), made by
``scripts/setup``. Started once per session on a free loopback port, in memory; the tests that use it skip,
naming why, when it is not installed. The ``ministack_server`` fixture is registered in
``tests/conftest.py``."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS
from kafka_segments.storage import LocalStore, ObjectStore, S3Store
from kit import stop_process
from s3_fixtures import BUCKET, new_s3_prefix, new_s3_store

ROOT = Path(__file__).resolve().parents[1]
MINISTACK = ROOT / ".venv-ministack" / "bin" / "ministack"
START_TIMEOUT_S = 60.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ministack_server_fixture(tmp: Path) -> Iterator[str]:
    """ministack on ``127.0.0.1:<free port>`` with the test bucket created and the embedded credentials in
    the environment (ministack accepts any): its endpoint URL."""
    if not MINISTACK.exists():
        pytest.skip("ministack is not installed: scripts/setup makes .venv-ministack (pip, about 30 s)")
    port = _free_port()
    environment = {**os.environ, "BIND_HOST": "127.0.0.1", "GATEWAY_PORT": str(port), "TMPDIR": str(tmp)}
    log = (tmp / "ministack.log").open("wb")
    process = subprocess.Popen([str(MINISTACK)], env=environment, stdout=log, stderr=subprocess.STDOUT)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("AWS_ACCESS_KEY_ID", EMBEDDED_CREDENTIALS["aws_access_key_id"])
            mp.setenv("AWS_SECRET_ACCESS_KEY", EMBEDDED_CREDENTIALS["aws_secret_access_key"])
            mp.delenv("AWS_PROFILE", raising=False)
            mp.delenv("AWS_SESSION_TOKEN", raising=False)
            _create_bucket(endpoint, process, tmp / "ministack.log")
            yield endpoint
    finally:
        stop_process(process, timeout=10)
        log.close()


def _create_bucket(endpoint: str, process: subprocess.Popen[bytes], log: Path) -> None:
    client = boto3.client("s3", endpoint_url=endpoint, region_name=DEFAULT_REGION)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            client.create_bucket(Bucket=BUCKET)
            return
        except Exception as exc:
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"ministack did not start on {endpoint}: {exc}\n{tail}") from exc
            time.sleep(0.2)


def new_ministack_store(endpoint: str) -> S3Store:
    """A store on a fresh prefix of ministack's test bucket."""
    return S3Store(BUCKET, new_s3_prefix(), endpoint_url=endpoint, region=DEFAULT_REGION)


BACKENDS = ("local", "s3", "ministack")
"""The ``store`` parameters of the suites that run on every backend (the contract suite, the commit races)."""


def backend_store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    """A fresh lake on ``request.param``: a local directory, moto's S3, or ministack's S3 (skipped, naming
    why, when ministack is not installed)."""
    if request.param == "local":
        return LocalStore(tmp_path / "lake")
    if request.param == "ministack":
        return new_ministack_store(request.getfixturevalue("ministack_server"))
    return new_s3_store(request.getfixturevalue("s3_server"))
