"""Open the object store a lake URI names.

* ``s3://bucket[/prefix]`` -> ``S3Store(bucket, "prefix/")`` (endpoint, region and credentials from the
  standard AWS settings);
* ``file:///abs/path`` (host empty or ``localhost``) or a plain local path -> ``LocalStore(path)``.

Anything else (another scheme, a missing bucket, a query or fragment) is ``InvalidLakeUriError``.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit

from kafka_segments.errors import InvalidLakeUriError, InvalidObjectKeyError
from kafka_segments.storage.base import ObjectStore
from kafka_segments.storage.local import LocalStore
from kafka_segments.storage.s3 import S3Store

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def open_store(uri: str | os.PathLike[str]) -> ObjectStore:
    """The store for ``uri``. Raises ``InvalidLakeUriError``."""
    text = os.fspath(uri)
    if not text:
        raise InvalidLakeUriError("empty lake URI")
    match = _SCHEME.match(text)
    if match is None:
        return LocalStore(text)
    scheme = match.group(1).lower()
    parts = urlsplit(text)
    if parts.query or parts.fragment:
        raise InvalidLakeUriError(f"lake URI {text!r}: query strings and fragments are not allowed")
    if scheme == "s3":
        return _s3_store(text, parts.netloc, parts.path)
    if scheme == "file":
        if parts.netloc not in {"", "localhost"}:
            raise InvalidLakeUriError(f"lake URI {text!r}: file URIs must name a local path (file:///path)")
        path = unquote(parts.path)
        if not path.startswith("/"):
            raise InvalidLakeUriError(f"lake URI {text!r}: file URIs need an absolute path")
        return LocalStore(path)
    raise InvalidLakeUriError(
        f"lake URI {text!r}: unsupported scheme {scheme!r} (use s3://bucket/prefix or a local path)"
    )


def _s3_store(text: str, bucket: str, path: str) -> S3Store:
    if not _BUCKET.match(bucket):
        raise InvalidLakeUriError(f"lake URI {text!r}: missing or invalid S3 bucket name {bucket!r}")
    try:
        return S3Store(bucket, path.lstrip("/"))
    except InvalidObjectKeyError as exc:
        raise InvalidLakeUriError(f"lake URI {text!r}: invalid prefix: {exc.reason}") from exc
