"""The embedded S3 server as the command line sees it: an environment pointing boto3 at it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS, embedded_s3_server
from kafka_segments.storage import S3Store


@contextmanager
def s3_lake_env(bucket: str, prefix: str, fill: Callable[[S3Store], object]) -> Iterator[dict[str, str]]:
    """Start the server, create ``bucket``, let ``fill`` write the lake at ``prefix``, and yield the
    environment (``AWS_ENDPOINT_URL`` and credentials) a ``kafka-segments`` process needs to reach it."""
    env = {k: v for k, v in os.environ.items() if k not in {"AWS_PROFILE", "AWS_SESSION_TOKEN"}}
    env.update(
        AWS_ACCESS_KEY_ID=EMBEDDED_CREDENTIALS["aws_access_key_id"],
        AWS_SECRET_ACCESS_KEY=EMBEDDED_CREDENTIALS["aws_secret_access_key"],
        AWS_DEFAULT_REGION=DEFAULT_REGION,
    )
    with embedded_s3_server() as server:
        server.client().create_bucket(Bucket=bucket)
        env["AWS_ENDPOINT_URL"] = server.endpoint_url
        fill(server.store(bucket, prefix))
        yield env
