"""``S3Store`` clients come from sessions that share botocore's data loader, and only it."""

from __future__ import annotations

import pytest
from kafka_segments.storage import S3Store
from kafka_segments.storage.s3_session import new_session

pytestmark = pytest.mark.unit


def test_sessions_are_new_but_share_one_loader_whose_search_paths_stay_put() -> None:
    first, second = new_session(), new_session()
    loader = first._session.get_component("data_loader")
    paths = list(loader.search_paths)
    third = new_session()
    assert first is not second
    assert first._session is not second._session
    assert second._session.get_component("data_loader") is loader
    assert third._session.get_component("data_loader") is loader
    assert loader.search_paths == paths
    assert len(set(paths)) == len(paths)


def test_two_stores_build_their_own_clients_on_the_shared_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "a")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "b")
    east = S3Store("b", region="us-east-1", endpoint_url="http://127.0.0.1:9").client()
    west = S3Store("b", region="eu-west-1", endpoint_url="http://127.0.0.1:9").client()
    assert east is not west
    assert (east.meta.region_name, west.meta.region_name) == ("us-east-1", "eu-west-1")
    assert east._loader is west._loader is new_session()._session.get_component("data_loader")
