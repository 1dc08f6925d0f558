"""The check at the door of an S3 lake: does the endpoint honour conditional writes?

Every commit rests on ``If-None-Match: *`` (a manifest version is created once) and ``If-Match`` (a run
record changes only from the state it was read in). A server that ignores those headers lets two writers
both "win" the same version: a commit silently lost. So before an ``S3Store``'s first write in a process,
``ensure_conditional_writes`` writes a probe object of its own and proves both guarantees:

1. a create-only PUT (``If-None-Match: *``) of a fresh key succeeds;
2. a second create-only PUT of that key is refused (412, or 409 ``ConditionalRequestConflict``);
3. a PUT with ``If-Match`` and a wrong etag is refused;
4. a PUT with ``If-Match`` and the object's etag succeeds;

then deletes the probe. A store that fails 2 or 3 (or rejects the headers as not implemented, or refuses 4)
is refused with ``ConditionalWritesUnsupportedError``: one line naming the lake, the endpoint and the missing
guarantee, before anything of the lake is written.

Probe keys are ``_kafka_segments/probes/<random>`` under the lake's prefix (the lake's bookkeeping folder:
adoption and views ignore it), unique per probe, so concurrent processes never meet on one. The verdict is
kept for the process, per endpoint, bucket and prefix: one probe per lake per process, never one per write,
and reads never probe (docs/lake.md, "Conditional writes")."""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from kafka_segments.errors import (
    ConditionalWritesUnsupportedError,
    ObjectAlreadyExistsError,
    PreconditionFailedError,
)
from kafka_segments.redaction import redact_uri
from kafka_segments.storage.base import Create, UpdateIfMatch
from kafka_segments.storage.s3_errors import translate_s3_error, transport_errors

__all__ = ["IF_MATCH", "IF_NONE_MATCH", "PROBE_PREFIX", "ProbeTarget", "ensure_conditional_writes"]

PROBE_PREFIX = "_kafka_segments/probes/"
"""Where probe objects live, relative to the lake's root (under ``lake.layout.META_PREFIX``)."""
IF_NONE_MATCH = "If-None-Match"
IF_MATCH = "If-Match"

_log = logging.getLogger(__name__)
_verified: set[tuple[str, str, str]] = set()
_locks: dict[tuple[str, str, str], threading.Lock] = {}
_locks_guard = threading.Lock()


@dataclass(frozen=True, slots=True)
class ProbeTarget:
    """What one probe talks to: a store's boto3 client, bucket and prefix (the lake's root)."""

    client: Any
    bucket: str
    prefix: str

    @property
    def endpoint(self) -> str:
        """The URL the client sends requests to (the configured endpoint, or AWS's for the region)."""
        return str(getattr(getattr(self.client, "meta", None), "endpoint_url", None) or "default endpoint")


def shown_endpoint(endpoint: str) -> str:
    """The endpoint as an error names it: scheme, host, port and path; never user info or a query."""
    parts = urlsplit(endpoint)
    if not parts.scheme or not parts.hostname:
        return redact_uri(endpoint)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}{parts.path.rstrip('/')}"


def ensure_conditional_writes(target: ProbeTarget, *, checked_at: str | None = None) -> str:
    """Return the endpoint once it is known to honour conditional writes for ``target``'s lake (probing it at
    most once per process per endpoint, bucket and prefix); else raise ``ConditionalWritesUnsupportedError``.
    ``checked_at``: the endpoint a store was verified against in the process that pickled it (a Spark
    driver), trusted when the client still talks to it. Other store errors of the probe (access denied,
    unreachable) propagate as they are, and nothing is recorded."""
    endpoint = target.endpoint
    identity = (endpoint, target.bucket, target.prefix)
    if checked_at == endpoint:
        _verified.add(identity)
    if identity in _verified:
        return endpoint
    with _locks_guard:
        lock = _locks.setdefault(identity, threading.Lock())
    with lock:
        if identity not in _verified:
            missing = _probe(target)
            if missing:
                raise _refusal(target, missing)
            _verified.add(identity)
    return endpoint


def _probe(target: ProbeTarget) -> tuple[str, ...]:
    """The guarantees the endpoint is missing (empty: both hold). The probe object is deleted whatever
    happened."""
    key = f"{target.prefix}{PROBE_PREFIX}{uuid.uuid4().hex}"
    etag = _put(target, key, b"kafka-segments conditional-write probe 1\n", Create())
    if etag is None:
        return (IF_NONE_MATCH,)  # a create-only PUT of a fresh key refused: the header is not understood
    try:
        missing: list[str] = []
        second = _put(target, key, b"kafka-segments conditional-write probe 2\n", Create())
        if second is not None:
            missing.append(IF_NONE_MATCH)
            etag = second
        wrong = '"00000000000000000000000000000000"'
        if wrong == etag:
            wrong = '"11111111111111111111111111111111"'
        updated = _put(target, key, b"kafka-segments conditional-write probe 3\n", UpdateIfMatch(wrong))
        if updated is not None:
            missing.append(IF_MATCH)
        elif _put(target, key, b"kafka-segments conditional-write probe 4\n", UpdateIfMatch(etag)) is None:
            missing.append(IF_MATCH)  # refuses even the right etag: no update could ever commit
        return tuple(missing)
    finally:
        _delete_quietly(target, key)


def _put(target: ProbeTarget, key: str, body: bytes, mode: Create | UpdateIfMatch) -> str | None:
    """The new etag, or ``None`` when the store refused the condition (412, 409, or the header rejected as
    not implemented)."""
    conditions = {"IfNoneMatch": "*"} if isinstance(mode, Create) else {"IfMatch": mode.etag}
    try:
        response = target.client.put_object(Bucket=target.bucket, Key=key, Body=body, **conditions)
    except transport_errors() as exc:
        if _not_implemented(exc):
            return None
        error = translate_s3_error(exc, bucket=target.bucket, key=key, mode=mode)
        if isinstance(error, ObjectAlreadyExistsError | PreconditionFailedError):
            return None  # ConditionalWriteConflictError (409) is a PreconditionFailedError too
        raise error from exc
    return str(response.get("ETag", ""))


def _not_implemented(exc: Exception) -> bool:
    """A store that rejects a conditional header outright (``501 NotImplemented``) does not honour it."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return False
    code = str(response.get("Error", {}).get("Code", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code == "NotImplemented" or status == 501


def _delete_quietly(target: ProbeTarget, key: str) -> None:
    try:
        target.client.delete_object(Bucket=target.bucket, Key=key)
    except transport_errors() as exc:  # a leftover probe is harmless: the lake's readers ignore the folder
        _log.warning("%s", translate_s3_error(exc, bucket=target.bucket, key=key))


def _refusal(target: ProbeTarget, missing: tuple[str, ...]) -> ConditionalWritesUnsupportedError:
    endpoint = shown_endpoint(target.endpoint)
    names = " and ".join(missing)
    return ConditionalWritesUnsupportedError(
        f"the S3 endpoint {endpoint} does not honour conditional writes: {names} (checked with a probe "
        f"object under {PROBE_PREFIX}); every commit relies on them, so nothing of the lake was written",
        location=f"s3://{target.bucket}/{target.prefix}",
        endpoint=endpoint,
        missing=missing,
    )
