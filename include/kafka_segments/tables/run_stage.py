"""The sync a run's ``tables`` stage calls (``pipeline.tables_stage``; docs/tables.md "After every run"): the
topics the configuration enables (``kafka_segments.table.enable``), in the catalog and namespace it names,
brought to the lake's head, their unreferenced files deleted (a run that commits is not a dry run). The
command line's ``run`` and the maintenance DAG's ``tables`` task supply it."""

from __future__ import annotations

from kafka_segments.config import Config
from kafka_segments.lake.history import manifest_versions
from kafka_segments.lake.roots import read_root
from kafka_segments.pipeline.tables_stage import TablesOutcome
from kafka_segments.storage.base import ObjectStore
from kafka_segments.tables.settings import configured_topics


def sync_enabled_tables(store: ObjectStore, config: Config) -> TablesOutcome | None:
    """Sync the tables ``config`` enables; ``None`` when it enables none of the head's topics (no catalog
    is opened, nothing is written).

    Raises:
        TableError, LakeError, ObjectStoreError: as ``sync_tables`` (the stage reports them).
    """
    versions = manifest_versions(store)
    if not versions or not configured_topics(config, read_root(store, versions[-1]).topics):
        return None
    from kafka_segments.tables.sync import sync_tables  # the reader's kernels, pyiceberg: only for a table

    report = sync_tables(store, config=config, delete_files=True)  # a committing run: not a dry run
    return TablesOutcome(lines=tuple(report.lines()), report=report.to_json())
