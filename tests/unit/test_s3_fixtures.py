"""The tests' S3 bucket is emptied of a test file's objects once the file has ended (``s3_fixtures``), but
not of those a session-scoped fixture made."""

from __future__ import annotations

from kafka_segments.demo import DEFAULT_REGION, EmbeddedS3
from kafka_segments.storage import S3Store
from s3_fixtures import BUCKET, Prefixes, delete_objects_under


def test_a_files_prefixes_are_handed_over_once_and_a_session_fixtures_never() -> None:
    prefixes = Prefixes()
    with prefixes.for_the_session():
        prefixes.new()
    of_the_file = {prefixes.new(), prefixes.new()}
    assert prefixes.of_ended_file() == of_the_file
    assert prefixes.of_ended_file() == frozenset()


def test_the_objects_under_ended_prefixes_are_deleted_and_no_others(s3_server: EmbeddedS3) -> None:
    prefixes = Prefixes()
    stores = {
        name: S3Store(BUCKET, prefixes.new(), endpoint_url=s3_server.endpoint_url, region=DEFAULT_REGION)
        for name in ("ended", "other")
    }
    for store in stores.values():
        store.put("a/1.log", b"1")
        store.put("b", b"2")
    ended = stores["ended"].prefix.rstrip("/")

    assert delete_objects_under({ended}) == 2

    assert list(stores["ended"].list()) == []
    assert [meta.key for meta in stores["other"].list()] == ["a/1.log", "b"]
