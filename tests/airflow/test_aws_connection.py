"""The ``aws_default`` connection through the Amazon provider: a connection naming a role (the UI's AWS form:
``role_arn``, ``assume_role_method``) becomes the temporary credentials STS hands out, which the library and
Spark then use; without the provider such a connection fails with a message that names it."""

from __future__ import annotations

import json
import sys

import pytest
from kafka_segments.storage.s3 import S3Store
from s3_fixtures import BUCKET, new_s3_prefix

pytestmark = pytest.mark.airflow

ROLE = "arn:aws:iam::123456789012:role/kafka-segments-lake"


def role_connection(endpoint_url: str) -> str:
    return json.dumps(
        {
            "conn_type": "aws",
            "login": "embedded-s3-key",
            "password": "embedded-s3-secret",
            "extra": {
                "endpoint_url": endpoint_url,
                "region_name": "us-east-1",
                "role_arn": ROLE,
                "assume_role_method": "assume_role",
                "service_config": {"sts": {"endpoint_url": endpoint_url}},
            },
        }
    )


def test_a_role_in_the_connection_becomes_temporary_credentials(
    s3_server: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("airflow.providers.amazon.aws.hooks.base_aws", reason="requirements.lock installs it")
    from orchestration.settings import lake_store, read_aws_settings

    endpoint = s3_server.endpoint_url  # type: ignore[attr-defined]
    monkeypatch.setenv("AIRFLOW_CONN_AWS_DEFAULT", role_connection(endpoint))
    aws = read_aws_settings()
    assert aws is not None
    assert aws.access_key_id is not None
    assert aws.access_key_id.startswith("ASIA")  # STS's temporary keys, not the connection's login
    assert aws.session_token
    assert (aws.endpoint_url, aws.region_name) == (endpoint, "us-east-1")
    assert aws.environ()["AWS_SESSION_TOKEN"] == aws.session_token
    prefix = new_s3_prefix()
    with lake_store(f"s3://{BUCKET}/{prefix}") as store:  # the library works with them
        assert isinstance(store, S3Store)
        store.put("probe", b"assumed")
        assert store.get("probe") == b"assumed"


def test_without_the_provider_a_role_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestration.settings import SettingsError, read_aws_settings

    monkeypatch.setitem(sys.modules, "airflow.providers.amazon.aws.hooks.base_aws", None)  # not importable
    monkeypatch.setenv("AIRFLOW_CONN_AWS_DEFAULT", role_connection("http://127.0.0.1:1"))
    with pytest.raises(SettingsError, match="apache-airflow-providers-amazon") as raised:
        read_aws_settings()
    assert "Airflow Connection aws_default" in str(raised.value)
