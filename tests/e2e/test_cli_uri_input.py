"""Bad lake URIs and offsets sources on the command line: one line naming the mistake, exit 2 or 1, and a
secret in a URI's userinfo never echoed (``kafka_segments.redaction``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_harness import cli
from kafka_segments.storage import LocalStore
from kit import T0
from lake.retention_helpers import upload_fifteen_records

pytestmark = pytest.mark.e2e

SECRET = "s3cr3tPassw0rd"


def one_line_error(result: subprocess.CompletedProcess[str], command: str) -> str:
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"kafka-segments {command}: ")
    return result.stderr


@pytest.mark.parametrize("uri", ["s3://b/../x", "s3://bucket/../x", "s3://lake-bucket/a/../b"])
def test_a_dotdot_in_the_prefix_is_named_not_the_bucket(uri: str) -> None:
    result = cli("describe", "--lake", uri)
    assert result.returncode == 2
    line = one_line_error(result, "describe")
    assert "has a '..' segment" in line
    assert "bucket name" not in line


@pytest.mark.parametrize(
    "args",
    [
        ["describe", "--lake", f"s3://AKIAEXAMPLE:{SECRET}@bucket/lake"],
        ["gc", "--lake", f"s3://AKIAEXAMPLE:{SECRET}@bucket/lake"],
        ["describe", "--lake", f"s3://{SECRET}@bucket/lake"],
        ["describe", "--lake", f"file://user:{SECRET}@localhost/tmp/lake"],
    ],
    ids=["s3-key-secret", "gc", "s3-token", "file"],
)
def test_credentials_in_a_lake_uri_are_refused_without_echoing_the_secret(args: list[str]) -> None:
    result = cli(*args)
    assert result.returncode == 2
    line = one_line_error(result, args[0])
    assert SECRET not in result.stdout + result.stderr
    assert "credentials in the URI are not allowed" in line
    assert "***@" in line


def test_offsets_snapshot_from_a_kafka_uri_with_credentials(tmp_path: Path) -> None:
    LocalStore(tmp_path / "lake").put("x", b"")
    result = cli(
        "offsets",
        "snapshot",
        "--lake",
        str(tmp_path / "lake"),
        "--source",
        f"kafka://user:{SECRET}@host:9092",
    )
    assert result.returncode != 0
    assert SECRET not in result.stdout + result.stderr
    assert "kafka://user:***@host:9092" in result.stderr
    assert "Traceback" not in result.stderr


def test_run_with_an_offsets_source_with_credentials(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    upload_fifteen_records(LocalStore(root), ts=10)
    config = tmp_path / "c.yaml"
    config.write_text("topics:\n  t:\n    retention.ms: 10000\n")
    source = f"kafka://{SECRET}@host:9092"
    result = cli(
        "run", "--lake", str(root), "--config", str(config), "--now", str(T0), "--offsets-source", source
    )
    assert result.returncode != 0
    assert SECRET not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
