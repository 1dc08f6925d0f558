"""The commands that apply the rules: ``run``, ``plan`` (always a dry run) and ``delete-records`` (KIP-107,
with ``kafka-delete-records.sh``'s file); docs/retention.md. Input errors exit 2 with a one-line reason."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_segments.cli.common import (
    EXIT_OK,
    EXIT_PROBLEM,
    EXIT_USAGE,
    add_config,
    add_json,
    add_lake,
    add_now,
    run_exit,
    run_options,
)
from kafka_segments.cli.output import emit

if TYPE_CHECKING:
    from kafka_segments.storage.base import ObjectStore

ENGINES = ("inline", "spark")


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, summary in (
        ("run", "apply retention to the lake: recover, adopt, snapshot, plan, commit, gc"),
        ("plan", "print what run would do (a dry run), human-readable or --json"),
    ):
        sub = commands.add_parser(
            name,
            help=summary,
            description=(
                f"{summary[0].upper()}{summary[1:]}. Every rule uses --now (the run's logical time): "
                "the same lake, configuration, offsets and --now always give the same result."
            ),
        )
        add_lake(sub)
        add_config(sub, required=True, help="the YAML configuration (docs/configuration.md)")
        offsets = sub.add_mutually_exclusive_group()
        offsets.add_argument("--offsets", metavar="SNAPSHOT.json", help="a consumer-offset snapshot file")
        offsets.add_argument(
            "--offsets-source", metavar="SRC", help="take the snapshot from kafka://host:port or 'lake'"
        )
        sub.add_argument(
            "--group", dest="groups", action="append", metavar="G", help="with kafka://: only these groups"
        )
        add_now(sub)
        sub.add_argument("--topics", nargs="+", metavar="T", help="plan only these topics")
        sub.add_argument("--engine", choices=ENGINES, default="inline", help="where the work runs")
        sub.add_argument(
            "--spark-master",
            default="local[*]",
            metavar="URL",
            help=(
                "with --engine spark: the Spark master (local[*], local[N], spark://host:port of a standalone"
                " cluster); the job's other Spark settings come from $SPARK_CONF_DIR/spark-defaults.conf"
            ),
        )
        sub.add_argument("--report", metavar="OUT.json", help="also write the JSON report to this file")
        sub.add_argument(
            "--full-listing",
            action="store_true",
            help=(
                "list the whole lake, not each partition after its newest segment (format 2): reports a "
                "segment uploaded late below a partition's newest one, or a live one deleted or changed"
            ),
        )
        add_json(sub, help="print the JSON report instead of the summary")
        if name == "run":
            sub.add_argument(
                "--dry-run", action="store_true", help="plan, validate and report; commit nothing"
            )
            sub.add_argument("--no-gc", dest="gc", action="store_false", help="skip garbage collection")
        sub.set_defaults(handler=run_run if name == "run" else run_plan)

    sub = commands.add_parser(
        "delete-records",
        help="KIP-107: move log start offsets (kafka-delete-records.sh's offset JSON file)",
        description=(
            "Delete records below the given offsets, as kafka-delete-records.sh does: offset -1 means the "
            "high watermark; per partition the new low watermark or an error (OFFSET_OUT_OF_RANGE, "
            "POLICY_VIOLATION for topics without cleanup.policy delete, UNKNOWN_TOPIC_OR_PARTITION). The new "
            "log start offsets and the whole segments below them are committed atomically."
        ),
    )
    add_lake(sub)
    sub.add_argument(
        "--offset-json-file", required=True, metavar="F", help='{"version":1,"partitions":[...]}'
    )
    add_config(sub, required=False, help="the YAML configuration (cleanup.policy decides; default: Kafka's)")
    sub.add_argument("--offsets", metavar="SNAPSHOT.json", help="warn about groups that lose unread records")
    add_now(sub)
    sub.add_argument("--dry-run", action="store_true", help="print the results; change nothing")
    add_json(sub, help="one JSON document on stdout")
    sub.set_defaults(handler=run_delete_records)


def _usage_error(args: argparse.Namespace, exc: Exception) -> int:
    print(f"kafka-segments {args.command}: {exc}", file=sys.stderr)
    return EXIT_USAGE


def _listed_meanwhile(store: ObjectStore, *, full: bool = False) -> Callable[[], None]:
    """A local lake listed on a thread while the run loads its modules (numba's kernels among them, about a
    second) as the run will list it (``lake.tail_listing.warm_listing``; ``full``: the whole lake): the
    listing hashes every file it has not met (its etag: ``storage.local``), ~1 s per GB, which the run's own
    listing then finds done. Returns the wait for it (a failure is left to the run's own listing to
    raise)."""
    from kafka_segments.storage import LocalStore

    if not isinstance(store, LocalStore):
        return lambda: None
    thread = threading.Thread(target=_list_quietly, args=(store, full), name="local-listing", daemon=True)
    thread.start()
    return thread.join


def _list_quietly(store: ObjectStore, full: bool) -> None:
    from kafka_segments.lake.tail_listing import warm_listing

    with contextlib.suppress(Exception):
        warm_listing(store, full=full)


def _input_errors() -> tuple[type[Exception], ...]:
    from kafka_segments.config import ConfigError
    from kafka_segments.offsets.snapshot_fields import SnapshotFormatError
    from kafka_segments.retention.delete_records import DeleteRecordsFileError

    return (ConfigError, SnapshotFormatError, DeleteRecordsFileError)


def run_run(args: argparse.Namespace) -> int:
    return _retention(args, dry_run=args.dry_run)


def run_plan(args: argparse.Namespace) -> int:
    return _retention(args, dry_run=True)


def _retention(args: argparse.Namespace, *, dry_run: bool) -> int:
    from kafka_segments.cli.lake_cmds import open_lake

    if args.engine == "spark":
        from kafka_segments.cli.spark_engine import run_spark_engine

        return run_spark_engine(args, dry_run=dry_run)
    from kafka_segments.config import load_config

    try:
        config = load_config(args.config)
    except _input_errors() as exc:
        return _usage_error(args, exc)
    store = open_lake(args.lake)
    listed = _listed_meanwhile(store, full=args.full_listing)
    from kafka_segments.pipeline.report import render_text, run_to_dict
    from kafka_segments.pipeline.retention_run import run_retention

    try:
        listed()
        options = run_options(args, dry_run=dry_run)
        result = run_retention(store, config, options)
    except _input_errors() as exc:
        return _usage_error(args, exc)
    document = run_to_dict(result)
    if args.report:
        Path(args.report).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    emit(document, render_text(result), as_json=args.json)
    return run_exit(args.command, document)


def run_delete_records(args: argparse.Namespace) -> int:
    from kafka_segments.cli.lake_cmds import open_lake
    from kafka_segments.clock import wall_clock_ms
    from kafka_segments.config import Config, load_config
    from kafka_segments.offsets.snapshot_codec import load_snapshot_file
    from kafka_segments.pipeline.delete_records_run import delete_records, outcome_to_dict
    from kafka_segments.retention.delete_records import parse_delete_records

    try:
        path = Path(args.offset_json_file)
        requests = parse_delete_records(path.read_bytes(), location=str(path))
        config = Config.default() if args.config is None else load_config(args.config)
        snapshot = None if args.offsets is None else load_snapshot_file(args.offsets)
        store = open_lake(args.lake)
        outcome = delete_records(
            store,
            requests,
            config=config,
            now_ms=args.now if args.now is not None else wall_clock_ms(),
            snapshot=snapshot,
            dry_run=args.dry_run,
        )
    except _input_errors() as exc:
        print(f"kafka-segments delete-records: {exc}", file=sys.stderr)
        return EXIT_USAGE
    lines = ["Records delete operation completed:" if not args.dry_run else "Dry run (nothing changed):"]
    lines.extend(result.line() for result in outcome.results)
    for plan in outcome.plans:
        lines.extend(
            f"WARNING: {plan.topic_partition}: group {loss.group_id} (committed offset "
            f"{loss.committed_offset}) loses {loss.records} unread record(s)"
            for loss in plan.unread_loss
        )
    if outcome.committed_version is not None:
        lines.append(f"committed version {outcome.committed_version} (run {outcome.run_id})")
    emit(outcome_to_dict(outcome), "\n".join(lines), as_json=args.json)
    if outcome.failed:
        print(
            f"kafka-segments delete-records: {len(outcome.failed)} of {len(outcome.results)} partition(s) "
            "failed",
            file=sys.stderr,
        )
        return EXIT_PROBLEM
    return EXIT_OK
