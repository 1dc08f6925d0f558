"""``describe --config F [--now T]``: the configuration, the time and the run's compaction budget, read as
``run`` reads them, so each compacted partition's verdict is the one a ``run --now T`` would reach."""

from __future__ import annotations

import argparse

from kafka_segments.views.describe_compaction import CompactionContext


def describe_context(args: argparse.Namespace) -> CompactionContext:
    """The compaction context of ``describe``'s ``--config`` and ``--now``.

    Raises:
        ConfigError: the configuration file cannot be read or is not valid (every problem listed).
    """
    from kafka_segments.clock import wall_clock_ms
    from kafka_segments.config import load_config
    from kafka_segments.pipeline.compaction.stage import compaction_budget

    config = load_config(args.config)
    now_ms = args.now if args.now is not None else wall_clock_ms()
    return CompactionContext(config=config, now_ms=now_ms, budget=compaction_budget(config))
