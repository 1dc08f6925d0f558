"""Committed versions in tests, whichever their format, and lakes in format 1 built on purpose.

Every commit writes format 2 (``kafka_segments.lake.staging.COMMIT_FORMAT``): a root per version and
pieces per partition (docs/metadata-format-2.md). Tests read a version whichever its format with the
product's reader (``lake.history.read_manifest``, ``read_head``; ``lake.roots.read_root`` for its root
alone) and edit a committed version with ``rewrite_version`` (in the format it was in).

``format_1_commits`` makes the commits inside it write format 1 as the previous release did: for tests
that need a lake "in the previous code's layout" (the migration; the baseline a format 2 run must decide
like, a run over every partition; a rule's look at a partition a format 2 run leaves unread). No command
can do that."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from kafka_segments.lake import staging
from kafka_segments.lake.codec import manifest_to_json
from kafka_segments.lake.format2 import write_version
from kafka_segments.lake.history import read_manifest
from kafka_segments.lake.layout import manifest_key
from kafka_segments.state import MANIFEST_FORMAT_2, MANIFEST_FORMAT_VERSION, Manifest
from kafka_segments.storage import ObjectStore
from kafka_segments.storage.base import Overwrite

FORMAT_1 = MANIFEST_FORMAT_VERSION


def rewrite_version(store: ObjectStore, version: int, edit: Callable[[Manifest], Manifest]) -> Manifest:
    """Overwrite committed version ``version`` with ``edit`` of it, in the format it was written in (a
    format 2 root gets new pieces for what the edit changed); return the edited manifest."""
    manifest = read_manifest(store, version)
    edited = edit(manifest)
    if manifest.format_version == MANIFEST_FORMAT_2:
        data = write_version(store, edited)
    else:
        data = manifest_to_json(edited)
    store.put(manifest_key(version), data, mode=Overwrite())
    return edited


@contextmanager
def format_1_commits() -> Iterator[None]:
    """Commits inside write format 1, as the release before format 2 wrote every version (its runs read
    every partition of a format 1 base, so the same code is the previous code here)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(staging, "COMMIT_FORMAT", FORMAT_1)
        yield
