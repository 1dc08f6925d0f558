"""``kafka-segments adopt`` / ``run`` / ``describe`` on S3 behind a fault-injecting proxy
(``tests/fault_proxy.py`` on loopback, in front of moto; the commands reach it through
``AWS_ENDPOINT_URL``). Whatever the network or S3 does, a command succeeds or fails with one line on
stderr and a non-zero exit — never a traceback — and the lake's committed state stays whole: every
segment the head manifest lists is there and reads back.

The commands run in process (``cli.main.main``, what the console script calls), with the environment a
process would get and stderr captured whole: an exception escaping ``main`` fails the test as a traceback
would, and log records reach the captured stderr as Python's last-resort handler would write them
(``WARNING`` and up). A process per command cost some 1.5 s of CPU in start-up and imports, 15 times."""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import cli_in_process
from fault_proxy import ALWAYS, Fault, FaultProxy, fault_proxy
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS, EmbeddedS3
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.history import read_head
from kafka_segments.lake.reader import read_segment
from kafka_segments.lake.recover import recover
from kafka_segments.storage import S3Store
from kit import T0
from s3_fixtures import BUCKET, new_s3_prefix

from lake.retention_helpers import upload_fifteen_records

pytestmark = pytest.mark.lake

CONFIG = "topics:\n  t:\n    retention.ms: 10000\n    file.delete.delay.ms: 0\n"

FAULTS = {
    "manifest-404-cut-every-time": Fault(
        "truncate", path_contains="/manifests/", upstream_status=404, times=ALWAYS
    ),
    "reset-every-time": Fault("reset_before", times=ALWAYS),
    "slowdown-every-time": Fault("status", status=503, times=ALWAYS),
    "get-200-cut-twice": Fault("truncate", method="GET", upstream_status=200, times=2),
    "put-reply-lost-every-time": Fault("lost_reply", method="PUT", times=ALWAYS),
}


@pytest.fixture(scope="module")
def proxy(s3_server: EmbeddedS3) -> Iterator[FaultProxy]:
    with fault_proxy(s3_server.endpoint_url) as running:
        yield running


def environment(endpoint: str) -> dict[str, str]:
    return {
        "AWS_ACCESS_KEY_ID": EMBEDDED_CREDENTIALS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": EMBEDDED_CREDENTIALS["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": DEFAULT_REGION,
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_MAX_ATTEMPTS": "2",
    }


def assert_clean_outcome(result: subprocess.CompletedProcess[str], command: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    if result.returncode == 0:
        return
    errors = [line for line in result.stderr.splitlines() if line.startswith(f"kafka-segments {command}:")]
    assert len(errors) == 1, result.stderr
    assert errors[0] == result.stderr.rstrip("\n").splitlines()[-1]


def assert_lake_whole(store: S3Store) -> None:
    head = read_head(store)
    assert head is not None
    for entry in head.live_segments():
        read_segment(store, entry)


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_commands_succeed_or_fail_in_one_line_and_the_lake_stays_whole(
    proxy: FaultProxy, s3_server: EmbeddedS3, tmp_path: Path, fault: Fault
) -> None:
    prefix = new_s3_prefix()
    store = S3Store(BUCKET, prefix, endpoint_url=s3_server.endpoint_url, region=DEFAULT_REGION)
    upload_fifteen_records(store, ts=10)
    adopt(store, now_ms=T0)
    lake = f"s3://{BUCKET}/{prefix}"
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    before = read_head(store)

    proxy.clear()
    proxy.add(dataclasses.replace(fault))  # a fresh count for each run of the test
    commands = {
        "adopt": ["adopt", "--lake", lake, "--now", str(T0)],
        "run": ["run", "--lake", lake, "--config", str(config), "--now", str(T0), "--engine", "inline"],
        "describe": ["describe", "--lake", lake],
    }
    for command, args in commands.items():
        assert_clean_outcome(cli_in_process(*args, aws=environment(proxy.endpoint_url)), command)
    proxy.clear()

    recover(store)
    assert_lake_whole(store)
    after = read_head(store)
    assert before is not None
    assert after is not None
    assert after.version >= before.version
