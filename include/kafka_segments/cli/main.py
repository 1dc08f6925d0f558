"""Entry point of ``kafka-segments``: parse arguments, dispatch to one command, map errors to exit codes.

Exit codes: 0 success; 1 the command ran and found a problem (e.g. corrupt data); 2 usage or input error.
Every failure prints a one-line reason on stderr; no stack traces for expected errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from kafka_segments import __version__
from kafka_segments.errors import (
    InvalidLakeUriError,
    InvalidRunIdError,
    InvalidTopicError,
    KafkaSegmentsError,
)
from kafka_segments.redaction import redact_uri

EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_USAGE = 2

Command = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-segments",
        description=(
            "Kafka log retention and compaction for Kafka log segments archived in an S3 data lake."
        ),
    )
    parser.add_argument("--version", action="version", version=f"kafka-segments {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_inspect(commands)
    _add_demo(commands)
    _add_lake_read_commands(commands)
    _add_lake_admin_commands(commands)
    _add_run_commands(commands)
    _add_offsets_commands(commands)
    _add_config_commands(commands)
    return parser


def _add_inspect(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kafka_segments.cli import inspect_cmd

    sub = commands.add_parser(
        "inspect",
        help="print a segment or index file like kafka-dump-log.sh",
        description=(
            "Print Kafka segment (.log) and index (.index, .timeindex, .txnindex) files like Kafka's "
            "kafka-dump-log.sh: one line per batch by default, records with --records, JSON with --json. "
            "Corruption is reported with its byte position and offset (exit code 1), never a crash."
        ),
    )
    sub.add_argument("files", nargs="+", metavar="FILE", help="segment or index files")
    sub.add_argument("--records", action="store_true", help="also print every record with key and payload")
    sub.add_argument("--json", action="store_true", help="one JSON document on stdout, for programs")
    sub.add_argument(
        "--no-verify-crc", dest="verify_crc", action="store_false", help="report CRCs but do not fail on them"
    )
    sub.set_defaults(handler=inspect_cmd.run)


def _add_demo(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kafka_segments.cli import demo_cmd

    sub = commands.add_parser(
        "demo",
        help="write a sample topic to an embedded S3 server, read it back and inspect it",
        description=(
            "The quick start's main job on the embedded default stack: start an S3 server on loopback, "
            "write a sample topic's segments into a lake bucket, read them back and print them with inspect."
        ),
    )
    sub.add_argument("--output", default=None, help="also keep the downloaded segments in this folder")
    sub.add_argument("--records", action="store_true", help="print every record, not only batches")
    sub.set_defaults(handler=demo_cmd.run)


def _add_lake_read_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kafka_segments.cli import lake_cmds
    from kafka_segments.cli.times import parse_time_ms

    lake_help = "the lake: s3://bucket/prefix or a local path (S3 settings from the standard AWS variables)"
    version_help = "read this committed manifest version instead of the head"
    sub = commands.add_parser(
        "describe",
        help="per partition: log start/end offset, segments, bytes, records, cleaner checkpoint",
        description=(
            "Describe the lake's committed state from its manifest: per partition the log start and end "
            "offsets, segments, bytes, records, the range of the segments' largest timestamps, the cleaner "
            "checkpoint, the last stable offset, open transactions and the run that last changed it. With "
            "--config: each compacted partition's first dirty and first uncleanable offsets, dirty ratio, "
            "compaction delay and what a run at --now would do, and consumed retention per partition."
        ),
    )
    sub.add_argument("--lake", required=True, help=lake_help)
    sub.add_argument(
        "--topic", dest="topics", action="extend", nargs="+", metavar="T", help="only these topics"
    )
    sub.add_argument("--version", type=lake_cmds.positive_version, metavar="N", help=version_help)
    sub.add_argument(
        "--config",
        metavar="F",
        help=(
            "also show compaction (dirty ratio, compaction delay, the next run's verdict) and consumed "
            "retention (M, the group holding it back) per partition"
        ),
    )
    sub.add_argument(
        "--offsets", metavar="SNAPSHOT.json", help="with --config: the offsets (default: pinned)"
    )
    sub.add_argument(
        "--now",
        type=parse_time_ms,
        metavar="T",
        help="with --config: the time of the compaction and retention views (default: now)",
    )
    sub.add_argument("--json", action="store_true", help="one JSON document on stdout, for programs")
    sub.set_defaults(handler=lake_cmds.run_describe)

    sub = commands.add_parser(
        "dump",
        help="print a partition's visible records with their batches, like kafka-dump-log.sh",
        description=(
            "Print the committed records of one partition at offsets >= its log start offset, one line per "
            "batch with its metadata and one per record (kafka-dump-log.sh --print-data-log's format)."
        ),
    )
    sub.add_argument("--lake", required=True, help=lake_help)
    sub.add_argument("--topic", required=True, metavar="T")
    sub.add_argument("--partition", required=True, type=int, metavar="P")
    sub.add_argument("--version", type=lake_cmds.positive_version, metavar="N", help=version_help)
    sub.add_argument("--json", action="store_true", help="one JSON document on stdout, for programs")
    sub.set_defaults(handler=lake_cmds.run_dump)

    sub = commands.add_parser(
        "export",
        help="write the committed state as a plain Kafka log directory",
        description=(
            "Write the committed state as a Kafka log directory: <topic>-<partition>/<base>.log with "
            "indexes rebuilt from the log, and log-start-offset-checkpoint and cleaner-offset-checkpoint. "
            "The target must be new or empty."
        ),
    )
    sub.add_argument("--lake", required=True, help=lake_help)
    sub.add_argument("--to", required=True, metavar="DIR", help="a new or empty directory")
    sub.add_argument("--version", type=lake_cmds.positive_version, metavar="N", help=version_help)
    sub.add_argument("--json", action="store_true", help="print the report as one JSON document")
    sub.set_defaults(handler=lake_cmds.run_export)


def _add_lake_admin_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kafka_segments.cli import lake_admin_cmds

    lake_admin_cmds.add_parsers(commands)


def _add_run_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kafka_segments.cli import run_cmds

    run_cmds.add_parsers(commands)


def _add_offsets_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kafka_segments.cli import offsets_cmd

    offsets_cmd.add_parsers(commands)


def _add_config_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from kafka_segments.cli import config_cmd

    config_cmd.add_parsers(commands)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Command | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return handler(args)
    except (InvalidLakeUriError, InvalidTopicError, InvalidRunIdError) as exc:
        print(f"kafka-segments {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KafkaSegmentsError as exc:
        print(f"kafka-segments {args.command}: {exc}", file=sys.stderr)
        return EXIT_PROBLEM
    except (OSError, ValueError) as exc:
        print(f"kafka-segments {args.command}: {redact_uri(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"kafka-segments {args.command}: interrupted", file=sys.stderr)
        return 130
