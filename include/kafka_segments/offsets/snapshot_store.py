"""Consumer-offset snapshots in the lake: immutable, content-addressed objects, and a pin per logical time
(docs/retention.md, "Which snapshot a run uses").

A snapshot's id is the SHA-256 of its canonical JSON, so storing it twice writes nothing new, and an object
whose bytes do not hash to its name is refused (``SnapshotIntegrityError``). Everything is create-only: the
first pin wins, a later one gets it back marked ``reused``. Pin format version 1::

    {"format_version": 1, "now_ms": 1763700000000, "snapshot_id": "<64 hex digits>", "source": "lake",
        "pinned_at_ms": 1763700012345}"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field, replace

from kafka_segments.clock import wall_clock_ms
from kafka_segments.errors import (
    ConditionalWriteConflictError,
    LakeError,
    ObjectAlreadyExistsError,
    ObjectNotFoundError,
)
from kafka_segments.lake.json_document import dump_json
from kafka_segments.lake.layout import META_PREFIX
from kafka_segments.offsets.snapshot_codec import snapshot_from_json, snapshot_to_json
from kafka_segments.offsets.snapshot_fields import (
    FieldReader,
    SnapshotFormatError,
    UnsupportedSnapshotVersionError,
    decode_document,
)
from kafka_segments.segment.files import filename_prefix
from kafka_segments.state import OffsetSnapshot
from kafka_segments.storage.base import Create, ObjectStore

OFFSETS_PREFIX = META_PREFIX + "offsets/"
PINS_PREFIX = OFFSETS_PREFIX + "at/"
PIN_FORMAT_VERSION = 1

_SNAPSHOT_ID = re.compile(r"[0-9a-f]{64}")
_SNAPSHOT_NAME = re.compile(r"([0-9a-f]{64})\.json")
_PIN_NAME = re.compile(r"([0-9]{20})\.json")
_CREATE_ATTEMPTS = 5
"""A create that meets a concurrent conditional write in flight (S3's 409) is retried this often."""


class SnapshotStoreError(LakeError):
    """A snapshot or pin in the lake is not what it must be."""


class InvalidSnapshotIdError(SnapshotStoreError, ValueError):
    """A snapshot id is not 64 lowercase hex digits (the SHA-256 of the snapshot's canonical JSON)."""


class SnapshotNotFoundError(SnapshotStoreError):
    """No snapshot with this id is stored in the lake."""


class SnapshotIntegrityError(SnapshotStoreError):
    """A stored snapshot's bytes do not hash to its name: it was changed outside the lake's control."""


# ---------------------------------------------------------------------------------------------- keys


def validate_snapshot_id(snapshot_id: str) -> str:
    """``snapshot_id`` if it is 64 lowercase hex digits, else ``InvalidSnapshotIdError``."""
    if not isinstance(snapshot_id, str) or not _SNAPSHOT_ID.fullmatch(snapshot_id):
        raise InvalidSnapshotIdError(
            f"invalid snapshot id {snapshot_id!r}: expected 64 lowercase hex digits", location="snapshot id"
        )
    return snapshot_id


def snapshot_id_of(data: bytes) -> str:
    """The id of a snapshot whose canonical JSON is ``data``: its SHA-256, hex."""
    return hashlib.sha256(data).hexdigest()


def snapshot_key(snapshot_id: str) -> str:
    """``_kafka_segments/offsets/<snapshot id>.json``."""
    return f"{OFFSETS_PREFIX}{validate_snapshot_id(snapshot_id)}.json"


def parse_snapshot_key(key: str) -> str | None:
    """The snapshot id a key names, ``None`` when ``key`` is not a snapshot key."""
    if not key.startswith(OFFSETS_PREFIX):
        return None
    match = _SNAPSHOT_NAME.fullmatch(key[len(OFFSETS_PREFIX) :])
    return None if match is None else match.group(1)


def pin_key(now_ms: int) -> str:
    """``_kafka_segments/offsets/at/<now_ms as 20 digits>.json`` (``now_ms`` in [0, 2**63 - 1])."""
    return f"{PINS_PREFIX}{filename_prefix(now_ms)}.json"


def parse_pin_key(key: str) -> int | None:
    """The logical time a pin key names, ``None`` when ``key`` is not a pin key."""
    if not key.startswith(PINS_PREFIX):
        return None
    match = _PIN_NAME.fullmatch(key[len(PINS_PREFIX) :])
    return None if match is None else int(match.group(1))


# ---------------------------------------------------------------------------------------------- snapshots


@dataclass(frozen=True, slots=True)
class StoredSnapshot:
    """A snapshot and where it is stored."""

    snapshot_id: str
    key: str
    snapshot: OffsetSnapshot


def store_snapshot(store: ObjectStore, snapshot: OffsetSnapshot) -> StoredSnapshot:
    """Store ``snapshot`` (create-only) under its content address; storing it again is a no-op.

    The canonical bytes are read back through the strict reader first, so a snapshot that could not be
    read later (an illegal topic, a negative offset, a duplicate group) is never stored.

    Raises:
        SnapshotFormatError: the snapshot is not valid (names the field).
        SnapshotIntegrityError: an object with the same name but other bytes is there.
        ObjectStoreError: the store failed.
    """
    data = snapshot_to_json(snapshot)
    snapshot_id = snapshot_id_of(data)
    key = snapshot_key(snapshot_id)
    location = store.location(key)
    canonical = snapshot_from_json(data, location=location)
    _create_or_match(store, key, data, location=location)
    return StoredSnapshot(snapshot_id=snapshot_id, key=key, snapshot=canonical)


def _create_or_match(store: ObjectStore, key: str, data: bytes, *, location: str) -> None:
    """Create ``key`` with ``data``, or accept an object that is there with exactly these bytes."""
    for attempt in range(_CREATE_ATTEMPTS):
        try:
            store.put(key, data, mode=Create())
            return
        except ObjectAlreadyExistsError:
            existing = _get_or_none(store, key)
            if existing == data:
                return
            if existing is not None:
                raise SnapshotIntegrityError(
                    f"an object with sha256 {snapshot_id_of(existing)} is stored under this snapshot's name: "
                    "it was changed outside the lake's control",
                    location=location,
                ) from None
        except ConditionalWriteConflictError:
            if attempt == _CREATE_ATTEMPTS - 1:
                raise
        _backoff(attempt)
    raise SnapshotStoreError("the snapshot could not be created or read back", location=location)


def read_snapshot(store: ObjectStore, snapshot_id: str) -> OffsetSnapshot:
    """The stored snapshot ``snapshot_id``, after checking its bytes hash to the id.

    Raises:
        InvalidSnapshotIdError: not a snapshot id.
        SnapshotNotFoundError: no such snapshot.
        SnapshotIntegrityError: the bytes do not hash to ``snapshot_id``.
        SnapshotFormatError: the object is not a valid snapshot.
    """
    key = snapshot_key(snapshot_id)
    location = store.location(key)
    data = _get_or_none(store, key)
    if data is None:
        raise SnapshotNotFoundError(f"no offset snapshot {snapshot_id} in the lake", location=location)
    actual = snapshot_id_of(data)
    if actual != snapshot_id:
        raise SnapshotIntegrityError(
            f"the object's sha256 is {actual}, not its snapshot id: "
            "it was changed outside the lake's control",
            location=location,
        )
    return snapshot_from_json(data, location=location)


def list_snapshots(store: ObjectStore) -> list[str]:
    """The ids of every stored snapshot, sorted."""
    ids = (parse_snapshot_key(meta.key) for meta in store.list(OFFSETS_PREFIX))
    return sorted(snapshot_id for snapshot_id in ids if snapshot_id is not None)


# ---------------------------------------------------------------------------------------------- pins


@dataclass(frozen=True, slots=True)
class SnapshotPin:
    """The snapshot that runs at logical time ``now_ms`` use."""

    now_ms: int
    snapshot_id: str
    source: str
    """Where the pinned snapshot came from (``file``, ``lake``, ``kafka://host:port``)."""
    pinned_at_ms: int
    """Wall-clock time the pin was written."""
    reused: bool = field(default=False, compare=False)
    """Set by ``pin_snapshot`` when the pin existed already (an earlier or concurrent run pinned first):
    then ``snapshot_id`` may differ from the one asked for. Always false from ``read_pin``."""

    @property
    def key(self) -> str:
        return pin_key(self.now_ms)


def pin_snapshot(
    store: ObjectStore, *, now_ms: int, snapshot_id: str, source: str, pinned_at_ms: int | None = None
) -> SnapshotPin:
    """Pin ``snapshot_id`` for logical time ``now_ms``, unless a pin exists: the first writer wins, and
    everyone else (also a concurrent writer) gets the existing pin, with ``reused`` set.

    Raises:
        InvalidSnapshotIdError, InvalidFileNameError (``now_ms`` outside [0, 2**63 - 1]).
        SnapshotNotFoundError: ``snapshot_id`` is not stored (a pin must name a stored snapshot).
        SnapshotFormatError: the existing pin is not a valid pin.
        ObjectStoreError: the store failed.
    """
    key = pin_key(now_ms)
    location = store.location(key)
    try:
        store.head(snapshot_key(snapshot_id))
    except ObjectNotFoundError:
        raise SnapshotNotFoundError(
            f"cannot pin offset snapshot {snapshot_id}: it is not stored in the lake", location=location
        ) from None
    pinned_at = wall_clock_ms() if pinned_at_ms is None else pinned_at_ms
    pin = SnapshotPin(now_ms=now_ms, snapshot_id=snapshot_id, source=source, pinned_at_ms=pinned_at)
    data = _pin_to_json(pin)
    _read_pin_bytes(data, location=location, now_ms=now_ms)  # never write what could not be read back
    for attempt in range(_CREATE_ATTEMPTS):
        try:
            store.put(key, data, mode=Create())
            return pin
        except ObjectAlreadyExistsError:
            pass
        except ConditionalWriteConflictError:
            if attempt == _CREATE_ATTEMPTS - 1:
                raise
        existing = read_pin(store, now_ms)
        if existing is not None:
            return replace(existing, reused=True)
        _backoff(attempt)
    raise SnapshotStoreError("could not create or read the pin", location=location)


def read_pin(store: ObjectStore, now_ms: int) -> SnapshotPin | None:
    """The pin for logical time ``now_ms``, ``None`` when there is none.

    Raises:
        SnapshotFormatError: the object is not a valid pin (or is for another time than its key).
    """
    key = pin_key(now_ms)
    data = _get_or_none(store, key)
    return None if data is None else _read_pin_bytes(data, location=store.location(key), now_ms=now_ms)


def list_pins(store: ObjectStore) -> list[int]:
    """The logical times that have a pin, ascending."""
    times = (parse_pin_key(meta.key) for meta in store.list(PINS_PREFIX))
    return sorted(now_ms for now_ms in times if now_ms is not None)


def read_pin_at_or_before(store: ObjectStore, now_ms: int) -> SnapshotPin | None:
    """The pin for ``now_ms``, else the newest pin of an earlier logical time (what a backfill of a date
    without its own pin uses: the offsets as they were last seen before that date); ``None`` when there is
    none.

    Raises:
        SnapshotFormatError: the chosen object is not a valid pin.
    """
    earlier = [at for at in list_pins(store) if at <= now_ms]
    return None if not earlier else read_pin(store, earlier[-1])


def read_pinned_snapshot(store: ObjectStore, now_ms: int) -> StoredSnapshot | None:
    """The snapshot pinned for ``now_ms`` (what a rerun or backfill of that time uses), or ``None``.

    Raises:
        SnapshotNotFoundError, SnapshotIntegrityError, SnapshotFormatError: see ``read_snapshot``.
    """
    pin = read_pin(store, now_ms)
    if pin is None:
        return None
    snapshot = read_snapshot(store, pin.snapshot_id)
    return StoredSnapshot(snapshot_id=pin.snapshot_id, key=snapshot_key(pin.snapshot_id), snapshot=snapshot)


def _pin_to_json(pin: SnapshotPin) -> bytes:
    document = {
        "format_version": PIN_FORMAT_VERSION,
        "now_ms": pin.now_ms,
        "snapshot_id": pin.snapshot_id,
        "source": pin.source,
        "pinned_at_ms": pin.pinned_at_ms,
    }
    return dump_json(document) + b"\n"


def _read_pin_bytes(data: bytes, *, location: str, now_ms: int) -> SnapshotPin:
    reader = FieldReader(decode_document(data, location=location, kind="pin"), location=location)
    version = reader.integer("format_version", minimum=-(2**63))
    if version != PIN_FORMAT_VERSION:
        raise UnsupportedSnapshotVersionError(
            f"{version} is not supported; this build reads pin format_version {PIN_FORMAT_VERSION}",
            location=location,
            field="format_version",
        )
    pinned_for = reader.integer("now_ms")
    if pinned_for != now_ms:
        raise reader.fail("now_ms", f"the pin for {now_ms} says {pinned_for}")
    snapshot_id = reader.string("snapshot_id")
    if not _SNAPSHOT_ID.fullmatch(snapshot_id):
        raise reader.fail("snapshot_id", f"{snapshot_id!r} is not 64 lowercase hex digits")
    return SnapshotPin(
        now_ms=pinned_for,
        snapshot_id=snapshot_id,
        source=reader.string("source"),
        pinned_at_ms=reader.integer("pinned_at_ms"),
    )


def _get_or_none(store: ObjectStore, key: str) -> bytes | None:
    try:
        return store.get(key)
    except ObjectNotFoundError:
        return None


def _backoff(attempt: int) -> None:
    time.sleep(0.05 * (attempt + 1))


__all__ = [
    "OFFSETS_PREFIX",
    "PINS_PREFIX",
    "PIN_FORMAT_VERSION",
    "InvalidSnapshotIdError",
    "SnapshotFormatError",
    "SnapshotIntegrityError",
    "SnapshotNotFoundError",
    "SnapshotPin",
    "SnapshotStoreError",
    "StoredSnapshot",
    "list_pins",
    "list_snapshots",
    "parse_pin_key",
    "parse_snapshot_key",
    "pin_key",
    "pin_snapshot",
    "read_pin",
    "read_pinned_snapshot",
    "read_snapshot",
    "snapshot_id_of",
    "snapshot_key",
    "store_snapshot",
    "validate_snapshot_id",
]
