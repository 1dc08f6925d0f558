"""The conditional-write check at the door of an S3 lake (``storage.s3_probe``, docs/lake.md "Conditional
writes"): a store that ignores ``If-None-Match: *`` and ``If-Match`` is refused in one line naming the
endpoint and the missing guarantees before anything of the lake is written; moto and ministack pass; reads
never probe; one probe per lake per process.

The lying store is ``tests/lying_s3.py`` (a stub that drops both headers, as s3rver 3.7.1 does), and
s3rver itself when ``scripts/setup-s3rver`` installed it (else that test skips, saying so)."""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from fault_proxy import FaultProxy, fault_proxy
from kafka_segments.cli.main import main
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS, EmbeddedS3
from kafka_segments.errors import ConditionalWritesUnsupportedError
from kafka_segments.lake import layout
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.storage import LocalStore, S3Store, s3_probe
from kit import T0
from lying_s3 import LyingS3, lying_s3_server
from ministack_fixtures import new_ministack_store
from s3_fixtures import BUCKET, new_s3_prefix

from lake.retention_helpers import upload_fifteen_records

pytestmark = pytest.mark.lake

ROOT = Path(__file__).resolve().parents[2]
S3RVER = ROOT / ".venv" / "s3rver" / "node_modules" / ".bin" / "s3rver"
CONFIG = "topics:\n  t:\n    retention.ms: 10000\n    file.delete.delay.ms: 0\n"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": EMBEDDED_CREDENTIALS["aws_access_key_id"],
    "AWS_SECRET_ACCESS_KEY": EMBEDDED_CREDENTIALS["aws_secret_access_key"],
}


@pytest.fixture(scope="module")
def lying() -> Iterator[LyingS3]:
    with lying_s3_server() as server:
        yield server


def cli(*args: str, endpoint: str, credentials: dict[str, str] = CREDENTIALS) -> tuple[int, str]:
    """``kafka-segments ARGS`` in process with only ``endpoint`` and ``credentials`` for AWS: (status,
    stderr)."""
    err = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(io.StringIO()):
        for name in [name for name in os.environ if name.startswith("AWS_")]:
            patch.delenv(name)
        for name, value in {**credentials, "AWS_DEFAULT_REGION": DEFAULT_REGION}.items():
            patch.setenv(name, value)
        patch.setenv("AWS_ENDPOINT_URL", endpoint)
        patch.setenv("AWS_MAX_ATTEMPTS", "1")
        with contextlib.redirect_stderr(err):
            status = main(list(args))
    return status, err.getvalue()


def seed(server: LyingS3, prefix: str, tmp_path: Path, *, adopted: bool) -> list[str]:
    """Fifteen records of topic t in three segments (and the adopted lake, with ``adopted``) written straight
    into the stub under ``prefix``: the lake's keys."""
    local = LocalStore(tmp_path / "seed")
    upload_fifteen_records(local, ts=10)
    if adopted:
        adopt(local, now_ms=T0)
    with server.lock:
        for meta in local.list():
            server.objects[f"{BUCKET}/{prefix}/{meta.key}"] = local.get(meta.key)
    return server.keys(BUCKET)


def assert_refusal(status: int, stderr: str, *, command: str, endpoint: str, missing: str) -> None:
    """Exit status 1 and one error line (after the progress lines, if any), naming the lake, the endpoint and
    the missing guarantees."""
    errors = [line for line in stderr.splitlines() if line.startswith(f"kafka-segments {command}:")]
    assert status == 1, stderr
    assert "Traceback" not in stderr, stderr
    assert len(errors) == 1, stderr
    assert errors[0] == stderr.rstrip("\n").splitlines()[-1]
    assert errors[0].startswith(f"kafka-segments {command}: s3://{BUCKET}/t-"), stderr
    assert f"the S3 endpoint {endpoint} does not honour conditional writes: {missing}" in errors[0]


@pytest.mark.parametrize("command", ["adopt", "run"])
def test_a_store_that_ignores_conditional_headers_is_refused_before_the_lake_is_written(
    lying: LyingS3, tmp_path: Path, command: str
) -> None:
    prefix = new_s3_prefix()
    before = seed(lying, prefix, tmp_path, adopted=command == "run")
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    lake = f"s3://{BUCKET}/{prefix}"
    args = {
        "adopt": ["adopt", "--lake", lake, "--now", str(T0)],
        "run": ["run", "--lake", lake, "--config", str(config), "--now", str(T0), "--engine", "inline"],
    }[command]

    status, stderr = cli(*args, endpoint=lying.endpoint_url)

    assert_refusal(
        status, stderr, command=command, endpoint=lying.endpoint_url, missing="If-None-Match and If-Match"
    )
    assert lying.keys(BUCKET) == before  # nothing of the lake written, the probe object gone


def test_the_refusal_is_an_error_naming_the_lake_endpoint_and_guarantees(lying: LyingS3) -> None:
    store = S3Store(BUCKET, new_s3_prefix(), endpoint_url=lying.endpoint_url, region=DEFAULT_REGION)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in CREDENTIALS.items():
            patch.setenv(name, value)
        with pytest.raises(ConditionalWritesUnsupportedError) as raised:
            store.put("t-0/00000000000000000000.log", b"x")
        with pytest.raises(ConditionalWritesUnsupportedError):
            store.delete_many(["t-0/00000000000000000000.log"])
    assert raised.value.location == store.describe()
    assert raised.value.endpoint == lying.endpoint_url
    assert raised.value.missing == ("If-None-Match", "If-Match")
    assert [key for key in lying.keys(BUCKET) if key.startswith(store.prefix)] == []


@pytest.mark.parametrize("command", ["describe", "dump", "export"])
def test_read_only_commands_do_not_probe(lying: LyingS3, tmp_path: Path, command: str) -> None:
    prefix = new_s3_prefix()
    before = seed(lying, prefix, tmp_path, adopted=True)
    with lying.lock:
        conditional_before = lying.conditional_puts
    lake = f"s3://{BUCKET}/{prefix}"
    args = {
        "describe": ["describe", "--lake", lake],
        "dump": ["dump", "--lake", lake, "--topic", "t", "--partition", "0"],
        "export": ["export", "--lake", lake, "--to", str(tmp_path / "out")],
    }[command]

    status, stderr = cli(*args, endpoint=lying.endpoint_url)

    assert (status, stderr) == (0, "")
    assert lying.keys(BUCKET) == before
    assert lying.conditional_puts == conditional_before


@pytest.fixture
def proxy(s3_server: EmbeddedS3) -> Iterator[FaultProxy]:
    with fault_proxy(s3_server.endpoint_url) as running:
        yield running


def test_moto_passes_once_per_lake_per_process_and_leaves_no_probe(
    proxy: FaultProxy, s3_server: EmbeddedS3
) -> None:
    prefix = new_s3_prefix()
    first = S3Store(BUCKET, prefix, endpoint_url=proxy.endpoint_url, region=DEFAULT_REGION)
    first.put("a", b"1")
    probe_puts = [r for r in proxy.requests if r[0] == "PUT" and s3_probe.PROBE_PREFIX in r[1]]
    assert len(probe_puts) == 4  # create, create again (refused), wrong If-Match (refused), right If-Match
    assert [meta.key for meta in first.list()] == ["a"]  # the probe object deleted

    proxy.clear()
    again = S3Store(BUCKET, prefix, endpoint_url=proxy.endpoint_url, region=DEFAULT_REGION)
    again.put("b", b"2")
    again.delete("b")
    first.put("c", b"3")
    assert [r for r in proxy.requests if s3_probe.PROBE_PREFIX in r[1]] == []

    other = S3Store(BUCKET, new_s3_prefix(), endpoint_url=proxy.endpoint_url, region=DEFAULT_REGION)
    list(other.list())  # reads never probe
    assert [r for r in proxy.requests if s3_probe.PROBE_PREFIX in r[1]] == []
    other.put("d", b"4")
    assert len([r for r in proxy.requests if s3_probe.PROBE_PREFIX in r[1]]) == 5  # its own probe, then gone


def test_ministack_passes_the_probe(ministack_server: str) -> None:
    store = new_ministack_store(ministack_server)
    store.check_conditional_writes()
    assert list(store.list()) == []  # the probe object deleted


def test_probe_objects_live_in_the_lakes_bookkeeping_folder() -> None:
    """Adoption, gc and the views ignore that folder: a probe a killed process left behind is harmless."""
    assert s3_probe.PROBE_PREFIX.startswith(layout.META_PREFIX)
    assert layout.is_meta_key(s3_probe.PROBE_PREFIX + "x")


def test_a_pickled_store_carries_its_verdict(
    proxy: FaultProxy, s3_server: EmbeddedS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = S3Store(BUCKET, new_s3_prefix(), endpoint_url=proxy.endpoint_url, region=DEFAULT_REGION)
    store.check_conditional_writes()
    monkeypatch.setattr(s3_probe, "_verified", set())  # as a fresh process (a Spark executor) starts
    proxy.clear()

    shipped = pickle.loads(pickle.dumps(store))
    shipped.put("a", b"1")

    assert [r for r in proxy.requests if s3_probe.PROBE_PREFIX in r[1]] == []


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def s3rver(tmp_path: Path) -> Iterator[str]:
    """s3rver 3.7.1 (npm) on a free loopback port, bucket ``BUCKET`` created: its endpoint."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: s3rver cannot run")
    if not S3RVER.exists():
        pytest.skip("s3rver is not installed: scripts/setup-s3rver installs it (npm, about a minute)")
    port = free_port()
    command = [str(S3RVER), "-d", str(tmp_path / "s3rver"), "-a", "127.0.0.1", "-p", str(port), "-s"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        endpoint = f"http://127.0.0.1:{port}"
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name=DEFAULT_REGION,
            aws_access_key_id="S3RVER",
            aws_secret_access_key="S3RVER",  # s3rver's fixed test credentials
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                client.create_bucket(Bucket=BUCKET)
                break
            except Exception:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.2)
        yield endpoint
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_s3rver_is_refused(s3rver: str, tmp_path: Path) -> None:
    credentials = {"AWS_ACCESS_KEY_ID": "S3RVER", "AWS_SECRET_ACCESS_KEY": "S3RVER"}
    prefix = new_s3_prefix()
    local = LocalStore(tmp_path / "seed")
    upload_fifteen_records(local, ts=10)
    client = boto3.client(
        "s3",
        endpoint_url=s3rver,
        region_name=DEFAULT_REGION,
        aws_access_key_id="S3RVER",
        aws_secret_access_key="S3RVER",  # s3rver's fixed test credentials
    )
    for meta in local.list():
        client.put_object(Bucket=BUCKET, Key=f"{prefix}/{meta.key}", Body=local.get(meta.key))
    before = sorted(o["Key"] for o in client.list_objects_v2(Bucket=BUCKET).get("Contents", ()))

    lake = f"s3://{BUCKET}/{prefix}"
    status, stderr = cli("adopt", "--lake", lake, "--now", str(T0), endpoint=s3rver, credentials=credentials)

    assert_refusal(status, stderr, command="adopt", endpoint=s3rver, missing="If-None-Match and If-Match")
    after = sorted(o["Key"] for o in client.list_objects_v2(Bucket=BUCKET).get("Contents", ()))
    assert after == before
