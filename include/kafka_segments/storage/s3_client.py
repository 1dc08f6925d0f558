"""The boto3 S3 client an ``S3Store`` builds: standard AWS settings, and an optional socket receive buffer.

**Receive buffer.** A reader that works between the chunks of a GET (a compaction round decoding a segment
while it arrives, ``get_into(progress=...)``) reads the socket in bursts. Linux sizes a TCP receive window
from how fast the application drains it, so a bursty reader keeps the window small (128 KiB to start here)
and the server stops sending while the reader decodes: the transfer and the decoding take turns instead of
overlapping. ``receive_buffer_bytes`` sets ``SO_RCVBUF`` on every connection of the client (Linux doubles it
and caps it at ``net.core.rmem_max``), so the server keeps sending for a few milliseconds of decoding. It
also turns the kernel's window auto-tuning off for those connections, which caps one connection at
``window / round-trip time``: right for a worker next to its S3 endpoint (4 MiB at a 1 ms round trip allows
~4 GB/s), wrong across regions. Off unless asked for: ``S3Store(receive_buffer_bytes=...)`` or the
environment variable ``KAFKA_SEGMENTS_S3_RECEIVE_BUFFER_BYTES`` (read when the client is built, so Spark
executors take it from their environment). Measured in ``bench/RESULTS.md``.

botocore has no public setting for socket options (``Config`` has ``tcp_keepalive`` only); the client's HTTP
session is given the option the way botocore gives its own (``TCP_NODELAY``, ``SO_KEEPALIVE``): in the
session's socket options, before its first connection.
"""

from __future__ import annotations

import os
import socket
from typing import Any

RECEIVE_BUFFER_ENV = "KAFKA_SEGMENTS_S3_RECEIVE_BUFFER_BYTES"


def receive_buffer_from_env() -> int | None:
    """``KAFKA_SEGMENTS_S3_RECEIVE_BUFFER_BYTES`` as a positive int, or ``None`` when unset or empty.

    Raises:
        ValueError: the variable is set to something else than a positive integer.
    """
    raw = os.environ.get(RECEIVE_BUFFER_ENV, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{RECEIVE_BUFFER_ENV}={raw!r} is not a positive number of bytes")
    return value


def build_s3_client(
    *,
    endpoint_url: str | None,
    region: str | None,
    receive_buffer_bytes: int | None = None,
    **options: str,
) -> Any:
    """A boto3 S3 client with botocore's ``standard`` retries, path-style addressing for a custom endpoint
    and ``options`` for ``botocore.config.Config``; ``SO_RCVBUF`` set to ``receive_buffer_bytes`` (or the
    environment's, module docstring) on each of its connections."""
    import boto3
    from botocore.config import Config

    environment = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    custom_endpoint = endpoint_url or environment
    config = Config(
        retries={"mode": "standard"},
        s3={"addressing_style": "path"} if custom_endpoint else None,
        **options,
    )
    session = boto3.session.Session()
    client = session.client("s3", endpoint_url=endpoint_url, region_name=region, config=config)
    size = receive_buffer_bytes if receive_buffer_bytes is not None else receive_buffer_from_env()
    if size is not None:
        _set_receive_buffer(client, size)
    return client


def _set_receive_buffer(client: Any, size: int) -> None:
    """``SO_RCVBUF = size`` on every connection the client opens from now on (it has opened none yet)."""
    from urllib3 import PoolManager

    if size <= 0:
        raise ValueError(f"receive buffer must be a positive number of bytes, not {size}")
    session = client._endpoint.http_session
    session._socket_options = [*session._socket_options, (socket.SOL_SOCKET, socket.SO_RCVBUF, size)]
    pools_by_scheme = session._manager.pool_classes_by_scheme
    session._manager = PoolManager(**session._get_pool_manager_kwargs())
    session._manager.pool_classes_by_scheme = pools_by_scheme
