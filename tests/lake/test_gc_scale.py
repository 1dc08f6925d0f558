"""gc stays linear in the number of objects: checked by counting key comparisons, never by timing.

A key is a ``str`` subclass that counts its ``==`` and ``endswith`` calls. Set and dict look-ups of a key
compare it at most once (the hash finds the one candidate), while a scan of a list compares it with every
element before it; so a quadratic step shows as ~n²/2 comparisons for n retired objects, a linear one as a
few per object.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

import pytest
from kafka_segments.errors import DeleteObjectsError
from kafka_segments.lake.gc import _execute
from kafka_segments.lake.gc_report import GcReport, RetiredItem
from kafka_segments.lake.layout import index_keys
from kafka_segments.lake.sweep import delete_objects
from kafka_segments.storage import ObjectStore

pytestmark = pytest.mark.lake

OBJECTS = 2_000


class CountingKey(str):
    """A key that counts how often it is compared."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        CountingKey.comparisons += 1
        return str.__eq__(self, other)

    def __hash__(self) -> int:
        return str.__hash__(self)

    def endswith(self, suffix: str | tuple[str, ...], *bounds: int) -> bool:  # type: ignore[override]
        CountingKey.comparisons += 1
        return str.endswith(self, suffix, *bounds)


class DeletingStore:
    """Accepts every batched delete, or fails every key it is given naming it with the ``root/`` prefix (as
    a store may name a key with its root prefix)."""

    def __init__(self, *, fail_all: bool = False) -> None:
        self.fail_all = fail_all
        self.deleted: list[str] = []

    def describe(self) -> str:
        return "memory://test"

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        if self.fail_all:
            failed = {CountingKey(f"root/{key}"): "AccessDenied" for key in keys}
            raise DeleteObjectsError("denied", location=self.describe(), failed=failed)
        self.deleted.extend(keys)


def due_item(partition: int) -> RetiredItem:
    log = CountingKey(f"orders-{partition}/00000000000000000000-run.log")
    keys = (log, *(CountingKey(key) for key in index_keys(log)))
    return RetiredItem(log, "retention.ms", 1, 0, keys=keys)


def plan_of(items: tuple[RetiredItem, ...]) -> GcReport:
    return GcReport(
        now_ms=1,
        dry_run=True,
        head_version=2,
        retained_versions=(2,),
        deleted=items,
        waiting=(),
        held=(),
        already_gone=(),
        swept=(),
        orphans_left=(),
        deleted_manifests=(),
        failures=(),
    )


def test_deleting_n_retired_objects_compares_no_key_with_a_list() -> None:
    items = tuple(due_item(partition) for partition in range(OBJECTS))
    store = DeletingStore()
    CountingKey.comparisons = 0

    report = _execute(cast(ObjectStore, store), plan_of(items))
    comparisons = CountingKey.comparisons

    assert len(report.deleted) == OBJECTS
    assert len(store.deleted) == 4 * OBJECTS  # .log, .index, .timeindex, .txnindex of each
    assert comparisons <= 2 * OBJECTS  # the list scan this replaced made ~OBJECTS**2 / 2


def test_a_batch_in_which_every_key_failed_is_matched_back_without_scanning_the_keys() -> None:
    keys = [CountingKey(f"orders-{partition}/00000000000000000000-run.index") for partition in range(OBJECTS)]
    CountingKey.comparisons = 0

    result = delete_objects(cast(ObjectStore, DeletingStore(fail_all=True)), keys)
    comparisons = CountingKey.comparisons

    assert result.deleted == ()
    assert {failure.key for failure in result.failed} == set(keys)  # "root/<key>" matched back to <key>
    assert comparisons <= 2 * OBJECTS  # endswith against every key, per failure, made ~OBJECTS**2
