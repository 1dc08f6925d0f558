"""The embedded S3 server of the default stack: moto's S3 server on a free loopback port.

It speaks real S3 over HTTP, so boto3 code runs unchanged against it, MinIO or AWS. moto is imported only
when a server is started."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafka_segments.storage.s3 import S3Store

LOOPBACK = "127.0.0.1"
DEFAULT_REGION = "us-east-1"
# moto accepts any credentials; these only keep boto3 from looking for real ones. Not the product's name:
# Airflow masks a connection's password wherever it appears in a log, and the DAGs, tags and paths say
# "kafka-segments" everywhere.
EMBEDDED_CREDENTIALS = {"aws_access_key_id": "embedded-s3-key", "aws_secret_access_key": "embedded-s3-secret"}


@dataclass(frozen=True, slots=True)
class EmbeddedS3:
    """A running embedded server."""

    endpoint_url: str

    def client(self) -> Any:
        """A boto3 S3 client for this server (path-style addressing, as for MinIO)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=DEFAULT_REGION,
            config=Config(s3={"addressing_style": "path"}, retries={"mode": "standard"}),
            **EMBEDDED_CREDENTIALS,
        )

    def store(self, bucket: str, prefix: str = "") -> S3Store:
        """A store on ``bucket``/``prefix`` of this server (the bucket must exist)."""
        from kafka_segments.storage.s3 import S3Store

        return S3Store(
            bucket, prefix, endpoint_url=self.endpoint_url, region=DEFAULT_REGION, client_factory=self.client
        )


@contextmanager
def embedded_s3_server(*, host: str = LOOPBACK) -> Iterator[EmbeddedS3]:
    """Start moto's S3 server on ``host`` and a free port; stop it on exit."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address=host, port=0, verbose=False)
    server.start()
    try:
        bound_host, port = server.get_host_and_port()
        yield EmbeddedS3(endpoint_url=f"http://{bound_host}:{port}")
    finally:
        server.stop()
