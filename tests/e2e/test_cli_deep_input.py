"""Input files nested thousands of levels deep, given to the command line: a named input error (exit 2, one
line naming the file and the problem), never a ``RecursionError`` traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_harness import cli

pytestmark = pytest.mark.e2e

DEEP_YAML = "broker:\n  log.retention.hours: " + "[" * 1300 + "]" * 1300 + "\n"


def assert_named_input_error(done: subprocess.CompletedProcess[str], path: Path) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    (line,) = done.stderr.splitlines()
    assert str(path) in line
    assert "nested deeper than 100 levels of lists and objects" in line


def test_config_check_refuses_a_deeply_nested_file(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(DEEP_YAML)
    assert_named_input_error(cli("config", "check", str(path)), path)


def test_run_refuses_a_deeply_nested_config_before_any_work(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(DEEP_YAML)
    lake = tmp_path / "lake"
    done = cli("run", "--lake", str(lake), "--config", str(path), "--engine", "inline")
    assert_named_input_error(done, path)
    assert not lake.exists()


def test_delete_records_refuses_a_deeply_nested_offset_json_file(tmp_path: Path) -> None:
    path = tmp_path / "delete.json"
    path.write_text("[" * 100_000)
    lake = tmp_path / "lake"
    done = cli("delete-records", "--lake", str(lake), "--offset-json-file", str(path))
    assert_named_input_error(done, path)
    assert not lake.exists()
