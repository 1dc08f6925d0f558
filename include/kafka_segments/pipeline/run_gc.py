"""A run's gc: ``lake.gc.collect_garbage`` with what the configuration file says of it (docs/lake.md,
"Garbage collection"; docs/configuration.md, "Settings of kafka-segments itself")."""

from __future__ import annotations

from kafka_segments.config import Config
from kafka_segments.config.catalogue import RUN_FOLDER_RETENTION_MS
from kafka_segments.lake.gc import collect_garbage
from kafka_segments.lake.gc_report import GcReport
from kafka_segments.lake.runs import Clock, wall_clock_ms
from kafka_segments.storage.base import ObjectStore


def run_folder_retention_ms(config: Config) -> int | None:
    """The broker section's ``kafka_segments.run.folder.retention.ms``; ``None`` for -1 (keep every one)."""
    values = {setting.name: setting.value for setting in config.settings(None)}
    value = values.get(RUN_FOLDER_RETENTION_MS, -1)
    return value if isinstance(value, int) and value >= 0 else None


def collect_run_garbage(
    store: ObjectStore, config: Config, *, dry_run: bool, clock: Clock = wall_clock_ms
) -> GcReport:
    """The gc pass a run ends with: ``collect_garbage``'s defaults and the configured run folder retention."""
    return collect_garbage(
        store, dry_run=dry_run, run_folder_retention_ms=run_folder_retention_ms(config), clock=clock
    )
