"""``kafka-segments config check FILE [--json]`` (docs/configuration.md): every effective setting with its
source, then one ``problem: <key>: <value>: <rule>`` line per problem. Exit 0 when valid, 2 otherwise."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kafka_segments.cli.common import EXIT_OK, EXIT_USAGE, Commands, add_json
from kafka_segments.cli.output import print_json
from kafka_segments.config import ConfigCheck, EffectiveSetting, check_config
from kafka_segments.config.effective import read_config_text
from kafka_segments.config.problems import ConfigError

BROKER_DEFAULTS = "(broker defaults)"
_NAME_WIDTH = 41
_VALUE_WIDTH = 21


def run_check(args: argparse.Namespace) -> int:
    """Check ``args.file``; print the effective configuration and the problems."""
    try:
        check = check_config(read_config_text(args.file), source=args.file)
    except ConfigError as exc:
        check = ConfigCheck(args.file, None, exc.problems)
    if args.json:
        print_json(check_document(check))
    else:
        sys.stdout.write(check_text(check))
    if check.ok:
        return EXIT_OK
    count = len(check.problems)
    print(
        f"kafka-segments config check: {args.file}: {count} problem{'s' if count > 1 else ''} "
        f"(first: {check.problems[0].message})",
        file=sys.stderr,
    )
    return EXIT_USAGE


def check_text(check: ConfigCheck) -> str:
    """The human-readable report."""
    count = len(check.problems)
    verdict = "valid" if check.ok else f"invalid: {count} problem{'s' if count > 1 else ''}"
    lines = [f"configuration: {check.source} ({verdict})"]
    if check.config is not None:
        for title, topic in [(BROKER_DEFAULTS, None), *((f"topic {t}", t) for t in check.config.topics)]:
            lines.extend(["", title])
            lines.extend(_setting_line(setting) for setting in check.config.settings(topic))
    if check.problems:
        lines.append("")
        lines.extend(problem.as_line() for problem in check.problems)
    return "\n".join(lines) + "\n"


def _setting_line(setting: EffectiveSetting) -> str:
    value = display_value(setting.value)
    return f"  {setting.name:<{_NAME_WIDTH}} {value:<{_VALUE_WIDTH}} {setting.source}".rstrip()


def display_value(value: object) -> str:
    """Kafka's ``ConfigDef.convertToString``: lists comma-joined; ``""`` for an empty list, ``null`` unset."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value) if value else '""'
    return str(value)


def check_document(check: ConfigCheck) -> dict[str, Any]:
    """The JSON report: ``source``, ``valid``, ``broker_defaults``, ``topics`` and ``problems``."""
    document: dict[str, Any] = {"source": check.source, "valid": check.ok}
    if check.config is None:
        document["broker_defaults"] = None
        document["topics"] = None
    else:
        document["broker_defaults"] = _settings_document(check.config.settings(None))
        document["topics"] = {
            topic: _settings_document(check.config.settings(topic)) for topic in check.config.topics
        }
    document["problems"] = [problem.to_dict() for problem in check.problems]
    return document


def _settings_document(settings: tuple[EffectiveSetting, ...]) -> dict[str, Any]:
    return {
        setting.name: {
            "value": list(setting.value) if isinstance(setting.value, tuple) else setting.value,
            "source": setting.source,
        }
        for setting in settings
    }


def add_parsers(commands: Commands) -> None:
    """Add ``config`` (with its action ``check``) to the command line."""
    config = commands.add_parser(
        "config",
        help="check a configuration file: the effective settings per topic and every problem",
        description="The YAML configuration file: Kafka's setting names (see docs/configuration.md).",
    )
    actions = config.add_subparsers(dest="config_action", metavar="ACTION")
    check = actions.add_parser(
        "check",
        help="print the effective configuration per topic and every problem (exit 2 if any)",
        description=(
            "Validate FILE before any work: unknown names, wrong types, out-of-range values and conflicts "
            "between settings are all reported, each with its key, value and rule. Prints every setting's "
            "effective value and source for the broker defaults and for each topic the file names. "
            "Exit 0 when valid, 2 when there are problems."
        ),
    )
    check.add_argument("file", metavar="FILE", help="the YAML configuration file")
    add_json(check)
    check.set_defaults(handler=run_check)

    def usage(_: argparse.Namespace) -> int:
        config.print_usage(sys.stderr)
        print("kafka-segments config: choose an action: check", file=sys.stderr)
        return EXIT_USAGE

    config.set_defaults(handler=usage)
