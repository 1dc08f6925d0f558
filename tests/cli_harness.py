"""The ``kafka-segments`` command as the tests run it: ``cli`` starts the console script of this environment
as a process (what a user runs), ``cli_in_process`` calls ``cli.main.main`` (what the console script calls)
when a process per command costs too much. Both answer with the exit status and the captured output."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

CLI = Path(sys.executable).parent / "kafka-segments"
"""The console script ``pip install`` made for this environment."""


def cli(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 180, console_script: bool = True
) -> subprocess.CompletedProcess[str]:
    """``kafka-segments ARGS`` as a process (with ``console_script=False``: ``python -m kafka_segments``), in
    ``env`` (the whole environment; None: this process's), its output captured; killed after ``timeout`` s."""
    command = [str(CLI)] if console_script else [sys.executable, "-m", "kafka_segments"]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=timeout, check=False, env=env
    )


def cli_in_process(*args: str, aws: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """``kafka-segments ARGS`` in this process, with ``aws`` as the whole of its AWS environment (every other
    ``AWS_*`` variable unset meanwhile). stderr is captured whole: an exception escaping ``main`` fails the
    test as a traceback would, and log records reach it as Python's last-resort handler would write them
    (``WARNING`` and up)."""
    from kafka_segments.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    handler = logging.StreamHandler(err)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out):
        for name in [name for name in os.environ if name.startswith("AWS_")]:
            patch.delenv(name)
        for name, value in aws.items():
            patch.setenv(name, value)
        root.addHandler(handler)
        try:
            with contextlib.redirect_stderr(err):
                status = main(list(args))
        finally:
            root.removeHandler(handler)
    return subprocess.CompletedProcess(["kafka-segments", *args], status, out.getvalue(), err.getvalue())
