"""``S3Store(receive_buffer_bytes=...)`` / ``KAFKA_SEGMENTS_S3_RECEIVE_BUFFER_BYTES``: ``SO_RCVBUF`` on the
connections the store's client opens to moto's server, read back from each socket as it is connected (Linux
reports twice the size asked for, the kernel's bookkeeping included)."""

from __future__ import annotations

import pickle
import socket
from typing import Any

import numpy as np
import pytest
from kafka_segments.embedded_s3 import EmbeddedS3
from kafka_segments.storage import S3Store
from kafka_segments.storage.s3_client import RECEIVE_BUFFER_ENV, receive_buffer_from_env
from s3_fixtures import new_s3_store
from urllib3.util import connection as urllib3_connection

pytestmark = pytest.mark.contract

ASKED = 100_000
"""Neither the kernel's default (``tcp_rmem``'s 131072 here) nor half of it: the option is visible."""


def store_with(server: EmbeddedS3, receive_buffer_bytes: int | None) -> S3Store:
    plain = new_s3_store(server)
    return S3Store(
        plain.bucket,
        plain.prefix,
        endpoint_url=plain.endpoint_url,
        region=plain.region,
        receive_buffer_bytes=receive_buffer_bytes,
    )


def receive_buffers_after_a_get(store: S3Store, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``SO_RCVBUF`` of every socket the store's client connects for a PUT and a GET, read back from the
    socket as urllib3 hands it over (moto's server may close a connection after a response)."""
    seen: list[int] = []
    connect = urllib3_connection.create_connection

    def spy(*args: Any, **kwargs: Any) -> socket.socket:
        sock = connect(*args, **kwargs)
        seen.append(sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
        return sock

    monkeypatch.setattr(urllib3_connection, "create_connection", spy)
    store.put("object", b"x" * 200_000)
    out = np.empty(200_000, dtype=np.uint8)
    assert store.get_into("object", out) == 200_000
    assert seen, "the client opened no connection"
    return sorted(set(seen))


def test_a_store_asked_for_a_receive_buffer_sets_it_on_its_connections(
    s3_server: EmbeddedS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert receive_buffers_after_a_get(store_with(s3_server, ASKED), monkeypatch) == [2 * ASKED]


def test_without_one_the_kernel_sizes_the_buffer(
    s3_server: EmbeddedS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(RECEIVE_BUFFER_ENV, raising=False)
    assert 2 * ASKED not in receive_buffers_after_a_get(store_with(s3_server, None), monkeypatch)


def test_the_environment_variable_sets_it_when_the_store_does_not(
    s3_server: EmbeddedS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RECEIVE_BUFFER_ENV, str(ASKED))
    assert receive_buffers_after_a_get(store_with(s3_server, None), monkeypatch) == [2 * ASKED]


def test_the_store_setting_wins_over_the_environment(
    s3_server: EmbeddedS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RECEIVE_BUFFER_ENV, "50000")
    assert receive_buffers_after_a_get(store_with(s3_server, ASKED), monkeypatch) == [2 * ASKED]


def test_a_pickled_store_keeps_its_receive_buffer(
    s3_server: EmbeddedS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy: S3Store = pickle.loads(pickle.dumps(store_with(s3_server, ASKED)))
    assert copy.receive_buffer_bytes == ASKED
    assert receive_buffers_after_a_get(copy, monkeypatch) == [2 * ASKED]


@pytest.mark.parametrize("raw", ["0", "-5", "4MiB", "1.5"])
def test_a_malformed_environment_value_is_named(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(RECEIVE_BUFFER_ENV, raw)
    with pytest.raises(ValueError, match=rf"{RECEIVE_BUFFER_ENV}='{raw}' is not a positive number of bytes"):
        receive_buffer_from_env()


def test_an_empty_environment_value_means_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RECEIVE_BUFFER_ENV, " ")
    assert receive_buffer_from_env() is None


def test_a_store_refuses_a_receive_buffer_that_is_not_positive() -> None:
    with pytest.raises(ValueError, match="receive_buffer_bytes must be positive, not 0"):
        S3Store("bucket", receive_buffer_bytes=0)
