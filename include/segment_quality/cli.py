"""``python -m segment_quality validate --lake L --run-id R [--config F] [--json]``. Exit codes: 0 passed; 1
failed validation (the run is rejected); 2 validation could not run."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence

from kafka_segments.config import Config, load_config
from kafka_segments.errors import KafkaSegmentsError
from kafka_segments.storage.uri import open_store

from segment_quality.results import ValidationReport
from segment_quality.validate import ValidationFailedError, validate_run

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
PROG = "python -m segment_quality"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Great Expectations validation of a staged kafka-segments run."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    validate = commands.add_parser(
        "validate",
        help="validate a staged run's output; reject the run when an expectation fails",
        description=(
            "Run the expectation suites over the staged output of a run (after its execute stage), store "
            "validation.json and a Data Docs site in the run's folder, and reject the run on failure."
        ),
    )
    validate.add_argument("--lake", required=True, help="the lake: s3://bucket/prefix or a local path")
    validate.add_argument("--run-id", required=True, help="the staged run to validate")
    validate.add_argument(
        "--config", default=None, help="the YAML configuration the run used (default: Kafka's defaults)"
    )
    validate.add_argument("--json", action="store_true", help="print validation.json on stdout")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # The verdict is printed below: keep Python's last-resort handler from printing the log record too.
    logging.getLogger("segment_quality").addHandler(logging.NullHandler())
    try:
        config = Config.default() if args.config is None else load_config(args.config)
        report = validate_run(open_store(args.lake), args.run_id, config=config)
    except ValidationFailedError as exc:
        if args.json and exc.report is not None:
            _print_json(exc.report)
        _fail(str(exc))
        return EXIT_FAILED
    except (KafkaSegmentsError, OSError, ValueError) as exc:
        _fail(str(exc))
        return EXIT_USAGE
    if args.json:
        _print_json(report)
    else:
        _out(report.summary())
        _out(f"result: {report.validation_location}")
        _out(f"Data Docs: {report.data_docs_location}")
        _out(f"readable offline: {report.page_location}")
    return EXIT_PASSED


def _print_json(report: ValidationReport) -> None:
    _out(json.dumps(report.to_document(), indent=2))


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")


def _fail(message: str) -> None:
    """One line on stderr (a message may span lines, e.g. every problem of a configuration file)."""
    sys.stderr.write(f"{PROG} validate: {' '.join(message.split())}\n")
