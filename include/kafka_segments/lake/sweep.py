"""Finding and deleting the objects a run wrote that nothing references (shared by ``gc`` and ``recover``).

Such objects carry their run's id in their name (Kafka's plain names never do). What must stay is given as
``References``. Keys that could not be deleted are returned, never raised; deleting is idempotent, so the
next sweep finishes an interrupted one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from kafka_segments.errors import DeleteObjectsError, ObjectStoreError
from kafka_segments.lake.format2 import piece_run_id
from kafka_segments.lake.layout import index_keys, is_meta_key, try_parse_segment_key
from kafka_segments.state import Manifest, RetiredObject
from kafka_segments.storage.base import ObjectMeta, ObjectStore


@dataclass(frozen=True, slots=True)
class DeleteFailure:
    """A key that could not be deleted, with the store's error (code or message)."""

    key: str
    error: str

    def to_dict(self) -> dict[str, str]:
        return {"key": self.key, "error": self.error}


@dataclass(frozen=True, slots=True)
class DeleteResult:
    """What one batched delete did."""

    deleted: tuple[str, ...]
    failed: tuple[DeleteFailure, ...]

    @property
    def failed_keys(self) -> frozenset[str]:
        return frozenset(failure.key for failure in self.failed)


@dataclass(frozen=True, slots=True)
class References:
    """Segment objects that must stay, by name stem: a ``.log`` key keeps every object of the same stem
    (``.index``, ``.timeindex``, ``.txnindex``, ``.snapshot``)."""

    stems: frozenset[str]

    def covers(self, key: str) -> bool:
        return key_stem(key) in self.stems


def key_stem(key: str) -> str:
    """A segment object's key without its kind suffix (``orders-0/00000000000000000100-run``); other keys
    as they are."""
    name = try_parse_segment_key(key)
    return key if name is None else key[: -len(name.kind.value)]


def references(
    manifests: Iterable[Manifest], retired: Iterable[RetiredObject], *, pieces: Iterable[str] = ()
) -> References:
    """What a sweep must not touch: every live segment of ``manifests`` and every ``retired`` object still
    waiting for garbage collection, each with the other objects of its name stem, and the manifest
    ``pieces`` those manifests are made of (format 2)."""
    logs: set[str] = set(pieces)
    for manifest in manifests:
        logs.update(manifest.live_keys())
    logs.update(item.key for item in retired)
    return References(frozenset(key_stem(key) for key in logs))


def with_index_siblings(log_key: str) -> tuple[str, ...]:
    """``log_key`` and the keys of its ``.index``, ``.timeindex`` and ``.txnindex`` objects."""
    return (log_key, *index_keys(log_key))


def objects_by_run(listing: Iterable[ObjectMeta]) -> dict[str, tuple[ObjectMeta, ...]]:
    """The segment objects and manifest pieces named with a run id, grouped by that run id (in listing
    order). Other keys under ``_kafka_segments/``, root files and Kafka's plain names are left out."""
    grouped: dict[str, list[ObjectMeta]] = {}
    for meta in listing:
        run_id = object_run_id(meta.key)
        if run_id is not None:
            grouped.setdefault(run_id, []).append(meta)
    return {run_id: tuple(metas) for run_id, metas in grouped.items()}


def object_run_id(key: str) -> str | None:
    """The run id in a segment object's or a manifest piece's name (``lake.format2``); ``None`` for plain
    names and anything else."""
    if is_meta_key(key):
        return piece_run_id(key)
    name = try_parse_segment_key(key)
    return None if name is None else name.run_id


def unreferenced(metas: Iterable[ObjectMeta], keep: References) -> tuple[ObjectMeta, ...]:
    """The objects of ``metas`` that ``keep`` does not cover."""
    return tuple(meta for meta in metas if not keep.covers(meta.key))


def delete_objects(store: ObjectStore, keys: Sequence[str]) -> DeleteResult:
    """Delete ``keys`` with one ``delete_many`` call and say which were deleted and which not.

    A ``DeleteObjectsError`` fails only the keys it names; any other store error fails every key of the
    call (some may be gone already: deleting them again later is harmless)."""
    unique = tuple(dict.fromkeys(keys))
    if not unique:
        return DeleteResult((), ())
    failed: dict[str, str] = {}
    try:
        store.delete_many(unique)
    except DeleteObjectsError as exc:
        failed = _failures_by_key(exc.failed, unique)
    except ObjectStoreError as exc:
        failed = dict.fromkeys(unique, exc.reason)
    return DeleteResult(
        deleted=tuple(key for key in unique if key not in failed),
        failed=tuple(DeleteFailure(key, error) for key, error in failed.items()),
    )


def _failures_by_key(reported: dict[str, str], keys: Sequence[str]) -> dict[str, str]:
    """The store's failures by our keys. A store may name a key with its root prefix (``<prefix><key>``):
    such a name is matched to the longest of ``keys`` it ends with; a name that matches none is kept as is
    (reported, never taken for a success)."""
    wanted = set(keys)
    return {_reported_key(name, wanted): error for name, error in reported.items()}


def _reported_key(name: str, wanted: set[str]) -> str:
    """The key of ``wanted`` that ``name`` is (or ends with after a ``/``: the longest such), else ``name``.
    Looks up each suffix of ``name`` that follows a ``/`` (a few set look-ups, however many keys were
    deleted: a batch in which every key failed stays linear)."""
    if name in wanted:
        return name
    slash = name.find("/")
    while slash >= 0:
        suffix = name[slash + 1 :]
        if suffix in wanted:
            return suffix
        slash = name.find("/", slash + 1)
    return name


def sweep_objects(store: ObjectStore, metas: Iterable[ObjectMeta], keep: References) -> DeleteResult:
    """Delete the objects of ``metas`` that ``keep`` does not cover (one batched delete)."""
    return delete_objects(store, [meta.key for meta in unreferenced(metas, keep)])


def format_wall_ms(ms: int) -> str:
    """A wall-clock time for reports: ISO-8601 UTC with the epoch milliseconds (``2025-11-21T04:40:00.000Z
    (1763700000000)``)."""
    try:
        when = datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"
    return f"{when.replace('+00:00', 'Z')} ({ms})"
