"""What the commands share: the exit codes (0 ok, 1 a problem found, 2 usage or input error, 130 Ctrl-C) and
the options several commands take (``--lake``, ``--now``, ``--json``, ``--config``), each defined once.

Every command module's ``add_parsers(commands)`` adds its commands; ``cli/main.py`` lists the modules."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from kafka_segments.cli.times import parse_time_ms

if TYPE_CHECKING:
    from kafka_segments.config import Config
    from kafka_segments.pipeline.sequence import RunOptions
    from kafka_segments.pipeline.tables_stage import TablesOutcome
    from kafka_segments.storage.base import ObjectStore

EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What ``add_parsers`` receives: the subparsers of ``kafka-segments`` (or of a command group)."""

LAKE_HELP = "the lake: s3://bucket/prefix or a local path (S3 settings from the standard AWS variables)"
NOW_HELP = "epoch ms or ISO-8601 (default: now)"
JSON_HELP = "one JSON document on stdout, for programs"
REPORT_JSON_HELP = "print the report as one JSON document, for programs"


def add_lake(parser: argparse.ArgumentParser) -> None:
    """``--lake L`` (required)."""
    parser.add_argument("--lake", required=True, help=LAKE_HELP)


def add_now(parser: argparse.ArgumentParser, *, help: str = NOW_HELP) -> None:
    """``--now T``: the logical time, epoch milliseconds or ISO-8601 (``times.parse_time_ms``); ``None``
    when not given."""
    parser.add_argument("--now", type=parse_time_ms, metavar="T", help=help)


def add_json(parser: argparse.ArgumentParser, *, help: str = JSON_HELP) -> None:
    """``--json``: print one JSON document instead of the text report."""
    parser.add_argument("--json", action="store_true", help=help)


def add_config(parser: argparse.ArgumentParser, *, required: bool, help: str) -> None:
    """``--config F``: the YAML configuration file."""
    parser.add_argument("--config", required=required, metavar="F", help=help)


def quarantined_partitions(report: Mapping[str, Any]) -> list[str]:
    """The partitions a run left alone because of bad data, from its report document: quarantined by the
    adoption, or uncleanable (their cleaning round failed)."""
    adopted = [f"{item['topic']}-{item['partition']}" for item in report["adoption"]["quarantined"]]
    compaction = report.get("compaction") or {"partitions": []}
    uncleanable = [
        f"{item['topic']}-{item['partition']}"
        for item in compaction["partitions"]
        if item["status"] == "quarantined"
    ]
    return [*adopted, *uncleanable]


def quarantine_exit(command: str, partitions: Iterable[str]) -> int:
    """Exit 1 (after one line on stderr) when partitions were quarantined and left alone, else 0."""
    quarantined = sorted(set(partitions))
    if quarantined:
        print(
            f"kafka-segments {command}: {len(quarantined)} partition(s) quarantined and left alone: "
            f"{', '.join(quarantined)}",
            file=sys.stderr,
        )
        return EXIT_PROBLEM
    return EXIT_OK


def run_exit(command: str, document: Mapping[str, Any]) -> int:
    """A run's exit code from its report: 1 (after one line on stderr each) when partitions were
    quarantined or the tables stage failed after the lake committed (the next sync catches up), else 0."""
    code = quarantine_exit(command, quarantined_partitions(document))
    tables = document.get("tables")
    if tables is not None and not tables["synced"]:
        print(f"kafka-segments {command}: {tables['lines'][0]}", file=sys.stderr)
        return EXIT_PROBLEM
    return code


def sync_tables_after_commit(store: ObjectStore, config: Config) -> TablesOutcome | None:
    """The ``tables`` stage's sync (``kafka_segments.tables.run_stage``; pyiceberg loads only when a
    topic is a table)."""
    from kafka_segments.tables.run_stage import sync_enabled_tables

    return sync_enabled_tables(store, config)


def run_options(
    args: argparse.Namespace, *, dry_run: bool, labels: Mapping[str, str] | None = None
) -> RunOptions:
    """What ``run`` and ``plan`` ask of a run (either engine): ``now`` (default: the wall clock), the offsets
    source, the topics, gc, the whole listing, and progress lines ``[command] …`` on stderr."""
    from kafka_segments.clock import wall_clock_ms
    from kafka_segments.pipeline.offsets_input import OffsetsChoice
    from kafka_segments.pipeline.sequence import RunOptions

    return RunOptions(
        now_ms=args.now if args.now is not None else wall_clock_ms(),
        offsets=OffsetsChoice(
            file=args.offsets,
            source=args.offsets_source,
            groups=None if args.groups is None else tuple(args.groups),
        ),
        topics=None if args.topics is None else tuple(args.topics),
        dry_run=dry_run,
        gc=getattr(args, "gc", True),
        labels=dict(labels or {}),
        full_listing=getattr(args, "full_listing", False),
        progress=lambda line: print(f"[{args.command}] {line}", file=sys.stderr, flush=True),
        tables=sync_tables_after_commit,
    )
