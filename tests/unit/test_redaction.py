"""``redact_uri``: a URI's password (or token) never shows in a message; everything else is kept."""

from __future__ import annotations

import pytest
from kafka_segments.errors import LakeError, ObjectStoreError
from kafka_segments.offsets.kafka_source import InvalidKafkaSourceError, parse_kafka_uri
from kafka_segments.redaction import redact_uri

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("s3://KEY:SECRET@bucket/x", "s3://KEY:***@bucket/x"),
        ("kafka://user:SECRET@host:9092", "kafka://user:***@host:9092"),
        ("kafka://SECRET@host:9092", "kafka://***@host:9092"),
        ("lake URI 's3://K:SE/CR@ET@b/x': bad", "lake URI 's3://K:***@b/x': bad"),
        ("s3://bucket/path@x", "s3://bucket/path@x"),
        ("kafka://h1:9092,h2:9093", "kafka://h1:9092,h2:9093"),
        ("/tmp/a@b and no URI", "/tmp/a@b and no URI"),
    ],
)
def test_redact_uri(text: str, shown: str) -> None:
    assert redact_uri(text) == shown


def test_errors_never_show_the_secret() -> None:
    error = ObjectStoreError("cannot read s3://K:SECRET@b/x", location="s3://K:SECRET@b/x")
    assert "SECRET" not in str(error)
    assert "SECRET" not in error.location
    assert "SECRET" not in error.reason
    assert "SECRET" not in str(LakeError("r", location="kafka://u:SECRET@h:1"))


def test_a_kafka_uri_with_credentials_is_refused_without_the_secret() -> None:
    with pytest.raises(InvalidKafkaSourceError, match="credentials in the URI are not allowed") as raised:
        parse_kafka_uri("kafka://user:SECRET@host:9092")
    assert "SECRET" not in str(raised.value)
    assert "kafka://user:***@host:9092" in str(raised.value)
