"""A listing of moto's S3 that costs the page, not the bucket (benches only: ``scale_metadata.py --s3``).

moto answers every ``ListObjectsV2`` page by walking and sorting every key of the bucket
(``S3Backend.list_objects``): a page of 1,000 keys of a 100,000-key bucket took it 1.9 s of CPU on this
machine under load, so a listing of 100k keys (100 pages) costs moto minutes, and a per-partition listing
after one key (``StartAfter``) a quarter of a second — costs of the bench's server, not of S3 (whose pages
take tens of milliseconds whatever the bucket holds) and not of the command measured. ``fast_listing()``
keeps each bucket's key names sorted as they are written and deleted, and answers a listing without a
delimiter from them (``bisect``): the same keys, order, pages and continuation tokens as moto's own walk.
A listing with a delimiter is left to moto."""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_NAMES = "_bench_sorted_names"
_LOCK = threading.Lock()
"""moto's server answers on several threads: the sorted names change and are read under it."""


def _names(store: Any) -> list[str]:
    names = store.__dict__.get(_NAMES)
    if names is None:
        names = sorted(dict.keys(store))
        store.__dict__[_NAMES] = names
    return names


@contextmanager
def fast_listing() -> Iterator[None]:  # noqa: PLR0915 - the five patched methods and their undoing, together
    """moto's key store keeping its names sorted, and ``list_objects_v2`` answering from them."""
    from moto.s3.models import FakeDeleteMarker, S3Backend
    from moto.s3.utils import _VersionedKeyStore
    from moto.utilities.utils import md5_hash

    original_set = _VersionedKeyStore.__setitem__
    original_setlist = _VersionedKeyStore.setlist
    original_pop = _VersionedKeyStore.pop
    original_del = _VersionedKeyStore.__delitem__
    original_list = S3Backend.list_objects_v2

    def added(store: Any, key: str) -> None:
        with _LOCK:
            names = _names(store)
            index = bisect.bisect_left(names, key)
            if index == len(names) or names[index] != key:
                names.insert(index, key)

    def removed(store: Any, key: str) -> None:
        with _LOCK:
            names = _names(store)
            index = bisect.bisect_left(names, key)
            if index < len(names) and names[index] == key and key not in dict.keys(store):
                del names[index]

    def set_item(self: Any, key: str, value: Any) -> Any:
        result = original_set(self, key, value)
        added(self, key)
        return result

    def set_list(self: Any, key: Any, list_: Any) -> Any:
        result = original_setlist(self, key, list_)
        added(self, key)
        return result

    def pop(self: Any, key: str) -> Any:
        result = original_pop(self, key)
        removed(self, key)
        return result

    def del_item(self: Any, key: str) -> None:
        original_del(self, key)
        removed(self, key)

    def list_objects_v2(
        self: Any,
        bucket: Any,
        prefix: str | None,
        delimiter: str | None,
        continuation_token: str | None,
        start_after: str | None,
        max_keys: int,
    ) -> Any:
        if delimiter or max_keys == 0 or not isinstance(bucket.keys, _VersionedKeyStore):
            return original_list(self, bucket, prefix, delimiter, continuation_token, start_after, max_keys)
        prefix = prefix or ""
        limit = self._pagination_tokens.get(continuation_token) if continuation_token else start_after
        found: list[Any] = []
        with _LOCK:
            names = _names(bucket.keys)
            index = bisect.bisect_right(names, limit) if limit else bisect.bisect_left(names, prefix)
            while index < len(names) and len(found) <= max_keys:
                name = names[index]
                index += 1
                if not name.startswith(prefix):
                    if name > prefix:
                        break
                    continue
                versions = bucket.keys.getlist(name) or []
                if versions and not isinstance(versions[-1], FakeDeleteMarker):
                    found.append(versions[-1])
        if len(found) <= max_keys:
            return found, False, None
        found = found[:max_keys]
        token = md5_hash(found[-1].name.encode("utf-8")).hexdigest()
        self._pagination_tokens[token] = found[-1].name
        return found, True, token

    _VersionedKeyStore.__setitem__ = set_item  # type: ignore[method-assign]
    _VersionedKeyStore.setlist = set_list  # type: ignore[method-assign]
    _VersionedKeyStore.pop = pop  # type: ignore[method-assign]
    _VersionedKeyStore.__delitem__ = del_item  # type: ignore[method-assign]
    S3Backend.list_objects_v2 = list_objects_v2  # type: ignore[method-assign]
    try:
        yield
    finally:
        _VersionedKeyStore.__setitem__ = original_set  # type: ignore[method-assign]
        _VersionedKeyStore.setlist = original_setlist  # type: ignore[method-assign]
        _VersionedKeyStore.pop = original_pop  # type: ignore[method-assign]
        _VersionedKeyStore.__delitem__ = original_del  # type: ignore[method-assign]
        S3Backend.list_objects_v2 = original_list  # type: ignore[method-assign]
