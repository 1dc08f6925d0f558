"""A run's gc: ``lake.gc.collect_garbage`` with what the configuration file says of it (docs/lake.md,
"Garbage collection"; docs/configuration.md, "Settings of kafka-segments itself")."""

from __future__ import annotations

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.config import Config
from kafka_segments.config.catalogue import (
    DEFAULT_RETAIN_MANIFESTS,
    RETAIN_MANIFESTS,
    RUN_FOLDER_RETENTION_MS,
)
from kafka_segments.lake.gc import collect_garbage
from kafka_segments.lake.gc_report import GcReport
from kafka_segments.storage.base import ObjectStore


def retain_manifests(config: Config) -> int:
    """The broker section's ``kafka_segments.retain.manifests``."""
    value = config.broker_value(RETAIN_MANIFESTS)
    return value if isinstance(value, int) else DEFAULT_RETAIN_MANIFESTS


def run_folder_retention_ms(config: Config) -> int | None:
    """The broker section's ``kafka_segments.run.folder.retention.ms``; ``None`` for -1 (keep every one)."""
    value = config.broker_value(RUN_FOLDER_RETENTION_MS)
    return value if isinstance(value, int) and value >= 0 else None


def collect_run_garbage(
    store: ObjectStore,
    config: Config,
    *,
    dry_run: bool,
    full: bool = False,
    clock: Clock = wall_clock_ms,
) -> GcReport:
    """The gc pass a run ends with: ``collect_garbage`` with the configured manifest and run folder
    retention (its default orphan age); ``full``: it lists the whole lake (as ``run --full-listing``)."""
    return collect_garbage(
        store,
        dry_run=dry_run,
        retain_manifests=retain_manifests(config),
        run_folder_retention_ms=run_folder_retention_ms(config),
        full=full,
        clock=clock,
    )
