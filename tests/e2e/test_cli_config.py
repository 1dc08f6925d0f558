"""``kafka-segments config check FILE [--json]`` as a user runs it: output, problems and exit codes."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path

import pytest
from cli_harness import cli
from kafka_segments.cli import config_cmd

pytestmark = pytest.mark.e2e

CONTRACT_EXAMPLE = """\
broker:                    # Kafka broker config names (log.retention.hours, log.cleaner.*, …)
  log.retention.hours: 168
  log.retention.commitoffset.enable: true
  log.retention.commitoffset.hours: 72
topics:                    # Kafka topic config names (retention.ms, cleanup.policy, …)
  customers:
    cleanup.policy: compact
    delete.retention.ms: 86400000
  clickstream:
    retention.commitoffset.enable: true
    retention.commitoffset.ms: 259200000
"""

BROKEN = """\
broker:
  log.retention.hours: 0
  log.retention.minuts: 5
topics:
  clickstream:
    retention.ms: 1000
    retention.commitoffset.enable: true
"""


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Parse ``argv`` with a parser that has only ``config`` (from ``add_parsers``) and run its handler."""
    parser = argparse.ArgumentParser(prog="kafka-segments")
    config_cmd.add_parsers(parser.add_subparsers(dest="command", metavar="COMMAND"))
    args = parser.parse_args(argv)
    code = args.handler(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def example(tmp_path: Path) -> Path:
    path = tmp_path / "retention.yaml"
    path.write_text(CONTRACT_EXAMPLE, encoding="utf-8")
    return path


def test_contract_example_is_valid_and_every_setting_shows_its_source(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["config", "check", str(example)], capsys)

    assert code == 0
    assert err == ""
    assert out.splitlines()[0] == f"configuration: {example} (valid)"
    sections = out.split("\n\n")
    assert [section.splitlines()[0] for section in sections[1:]] == [
        "(broker defaults)",
        "topic customers",
        "topic clickstream",
    ]
    customers = sections[2].splitlines()
    assert customers[1].split() == ["cleanup.policy", "compact", "topic"]
    assert ["retention.ms", "604800000", "broker:", "log.retention.hours"] in [
        line.split() for line in customers
    ]
    clickstream = [line.split() for line in sections[3].splitlines()]
    assert ["retention.commitoffset.ms", "259200000", "topic"] in clickstream
    broker = [line.split() for line in sections[1].splitlines()]
    assert ["retention.commitoffset.ms", "259200000", "broker:", "log.retention.commitoffset.hours"] in broker
    assert ["offsets.retention.minutes", "10080", "default"] in broker
    assert "problem:" not in out


def test_problems_are_printed_as_lines_and_the_exit_code_is_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN, encoding="utf-8")

    code, out, err = run(["config", "check", str(path)], capsys)

    assert code == 2
    problems = [line for line in out.splitlines() if line.startswith("problem: ")]
    assert [line.split(": ")[1] for line in problems] == [
        "broker.log.retention.hours",
        "broker.log.retention.minuts",
        "topics.clickstream.retention.commitoffset.enable",
    ]
    assert problems[1].startswith("problem: broker.log.retention.minuts: 5: unknown broker setting")
    assert "did you mean log.retention.minutes?" in problems[1]
    assert len(err.splitlines()) == 1
    assert err.startswith(f"kafka-segments config check: {path}: 3 problems")


def test_json_report(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["config", "check", str(example), "--json"], capsys)

    assert code == 0
    document = json.loads(out)
    assert document["valid"] is True
    assert document["source"] == str(example)
    assert document["problems"] == []
    assert document["broker_defaults"]["cleanup.policy"] == {"value": ["delete"], "source": "default"}
    assert document["topics"]["customers"]["cleanup.policy"] == {"value": ["compact"], "source": "topic"}
    assert document["topics"]["clickstream"]["retention.commitoffset.enable"]["value"] is True
    assert list(document["topics"]) == ["customers", "clickstream"]


def test_json_report_of_an_invalid_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN, encoding="utf-8")

    code, out, err = run(["config", "check", str(path), "--json"], capsys)

    assert code == 2
    document = json.loads(out)
    assert document["valid"] is False
    first = document["problems"][0]
    assert first["key"] == "broker.log.retention.hours"
    assert first["value"] == "0"
    assert first["line"] == 2
    assert "must be unlimited" in first["rule"]
    assert err.count("\n") == 1


def test_malformed_yaml_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("broker:\n  log.retention.hours: [1\n", encoding="utf-8")

    code, out, err = run(["config", "check", str(path)], capsys)

    assert code == 2
    assert "problem: (file): line 3: not valid YAML at line 3" in out
    assert "(broker defaults)" not in out
    assert "1 problem" in err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["config", "check", str(tmp_path / "nope.yaml")], capsys)

    assert code == 2
    assert "cannot read the configuration file" in out
    assert len(err.splitlines()) == 1


def test_config_without_an_action_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["config"], capsys)

    assert code == 2
    assert "usage: kafka-segments config" in err


def _main_has_config() -> bool:
    """Whether the lead wired ``config`` into ``kafka_segments.cli.main`` yet."""
    from kafka_segments.cli.main import build_parser

    with contextlib.redirect_stderr(io.StringIO()):
        try:
            build_parser().parse_args(["config", "check", "x.yaml"])
        except SystemExit:
            return False
    return True


@pytest.mark.skipif(not _main_has_config(), reason="config is not wired into kafka_segments.cli.main yet")
def test_console_script(example: Path) -> None:
    done = cli("config", "check", str(example))
    assert done.returncode == 0, done.stderr
    assert "topic customers" in done.stdout


def test_the_documented_example_is_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
    example = docs.read_text(encoding="utf-8").split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "documented.yaml"
    path.write_text(example, encoding="utf-8")

    code, out, err = run(["config", "check", str(path), "--json"], capsys)

    assert (code, err) == (0, "")
    topics = json.loads(out)["topics"]
    assert topics["clickstream"]["kafka_segments.consumed.required.groups"]["value"] == ["billing", "fraud"]
    assert topics["audit"]["retention.commitoffset.enable"] == {"value": False, "source": "topic"}
