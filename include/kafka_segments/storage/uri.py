"""Open the object store a lake URI names: ``s3://bucket[/prefix]`` or ``file:///path`` / a local path.
Anything else is ``InvalidLakeUriError`` naming the offending part, never the password
(``redaction.redact_uri``)."""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit

from kafka_segments.errors import InvalidLakeUriError, InvalidObjectKeyError
from kafka_segments.redaction import redact_uri
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
    shown = f"lake URI {redact_uri(text)!r}"
    if parts.query or parts.fragment:
        raise InvalidLakeUriError(f"{shown}: query strings and fragments are not allowed")
    if "@" in parts.netloc:
        raise InvalidLakeUriError(
            f"{shown}: credentials in the URI are not allowed (use the standard AWS settings: environment, "
            "profile or instance role)"
        )
    if scheme == "s3":
        return _s3_store(shown, parts.netloc, parts.path)
    if scheme == "file":
        if parts.netloc not in {"", "localhost"}:
            raise InvalidLakeUriError(f"{shown}: file URIs must name a local path (file:///path)")
        path = unquote(parts.path)
        if not path.startswith("/"):
            raise InvalidLakeUriError(f"{shown}: file URIs need an absolute path")
        return LocalStore(path)
    raise InvalidLakeUriError(
        f"{shown}: unsupported scheme {scheme!r} (use s3://bucket/prefix or a local path)"
    )


def _s3_store(shown: str, bucket: str, path: str) -> S3Store:
    prefix = path.lstrip("/")
    bad = _bad_segment(prefix)
    if bad is not None:  # checked first: a '..' in the prefix is the mistake, whatever the bucket
        raise InvalidLakeUriError(
            f"{shown}: the prefix {prefix!r} has {bad} segment (a lake prefix cannot leave or alias its "
            "place in the bucket)"
        )
    if not _BUCKET.match(bucket):
        raise InvalidLakeUriError(f"{shown}: missing or invalid S3 bucket name {bucket!r}")
    try:
        return S3Store(bucket, prefix)
    except InvalidObjectKeyError as exc:
        raise InvalidLakeUriError(f"{shown}: invalid prefix: {exc.reason}") from exc


def _bad_segment(prefix: str) -> str | None:
    """A prefix's first ``..``, ``.`` or empty segment as a message names it (``"a '..'"``), or ``None``."""
    segments = prefix[:-1].split("/") if prefix.endswith("/") else prefix.split("/")
    for segment in segments if prefix else ():
        if segment in {"..", "."}:
            return f"a {segment!r}"
        if not segment:
            return "an empty ('//')"
    return None
