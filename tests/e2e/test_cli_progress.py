"""Progress on long work (issue 24, point 4): ``run``, ``export`` ... redraw a progress line on stderr when it
is a terminal (a pseudo-terminal here), and show none when it is not or with ``--json``."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

import pytest
from cli_harness import CLI, cli
from kafka_segments.storage import LocalStore
from kit import T0
from lake.retention_helpers import upload_fifteen_records

pytestmark = pytest.mark.e2e

REDRAW = "\r\x1b[K"


def _on_terminal(*args: str) -> str:
    """What the command writes on its stderr, a pseudo-terminal (stdout is a pipe)."""
    main, child = pty.openpty()
    with subprocess.Popen([str(CLI), *args], stdout=subprocess.PIPE, stderr=child) as process:
        os.close(child)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65_536)
            except OSError:  # EIO: every end of the terminal is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.communicate(timeout=180)
    os.close(main)
    assert process.returncode == 0, b"".join(chunks).decode()
    return b"".join(chunks).decode()


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    root = tmp_path / "lake"
    upload_fifteen_records(LocalStore(root), ts=10)
    return root


@pytest.fixture
def config(tmp_path: Path) -> str:
    path = tmp_path / "kafka-segments.yaml"
    path.write_text("topics:\n  t:\n    retention.ms: 10000\n")
    return str(path)


def test_run_and_export_show_progress_on_a_terminal(lake: Path, config: str, tmp_path: Path) -> None:
    shown = _on_terminal("run", "--lake", str(lake), "--config", config, "--now", str(T0))

    assert f"{REDRAW}[run] adopt: reading new segments: 3/3 segments, " in shown
    reading = shown.split(f"{REDRAW}[run] adopt: reading new segments: 3/3 segments, ")[-1].splitlines()[0]
    assert "B/" in reading  # bytes done of the total
    assert "/s" in reading  # the rate

    exported = _on_terminal("export", "--lake", str(lake), "--to", str(tmp_path / "out"))

    assert f"{REDRAW}[export] export: 0/1 partitions" in exported  # the start, drawn at once
    assert f"{REDRAW}[export] export: 1/1 partitions, " in exported


def test_no_progress_with_json_or_off_a_terminal(lake: Path, config: str) -> None:
    on_terminal = _on_terminal("plan", "--lake", str(lake), "--config", config, "--now", str(T0), "--json")
    piped = cli("run", "--lake", str(lake), "--config", config, "--now", str(T0))

    assert REDRAW not in on_terminal
    assert "reading new segments: " not in on_terminal
    assert piped.returncode == 0, piped.stderr
    assert REDRAW not in piped.stderr
    assert "reading new segments: " not in piped.stderr
    assert "[run] adopt: listing the lake" in piped.stderr  # the step lines stay, as before
