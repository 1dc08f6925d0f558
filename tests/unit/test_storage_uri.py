"""Lake URIs open the right object store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kafka_segments.errors import InvalidLakeUriError
from kafka_segments.storage import LocalStore, S3Store, open_store

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("uri", "bucket", "prefix"),
    [
        ("s3://bucket/prefix/", "bucket", "prefix/"),
        ("s3://bucket/prefix", "bucket", "prefix/"),
        ("s3://my.bucket-1/a/b/c", "my.bucket-1", "a/b/c/"),
        ("s3://bucket", "bucket", ""),
        ("s3://bucket/", "bucket", ""),
    ],
)
def test_s3_uris(uri: str, bucket: str, prefix: str) -> None:
    store = open_store(uri)
    assert isinstance(store, S3Store)
    assert (store.bucket, store.prefix) == (bucket, prefix)
    assert store.describe() == f"s3://{bucket}/{prefix}"


@pytest.mark.parametrize(
    ("uri", "root"),
    [
        ("/tmp/x", "/tmp/x"),
        ("file:///tmp/x", "/tmp/x"),
        ("file://localhost/tmp/x", "/tmp/x"),
        ("file:///tmp/with%20space", "/tmp/with space"),
        (Path("/tmp/y"), "/tmp/y"),
    ],
)
def test_local_uris(uri: str, root: str) -> None:
    store = open_store(uri)
    assert isinstance(store, LocalStore)
    assert store.root == Path(root)


def test_relative_paths_become_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = open_store("lake")
    assert isinstance(store, LocalStore)
    assert store.root == tmp_path / "lake"


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("s3://", "bucket"),
        ("s3:///prefix", "bucket"),
        ("s3://Bad_Bucket/x", "bucket"),
        ("s3://bucket/a/../b", "prefix"),
        ("s3://bucket/x?versionId=1", "query"),
        ("gs://x", "unsupported scheme 'gs'"),
        ("http://host/x", "unsupported scheme"),
        ("file://otherhost/x", "local path"),
        ("", "empty"),
    ],
)
def test_bad_uris(uri: str, message: str) -> None:
    with pytest.raises(InvalidLakeUriError, match=message) as raised:
        open_store(uri)
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize(
    ("uri", "segment"),
    [
        ("s3://b/../x", "a '..'"),  # the bucket is bad too, but the '..' is the mistake to name
        ("s3://bucket/../x", "a '..'"),
        ("s3://bucket/a/./b", "a '.'"),
        ("s3://bucket/a//b", "an empty ('//')"),
    ],
)
def test_a_bad_prefix_segment_is_named(uri: str, segment: str) -> None:
    with pytest.raises(InvalidLakeUriError, match=f"has {re.escape(segment)} segment"):
        open_store(uri)


@pytest.mark.parametrize(
    "uri", ["s3://KEY:SECRET@bucket/x", "s3://SECRET@bucket/x", "file://u:SECRET@localhost/tmp/x"]
)
def test_credentials_are_refused_and_never_echoed(uri: str) -> None:
    with pytest.raises(InvalidLakeUriError, match="credentials in the URI are not allowed") as raised:
        open_store(uri)
    assert "SECRET" not in str(raised.value)
