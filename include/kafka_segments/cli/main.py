"""Entry point of ``kafka-segments``: assemble the commands, dispatch to one, map errors to exit codes.

Each command module adds its own parser(s) (``add_parsers``) and handler; the exit codes and the options
several commands share are in ``cli/common.py``. Every failure prints a one-line reason on stderr; no stack
traces for expected errors."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Protocol

from kafka_segments import __version__
from kafka_segments.cli import (
    config_cmd,
    demo_cmd,
    inspect_cmd,
    lake_admin_cmds,
    lake_cmds,
    offsets_cmd,
    run_cmds,
    tables_cmd,
)
from kafka_segments.cli.common import EXIT_INTERRUPTED, EXIT_PROBLEM, EXIT_USAGE, Commands
from kafka_segments.errors import INPUT_ERRORS, KafkaSegmentsError
from kafka_segments.progress import TerminalReporter, reporting, terminal_reporter
from kafka_segments.redaction import redact_uri


class CommandModule(Protocol):
    """A command module: adds its command(s) to ``kafka-segments`` with their handlers."""

    def add_parsers(self, commands: Commands) -> None: ...


COMMAND_MODULES: tuple[CommandModule, ...] = (
    inspect_cmd,  # inspect
    demo_cmd,  # demo
    lake_cmds,  # describe, dump, export
    lake_admin_cmds,  # adopt, recover, gc
    run_cmds,  # run, plan, delete-records
    offsets_cmd,  # offsets snapshot
    config_cmd,  # config check
    tables_cmd,  # tables sync
)
"""The command modules, in the order ``kafka-segments --help`` lists their commands."""

Command = Callable[[argparse.Namespace], int]

PROGRESS_COMMANDS = frozenset({"run", "plan", "adopt", "export", "gc", "demo"})
"""The commands that show progress on a terminal (``kafka_segments.progress``), unless ``--json`` is given."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafka-segments",
        description=(
            "Kafka log retention and compaction for Kafka log segments archived in an S3 data lake."
        ),
    )
    parser.add_argument("--version", action="version", version=f"kafka-segments {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.add_parsers(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Command | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        with reporting(_progress_reporter(args)):
            return handler(args)
    except INPUT_ERRORS as exc:
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
        return EXIT_INTERRUPTED


def _progress_reporter(args: argparse.Namespace) -> TerminalReporter | None:
    if args.command not in PROGRESS_COMMANDS:
        return None
    return terminal_reporter(sys.stderr, label=args.command, quiet=bool(getattr(args, "json", False)))
