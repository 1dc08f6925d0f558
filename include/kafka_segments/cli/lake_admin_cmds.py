"""The lake commands that change it: ``adopt``, ``recover``, ``upgrade`` and ``gc`` (docs/lake.md). ``gc``
is a dry run unless ``--execute``. Each prints a report for people, or one JSON document with ``--json``."""

from __future__ import annotations

import argparse
import sys

from kafka_segments.cli.arguments import bounded_int
from kafka_segments.cli.common import (
    EXIT_OK,
    EXIT_PROBLEM,
    REPORT_JSON_HELP,
    Commands,
    add_json,
    add_lake,
    add_now,
)
from kafka_segments.cli.lake_cmds import open_lake
from kafka_segments.cli.output import emit
from kafka_segments.config.catalogue import DEFAULT_RETAIN_MANIFESTS, MIN_RUN_FOLDER_RETENTION_MS
from kafka_segments.state import MANIFEST_FORMAT_2


def run_adopt(args: argparse.Namespace) -> int:
    from kafka_segments.clock import wall_clock_ms
    from kafka_segments.lake.adopt_run import adopt
    from kafka_segments.lake.recover import recover

    store = open_lake(args.lake)
    now_ms = args.now if args.now is not None else wall_clock_ms()
    settled = recover(store)  # every run starts by settling interrupted work
    report = adopt(store, now_ms=now_ms, max_workers=args.workers)
    if args.json:  # streamed: a bootstrap's report holds its partitions in a temporary file
        report.write_json(sys.stdout, extra={"recover": settled.to_dict()})
        sys.stdout.write("\n")
    else:
        if settled.changed:
            sys.stdout.write(settled.to_text().rstrip("\n") + "\n\n")
        report.write_text(sys.stdout)
    quarantined = report.quarantined
    if quarantined:
        partitions = sorted({str(q.topic_partition) for q in quarantined})
        print(
            f"kafka-segments adopt: {len(partitions)} partition(s) quarantined: {', '.join(partitions)}",
            file=sys.stderr,
        )
        return EXIT_PROBLEM
    return EXIT_OK


def run_recover(args: argparse.Namespace) -> int:
    from kafka_segments.lake.recover import recover

    report = recover(open_lake(args.lake), abandon_after_ms=args.abandon_after_ms)
    emit(report.to_dict(), report.to_text(), as_json=args.json)
    return EXIT_OK


def run_upgrade(args: argparse.Namespace) -> int:
    from kafka_segments.lake.recover import recover
    from kafka_segments.lake.upgrade import upgrade

    store = open_lake(args.lake)
    recover(store)  # every change starts by settling interrupted work
    result = upgrade(store, to_format=args.format)
    emit(result.to_dict(), result.to_text(), as_json=args.json)
    return EXIT_OK


def run_gc(args: argparse.Namespace) -> int:
    from kafka_segments.lake.gc import collect_garbage

    report = collect_garbage(
        open_lake(args.lake),
        now_ms=args.now,
        dry_run=not args.execute,
        retain_manifests=args.retain_manifests,
        orphan_min_age_ms=args.orphan_min_age_ms,
        run_folder_retention_ms=args.run_folder_retention_ms,
        full=args.full,
    )
    emit(report.to_dict(), report.to_text(), as_json=args.json)
    if not report.ok:
        print(f"kafka-segments gc: {len(report.failures)} object(s) could not be deleted", file=sys.stderr)
        return EXIT_PROBLEM
    return EXIT_OK


non_negative_ms = bounded_int(
    minimum=0, what="a number of milliseconds", too_small="must be >= 0, not {value}"
)
"""A duration in milliseconds (an integer >= 0)."""

run_folder_retention_ms = bounded_int(
    minimum=MIN_RUN_FOLDER_RETENTION_MS,
    what="a number of milliseconds",
    too_small=(
        f"must be at least {MIN_RUN_FOLDER_RETENTION_MS} (1 hour; a run still writes its folder after it "
        "ends), not {value}"
    ),
)
"""A run folder retention (``gc --run-folder-retention-ms``)."""

positive_int = bounded_int(minimum=1, what="an integer", too_small="must be >= 1, not {value}")


def add_parsers(commands: Commands) -> None:
    """Add ``adopt``, ``recover``, ``upgrade`` and ``gc`` to the command line."""
    sub = commands.add_parser(
        "adopt",
        help="take in segments uploaded with Kafka's plain names (bootstraps a lake from a log directory)",
        description=(
            "Adopt every <topic>-<partition>/<20-digit offset>.log that no manifest knows yet: header scan "
            "with CRC checks, then one commit. A copied Kafka log directory's log-start-offset-checkpoint "
            "and cleaner-offset-checkpoint are taken on the first adoption. A corrupt, truncated or "
            "overlapping segment quarantines its partition (reported, exit code 1); the rest is committed."
        ),
    )
    add_lake(sub)
    add_now(sub, help="the run's time (epoch ms or ISO-8601)")
    sub.add_argument("--workers", type=positive_int, default=8, metavar="N", help="parallel reads")
    add_json(sub, help=REPORT_JSON_HELP)
    sub.set_defaults(handler=run_adopt)

    sub = commands.add_parser(
        "recover",
        help="finish or discard interrupted runs; rewrite stale checkpoint files",
        description=(
            "Settle every run without an outcome: finish a run that committed, discard the objects of a run "
            "that lost, fence and discard a run older than --abandon-after-ms that never committed; then "
            "make the checkpoint files at the lake root match the head manifest. Safe to run at any time."
        ),
    )
    add_lake(sub)
    sub.add_argument(
        "--abandon-after-ms",
        type=non_negative_ms,
        default=3_600_000,
        metavar="MS",
        help="a run that has not committed after this long is fenced and discarded (default 1 hour)",
    )
    add_json(sub, help=REPORT_JSON_HELP)
    sub.set_defaults(handler=run_recover)

    sub = commands.add_parser(
        "upgrade",
        help="commit the head again in manifest format 2 (a commit then writes only what it changed)",
        description=(
            "Commit the head version again, unchanged, in manifest format 2 (docs/metadata-format-2.md): "
            "a small root per version and immutable pieces per partition, so that each later commit "
            "writes only the partitions it changed. Any commit on a format 1 lake (a run, adopt, "
            "delete-records, recover) does this too; upgrade does it without other changes. Older "
            "versions stay readable; nothing else changes. On a format 2 lake there is nothing to do."
        ),
    )
    add_lake(sub)
    sub.add_argument(
        "--format", type=int, choices=[MANIFEST_FORMAT_2], default=MANIFEST_FORMAT_2, help="the format (2)"
    )
    add_json(sub, help=REPORT_JSON_HELP)
    sub.set_defaults(handler=run_upgrade)

    sub = commands.add_parser(
        "gc",
        help="delete superseded objects whose file.delete.delay.ms has passed (dry run unless --execute)",
        description=(
            "Delete segments that left the live set once their file.delete.delay.ms has passed and no "
            "retained manifest lists them, objects of failed runs older than --orphan-min-age-ms, and "
            "manifests beyond --retain-manifests. Without --execute it only reports what it would delete."
        ),
    )
    add_lake(sub)
    add_now(sub, help="compare delays with this time (default: now)")
    mode = sub.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", dest="execute", action="store_false", help="only report (the default)")
    mode.add_argument("--execute", dest="execute", action="store_true", help="really delete")
    sub.add_argument(
        "--retain-manifests",
        type=positive_int,
        default=DEFAULT_RETAIN_MANIFESTS,
        metavar="N",
        help=f"keep the N newest manifests and what they reference (default {DEFAULT_RETAIN_MANIFESTS})",
    )
    sub.add_argument(
        "--orphan-min-age-ms",
        type=non_negative_ms,
        default=3_600_000,
        metavar="MS",
        help="sweep objects of failed runs only once they are this old (default 1 hour)",
    )
    sub.add_argument(
        "--run-folder-retention-ms",
        type=run_folder_retention_ms,
        default=None,
        metavar="MS",
        help=(
            "also delete the folder (_kafka_segments/runs/<run id>/) of every run that ended and has not "
            "changed for MS, unless it committed a retained manifest "
            f"(at least {MIN_RUN_FOLDER_RETENTION_MS}, 1 hour; default: keep every run folder)"
        ),
    )
    sub.add_argument(
        "--full",
        action="store_true",
        help=(
            "list the whole lake (format 2 otherwise lists each partition's tail once a pass has recorded "
            "what it settled): finds objects of runs before that record and objects written by hand"
        ),
    )
    add_json(sub, help=REPORT_JSON_HELP)
    sub.set_defaults(handler=run_gc, execute=False)
