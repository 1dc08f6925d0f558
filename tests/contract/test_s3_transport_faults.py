"""``S3Store`` behind a fault-injecting proxy (``tests/fault_proxy.py``, loopback, in front of moto): a
connection reset before the reply or after its headers, a body cut short (200 and 404 replies), 500 and
503 SlowDown, a slow reply. Every operation either succeeds (botocore's retries, then the store's own for
reads and deletes) or raises ``TransientStoreError``, never a urllib3 / botocore / http.client exception,
and within a bounded time."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.config import Config
from fault_proxy import ALWAYS, Fault, FaultProxy, fault_proxy
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS, EmbeddedS3
from kafka_segments.errors import (
    ObjectAlreadyExistsError,
    ObjectNotFoundError,
    TransientStoreError,
)
from kafka_segments.storage import Create, S3Store, s3_errors
from s3_fixtures import BUCKET, new_s3_prefix

pytestmark = pytest.mark.contract

DATA = bytes(range(256)) * 400
BOUND_S = 20.0

FAULTS = {
    "reset-before-reply": {"kind": "reset_before"},
    "reply-lost": {"kind": "lost_reply"},
    "reset-after-headers": {"kind": "reset_after_headers"},
    "truncated-200": {"kind": "truncate", "upstream_status": 200},
    "truncated-404": {"kind": "truncate", "upstream_status": 404},
    "500": {"kind": "status", "status": 500},
    "503-slowdown": {"kind": "status", "status": 503},
    "delayed": {"kind": "delay", "delay_s": 0.3},
}


@pytest.fixture(scope="module")
def proxy(s3_server: EmbeddedS3) -> Iterator[FaultProxy]:
    with fault_proxy(s3_server.endpoint_url) as running:
        yield running


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's and the store's retries as configured, with shorter pauses (the count is what matters)."""
    monkeypatch.setattr(s3_errors, "RETRY_BACKOFF_S", 0.01)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")


@pytest.fixture(scope="module")
def prefix(proxy: FaultProxy) -> str:
    """The module's prefix, its two objects put once: no test changes them (the write test deletes what it
    puts). Putting them again per test was a third of the module's time."""
    proxy.clear()
    prefix = new_s3_prefix()
    store = S3Store(BUCKET, prefix, endpoint_url=proxy.endpoint_url, region=DEFAULT_REGION)
    store.put("seg.log", DATA)
    store.put("other.log", b"x")
    return prefix


@pytest.fixture
def store(prefix: str, proxy: FaultProxy) -> Iterator[S3Store]:
    """A store with its own client per test: botocore's retry quota (standard mode) is per client, and a
    client shared by the module runs out of it."""
    proxy.clear()
    yield S3Store(BUCKET, prefix, endpoint_url=proxy.endpoint_url, region=DEFAULT_REGION)
    proxy.clear()


def get_into(store: S3Store) -> bytes:
    out = bytearray(len(DATA) + 10)
    return bytes(out[: store.get_into("seg.log", out)])


READS: dict[str, tuple[Callable[[S3Store], Any], Any]] = {
    "get": (lambda s: s.get("seg.log"), DATA),
    "get-missing": (lambda s: s.get("missing.log"), ObjectNotFoundError),
    "get-into": (get_into, DATA),
    "get-into-unverified": (
        lambda s: bytes(s.get_into("seg.log", out := bytearray(len(DATA)), verify_checksum=False) and out),
        DATA,
    ),
    "get-range": (lambda s: s.get_range("seg.log", start=5, end=300), DATA[5:300]),
    "head-missing": (lambda s: s.head("missing.log"), ObjectNotFoundError),
    "head": (lambda s: s.head("seg.log").size, len(DATA)),
    "list": (lambda s: [m.key for m in s.list()], ["other.log", "seg.log"]),
}


def outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except (ObjectNotFoundError, TransientStoreError) as exc:
        return type(exc)


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
@pytest.mark.parametrize("read", READS.keys())
def test_a_read_hit_once_succeeds_after_retry(
    store: S3Store, proxy: FaultProxy, read: str, fault: dict[str, Any]
) -> None:
    call, expected = READS[read]
    proxy.add(Fault(**fault, times=1))
    assert outcome(lambda: call(store)) == expected


@pytest.mark.parametrize("fault", [k for k in FAULTS if k != "delayed"])
@pytest.mark.parametrize("read", ["get", "get-missing", "get-into", "get-range", "head-missing", "list"])
def test_a_read_hit_every_time_raises_the_retriable_error_in_bounded_time(
    store: S3Store, proxy: FaultProxy, read: str, fault: str
) -> None:
    call, expected = READS[read]
    applied = proxy.add(Fault(**FAULTS[fault], times=ALWAYS))
    started = time.monotonic()
    result = outcome(lambda: call(store))
    assert time.monotonic() - started < BOUND_S
    # A fault for a reply the operation never gets (a truncated 404 of a read that finds its object) or a
    # reset after a HEAD reply's headers (the whole reply) changes nothing.
    harmless = read.startswith("head") and applied.kind in {"reset_after_headers", "truncate"}
    assert result == (TransientStoreError if applied.applied and not harmless else expected)


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_writes_succeed_or_raise_a_store_error_and_leave_nothing_foreign(
    store: S3Store, proxy: FaultProxy, fault: dict[str, Any]
) -> None:
    proxy.add(Fault(**fault, method="PUT", times=1))
    # a reply lost after the write: botocore's retry may find the object there
    with contextlib.suppress(TransientStoreError, ObjectAlreadyExistsError):
        store.put("new.json", b"mine", mode=Create())
    proxy.clear()
    # written whole or not at all: never a half-written object
    assert outcome(lambda: store.get("new.json")) in (b"mine", ObjectNotFoundError)
    proxy.add(Fault(**fault, method="DELETE", times=1))
    assert outcome(lambda: store.delete("new.json")) is None
    assert outcome(lambda: store.head("new.json")) is ObjectNotFoundError


def test_a_cut_short_get_into_resumes_with_progress_that_never_goes_back(
    store: S3Store, proxy: FaultProxy
) -> None:
    proxy.add(Fault(kind="truncate", upstream_status=200, method="GET", times=2))
    seen: list[int] = []
    out = bytearray(len(DATA))
    assert store.get_into("seg.log", out, progress=seen.append, verify_checksum=False) == len(DATA)
    assert out == DATA
    assert seen == sorted(set(seen))
    assert seen[-1] == len(DATA)
    assert len([r for r in proxy.requests if r[0] == "GET"]) == 3


def test_the_error_names_the_object_and_the_number_of_attempts(store: S3Store, proxy: FaultProxy) -> None:
    proxy.add(Fault(kind="truncate", upstream_status=404, times=ALWAYS))
    with pytest.raises(TransientStoreError) as caught:
        store.get("missing.log")
    assert caught.value.location.endswith("/missing.log")
    assert f"({s3_errors.READ_ATTEMPTS} attempts)" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_read_timeout_is_retriable(proxy: FaultProxy) -> None:
    def client() -> Any:
        import boto3

        config = Config(read_timeout=0.3, retries={"mode": "standard", "max_attempts": 1})
        return boto3.client(
            "s3",
            endpoint_url=proxy.endpoint_url,
            region_name=DEFAULT_REGION,
            config=config,
            **EMBEDDED_CREDENTIALS,
        )

    store = S3Store(BUCKET, new_s3_prefix(), client_factory=client)
    store.put("k", b"v")
    proxy.add(Fault(kind="delay", delay_s=1.0, method="GET", times=ALWAYS))
    try:
        with pytest.raises(TransientStoreError, match="ReadTimeoutError"):
            store.get("k")
    finally:
        proxy.clear()
