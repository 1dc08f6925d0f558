"""``kafka-segments tables sync --lake L [--topics T ...] [--catalog NAME=VALUE ...] [--execute] [--json]``
(docs/tables.md): bring each topic's Iceberg table to the lake's head, one line per version published or
skipped. Exit 0; errors as every command's (one line, exit 1 or 2)."""

from __future__ import annotations

import argparse
import sys

from kafka_segments.cli.common import EXIT_OK, EXIT_USAGE, Commands, add_config, add_json, add_lake
from kafka_segments.cli.lake_admin_cmds import non_negative_ms
from kafka_segments.cli.output import print_json
from kafka_segments.tables.orphans import DEFAULT_MIN_AGE_MS


def run_sync(args: argparse.Namespace) -> int:
    from kafka_segments.config import load_config
    from kafka_segments.tables import CatalogSettings, sync_tables

    settings = CatalogSettings.from_pairs(args.catalog) if args.catalog else None
    config = load_config(args.config) if args.config else None
    report = sync_tables(
        args.lake,
        topics=args.topics,
        catalog=settings,
        namespace=args.namespace,
        config=config,
        delete_files=args.execute,
        file_min_age_ms=args.orphan_min_age_ms,
    )
    if args.json:
        print_json(report.to_json())
    else:
        for line in report.lines():
            print(line)
    return EXIT_OK


def add_parsers(commands: Commands) -> None:
    """Add ``tables`` (with its action ``sync``) to the command line."""
    tables = commands.add_parser(
        "tables",
        help="the topics as Apache Iceberg tables: bring them to the lake's head",
        description="Each topic's committed log as an Iceberg table (docs/tables.md).",
    )
    actions = tables.add_subparsers(dest="tables_action", metavar="ACTION")
    sync = actions.add_parser(
        "sync",
        help="bring each topic's table to the lake's head, version by version",
        description=(
            "Publish every lake version after the one each table shows: the partitions a version changed "
            "get the Parquet files of their new segments and lose those of the segments it removed, in one "
            "Iceberg snapshot recording the version. A second sync changes nothing; versions gc removed "
            "are skipped with one line."
        ),
    )
    add_lake(sync)
    sync.add_argument(
        "--topics",
        nargs="+",
        metavar="T",
        help=(
            "the topics (default: with --config, those with kafka_segments.table.enable; else every topic "
            "but Kafka's internal ones)"
        ),
    )
    add_config(
        sync,
        required=False,
        help="the YAML configuration: the kafka_segments.table.* settings (docs/configuration.md)",
    )
    sync.add_argument(
        "--catalog",
        action="append",
        metavar="NAME=VALUE",
        help=(
            "a pyiceberg catalog property, repeatable (type=rest, uri=..., warehouse=...); default: "
            "kafka_segments.table.catalog of --config, else the catalog kept inside the lake, in its "
            "_kafka_segments/tables/catalog/ (type=lake)"
        ),
    )
    sync.add_argument(
        "--namespace", help="the tables' namespace (default: kafka_segments.table.namespace, kafka_segments)"
    )
    sync.add_argument(
        "--execute",
        action="store_true",
        help=(
            "also delete each table's files no kept snapshot references (of expired snapshots, of syncs "
            "that did not commit); default: only report them"
        ),
    )
    sync.add_argument(
        "--orphan-min-age-ms",
        type=non_negative_ms,
        default=DEFAULT_MIN_AGE_MS,
        metavar="MS",
        help="delete an unreferenced file only once it is this old (default 1 hour, as gc's)",
    )
    add_json(sync)
    sync.set_defaults(handler=run_sync)

    def usage(_: argparse.Namespace) -> int:
        tables.print_usage(sys.stderr)
        print("kafka-segments tables: choose an action: sync", file=sys.stderr)
        return EXIT_USAGE

    tables.set_defaults(handler=usage)
