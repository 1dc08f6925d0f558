"""``S3Store.get_into`` against bodies moto never sends: cut short, too long, with a wrong checksum; and which
GETs ask S3 for the object's checksum (``x-amz-checksum-mode: ENABLED``, botocore's response validation).

A stub client (``client_factory``) returns botocore's own ``StreamingBody`` / ``StreamingChecksumBody`` over
an in-memory stream, so the length and checksum checks are botocore's, driven by ``get_into``'s reads.
"""

from __future__ import annotations

import base64
import io
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from botocore.httpchecksum import Crc32Checksum, StreamingChecksumBody
from botocore.response import StreamingBody
from kafka_segments.demo import EmbeddedS3
from kafka_segments.errors import ObjectStoreError, TransientStoreError
from kafka_segments.storage import BufferTooSmallError, S3Store, s3_reads
from s3_fixtures import new_s3_store

pytestmark = pytest.mark.contract

DATA = bytes(range(256)) * 40 + b"end"


def crc32_header(data: bytes) -> str:
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


class StubClient:
    """Answers every ``get_object`` with ``body()`` and ``ContentLength`` ``length``."""

    def __init__(self, body: Any, length: int) -> None:
        self.body = body
        self.length = length
        self.calls: list[dict[str, Any]] = []

    def get_object(self, **params: Any) -> dict[str, Any]:
        self.calls.append(params)
        return {"Body": self.body, "ContentLength": self.length}


def stub_store(body: Any, length: int) -> tuple[S3Store, StubClient]:
    client = StubClient(body, length)
    return S3Store("bucket", "lake", client_factory=lambda: client, read_attempts=1), client


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(s3_reads, "READ_CHUNK_BYTES", 1000)  # several readinto calls per body


def test_a_whole_body_is_read_and_checked() -> None:
    store, client = stub_store(StreamingBody(io.BytesIO(DATA), len(DATA)), len(DATA))
    out = bytearray(len(DATA) + 5)
    assert store.get_into("seg.log", out) == len(DATA)
    assert out[: len(DATA)] == DATA
    assert client.calls == [{"Bucket": "bucket", "Key": "lake/seg.log"}]


def test_a_body_cut_short_is_a_transient_error_not_a_short_read() -> None:
    store, _ = stub_store(StreamingBody(io.BytesIO(DATA[:-10]), len(DATA)), len(DATA))
    with pytest.raises(TransientStoreError, match=r"s3://bucket/lake/seg\.log: response body cut short"):
        store.get_into("seg.log", bytearray(len(DATA)))


def test_a_body_longer_than_its_content_length_is_refused() -> None:
    store, _ = stub_store(StreamingBody(io.BytesIO(DATA + b"more"), len(DATA)), len(DATA))
    with pytest.raises(ObjectStoreError, match=r"seg\.log: response body longer than its Content-Length"):
        store.get_into("seg.log", bytearray(len(DATA) + 10))


def test_the_content_length_is_checked_before_reading() -> None:
    body = StreamingBody(io.BytesIO(DATA), len(DATA))
    store, _ = stub_store(body, len(DATA))
    out = bytearray(len(DATA) - 1)
    with pytest.raises(BufferTooSmallError, match=rf"lake/seg\.log: object of {len(DATA)} bytes"):
        store.get_into("seg.log", out)
    assert out == bytes(len(DATA) - 1)
    assert body._raw_stream.closed  # the unread body was dropped, not left on a pooled connection


def checksum_body(data: bytes, expected: str) -> StreamingChecksumBody:
    return StreamingChecksumBody(io.BytesIO(data), len(data), Crc32Checksum(), expected)


def test_the_stored_checksum_is_verified_after_the_last_byte() -> None:
    store, _ = stub_store(checksum_body(DATA, crc32_header(DATA)), len(DATA))
    assert store.get_into("seg.log", bytearray(len(DATA))) == len(DATA)
    corrupt = DATA[:100] + b"X" + DATA[101:]
    store, _ = stub_store(checksum_body(corrupt, crc32_header(DATA)), len(DATA))
    with pytest.raises(ObjectStoreError, match=r"lake/seg\.log: response checksum mismatch"):
        store.get_into("seg.log", bytearray(len(DATA)))


# --- which reads ask for the object's checksum (moto over HTTP) ------------------------------------------


@pytest.fixture
def store(s3_server: EmbeddedS3) -> S3Store:
    return new_s3_store(s3_server)


@contextmanager
def checksum_modes(client: Any) -> Iterator[list[str | None]]:
    """The ``x-amz-checksum-mode`` header of every GetObject ``client`` sends inside the block."""
    seen: list[str | None] = []

    def record(request: Any, **_: Any) -> None:
        mode = request.headers.get("x-amz-checksum-mode")
        seen.append(mode.decode() if isinstance(mode, bytes) else mode)

    client.meta.events.register("before-send.s3.GetObject", record)
    try:
        yield seen
    finally:
        client.meta.events.unregister("before-send.s3.GetObject", record)


def test_only_unverified_segment_reads_skip_the_response_checksum(store: S3Store) -> None:
    store.put("seg.log", DATA)
    out = bytearray(len(DATA))
    with (
        checksum_modes(store.client()) as main,
        checksum_modes(store._client_without_response_checksums()) as unverified,
    ):
        assert store.get("seg.log") == DATA
        assert store.get_range("seg.log", start=1, end=5) == DATA[1:5]
        assert store.get_into("seg.log", out) == len(DATA)
        assert main == ["ENABLED", "ENABLED", "ENABLED"]  # botocore's default: verify the stored checksum
        assert unverified == []
        out[:] = bytes(len(DATA))
        assert store.get_into("seg.log", out, verify_checksum=False) == len(DATA)
        assert out == DATA
        assert unverified == [None]
        assert len(main) == 3


def test_a_store_built_with_a_client_factory_uses_its_client_for_every_read(s3_server: EmbeddedS3) -> None:
    store = s3_server.store("lake-tests", "factory")
    assert store._client_without_response_checksums() is store.client()
