"""scripts/setup explains a wrong Python or Java in one line instead of failing later with a stack trace."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

SETUP = Path(__file__).resolve().parents[2] / "scripts" / "setup"


def run_setup(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SETUP), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=600,
        check=False,
    )


def test_wrong_python_gets_one_line(tmp_path: Path) -> None:
    fake = tmp_path / "python3.10"
    fake.write_text("#!/bin/sh\necho 'Python 3.10.4'\nexit 1\n")
    fake.chmod(0o755)
    result = run_setup({"PYTHON": str(fake)})
    assert result.returncode == 1
    assert result.stderr.strip() == f"setup: Python 3.11 is required, but PYTHON={fake} is Python 3.10.4"


def test_old_java_gets_one_line(tmp_path: Path) -> None:
    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    fake.chmod(0o755)
    result = run_setup({"PATH": f"{tmp_path}:{os.environ['PATH']}"})
    assert result.returncode == 1
    assert (
        result.stderr.strip() == "setup: Java 17 or newer is required for Spark; 'java' on PATH is version 11"
    )


def test_second_run_is_a_fast_no_op() -> None:
    first = run_setup({})
    assert first.returncode == 0, first.stderr
    second = run_setup({})
    assert second.returncode == 0
    assert second.stderr == ""
    packages = run_setup({}, "--packages")  # the first of its two steps (scripts/test), also done
    assert (packages.returncode, packages.stderr) == (0, "")


def test_an_unknown_argument_gets_its_usage() -> None:
    result = run_setup({}, "--kernels")
    assert (result.returncode, result.stderr.strip()) == (1, "setup: usage: scripts/setup [--packages]")


def test_missing_java_gets_one_line(tmp_path: Path) -> None:
    # a PATH with the shell tools setup uses, but no java
    for tool in ("bash", "sed", "head", "cat", "sha256sum", "cut", "dirname"):
        found = shutil.which(tool)
        assert found is not None
        (tmp_path / tool).symlink_to(found)
    result = run_setup({"PATH": str(tmp_path), "PYTHON": sys.executable})
    assert result.returncode == 1
    assert result.stderr.strip().startswith(
        "setup: Java 17 or newer is required for Spark and no 'java' is on PATH"
    )
