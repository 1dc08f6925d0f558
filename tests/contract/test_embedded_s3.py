"""The embedded S3 server (``kafka_segments.demo.embedded_s3``): moto's S3 over HTTP on a free loopback
port, whose dispatcher answers an S3 request's service at once (moto's own looks it up by listing its
package folders) and leaves every other request to moto; stopped, its port is free again."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest
from kafka_segments.demo.embedded_s3 import _s3_dispatcher, embedded_s3_server

pytestmark = pytest.mark.contract


def test_s3_requests_go_to_s3_at_once_and_anything_else_to_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto import backends

    dispatcher = _s3_dispatcher()
    with monkeypatch.context() as patch:

        def listing() -> None:
            raise AssertionError("moto's package folders were listed for an S3 request")

        patch.setattr(backends, "list_of_moto_modules", listing)
        assert dispatcher.get_backend_for_host("s3.us-east-1.amazonaws.com") == "s3"
    assert dispatcher.get_backend_for_host("s3.us-east-1.amazonaws.com") == "s3"
    assert dispatcher.get_backend_for_host("s3.eu-west-2.amazonaws.com") == "s3"
    assert dispatcher.get_backend_for_host("moto_api") == "moto_api"
    assert dispatcher.get_backend_for_host("sqs.us-east-1.amazonaws.com") == "sqs"
    assert dispatcher.get_backend_for_host(None) is None


def test_the_server_speaks_s3_and_frees_its_port_when_stopped() -> None:
    with embedded_s3_server() as s3:
        client = s3.client()
        client.create_bucket(Bucket="embedded-bucket")
        client.put_object(Bucket="embedded-bucket", Key="a/b.log", Body=b"segment")
        assert client.get_object(Bucket="embedded-bucket", Key="a/b.log")["Body"].read() == b"segment"
        listed = client.list_objects_v2(Bucket="embedded-bucket", Prefix="a/")
        assert [item["Key"] for item in listed["Contents"]] == ["a/b.log"]
        address = urlsplit(s3.endpoint_url)
    assert address.hostname == "127.0.0.1"
    with socket.socket() as probe:
        # A connection the server closed may leave the port in TIME_WAIT, which only a bind without
        # SO_REUSEADDR refuses; with it, Linux still refuses the bind while anything listens there.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", address.port or 0))  # nothing listens there any more
