"""The README's commands on the demo lake and docs/reading.md's Spark job run exactly as printed: each is
taken from its document, not copied here, and run from a folder laid out as the project's (its ``.venv``
and ``config``), as a user runs them after ``./scripts/setup``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from spark_startup import with_quick_jvm

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(sys.executable).parent.parent
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def code_block(document: Path, *, language: str, containing: str) -> str:
    """The one fenced block of ``language`` in ``document`` that contains ``containing``."""
    blocks = [
        body
        for lang, body in FENCE.findall(document.read_text(encoding="utf-8"))
        if lang == language and containing in body
    ]
    assert len(blocks) == 1, f"{document.name}: {len(blocks)} {language} blocks contain {containing!r}"
    return str(blocks[0])


def project_like(folder: Path) -> Path:
    """``folder`` with the project's ``.venv`` and ``config`` linked in: where the documents' commands run."""
    (folder / ".venv").symlink_to(VENV, target_is_directory=True)
    (folder / "config").symlink_to(ROOT / "config", target_is_directory=True)
    return folder


def user_env(cache: Path) -> dict[str, str]:
    """A user's shell: the venv not on PATH (so Spark's workers would find another ``python3``), the tests'
    kernel cache and quick JVM."""
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not p.startswith(str(VENV)))
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYSPARK_PYTHON"}}
    return with_quick_jvm({**env, "PATH": path, "KAFKA_SEGMENTS_CACHE_DIR": str(cache)})


def run_block(block: str, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_readme_commands_run_on_the_demo_lake(tmp_path: Path, kafka_segments_cache: Path) -> None:
    block = code_block(ROOT / "README.md", language="bash", containing="demo --lake demo-lake")
    folder = project_like(tmp_path)
    done = run_block(block, folder, user_env(kafka_segments_cache))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "demo lake built in" in done.stdout
    assert "dry run at now=" in done.stdout  # plan
    assert "committed version 2" in done.stdout  # run: the first run deletes
    assert "customers: table kafka_segments.customers created" in done.stdout  # tables sync
    assert "customers_latest: table kafka_segments.customers_latest created" in done.stdout
    for made in ("lake.html", "report.json", "demo-export/customers-0/00000000000000000000.log"):
        assert (folder / made).is_file(), made


@pytest.mark.spark
def test_the_reading_example_runs_as_printed(tmp_path: Path, kafka_segments_cache: Path) -> None:
    job = code_block(ROOT / "docs" / "reading.md", language="python", containing="SparkSession")
    folder = project_like(tmp_path)
    env = user_env(kafka_segments_cache)
    lake = run_block(".venv/bin/kafka-segments demo --lake demo-lake", folder, env)
    assert lake.returncode == 0, lake.stderr
    (folder / "job.py").write_text(job, encoding="utf-8")
    done = run_block(".venv/bin/python job.py", folder, env)
    assert done.returncode == 0, done.stderr[-3000:]
    counts = re.findall(r"^\|\s*(\d+)\|\s*(\d+)\|$", done.stdout, re.MULTILINE)
    assert [partition for partition, _count in counts] == ["0", "1", "2"], done.stdout
    assert all(int(count) > 0 for _partition, count in counts)
