"""The two sides of a comparison, each on its own copy of the same input: Kafka's code (the launcher named by
``KAFKA_ORACLE``: ``oracle clean`` / ``oracle dump``) and the product through its command line, in process
(``kafka-segments adopt``, ``run``, ``export``: what a user runs, without a Python start per call)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafka_segments.cli.main import main as kafka_segments
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.storage import LocalStore
from kafka_segments.topic_partition import TopicPartition

from fidelity.generator import Case, Round

TOPIC = "t"
PARTITION = f"{TOPIC}-0"
ORACLE_ENV = "KAFKA_ORACLE"
CHECKPOINT_FILES = ("cleaner-offset-checkpoint", "log-start-offset-checkpoint")


class SideError(RuntimeError):
    """One side failed to run (the command, its exit status and what it printed)."""


def oracle_launcher() -> str | None:
    """The launcher named by ``KAFKA_ORACLE`` when it is an executable file."""
    launcher = os.environ.get(ORACLE_ENV, "")
    return launcher if launcher and os.access(launcher, os.X_OK) else None


def checkpoint_text(offset: int) -> str:
    """Kafka's checkpoint file format (``CheckpointFile``): version 0, one entry."""
    return f"0\n1\n{TOPIC} 0 {offset}\n"


def write_start(case: Case, log_dir: Path) -> None:
    """The log directory's checkpoint files, as a copied broker log dir would have them."""
    log_dir.mkdir(parents=True, exist_ok=True)
    if case.log_start_offset is not None:
        (log_dir / "log-start-offset-checkpoint").write_text(checkpoint_text(case.log_start_offset))
    if case.cleaner_checkpoint is not None:
        (log_dir / "cleaner-offset-checkpoint").write_text(checkpoint_text(case.cleaner_checkpoint))


def write_round(round_: Round, partition_dir: Path) -> None:
    """The round's new segments into ``partition_dir`` with the round's mtime. An empty segment file of the
    same name (the active segment Kafka rolls when retention deleted every segment) is replaced."""
    partition_dir.mkdir(parents=True, exist_ok=True)
    for base, data in round_.segments:
        path = partition_dir / f"{base:020d}.log"
        if path.exists() and path.stat().st_size:
            raise SideError(f"{path} already holds data")
        path.write_bytes(data)
        os.utime(path, (round_.mtime_s, round_.mtime_s))


def config_yaml(case: Case) -> str:
    """The product's configuration for the case's topic properties (small segments through
    ``internal.segment.bytes``, as Kafka 4.1 asks for them)."""
    lines = (
        []
        if case.dedupe_buffer_size is None
        else ["broker:", f"  log.cleaner.dedupe.buffer.size: {case.dedupe_buffer_size}"]
    )
    lines += ["topics:", f"  {TOPIC}:"]
    for name, value in case.props.items():
        key = "internal.segment.bytes" if name == "segment.bytes" else name
        lines.append(f"    {key}: {json.dumps(value) if name == 'cleanup.policy' else value}")
    return "\n".join(lines) + "\n"


def _oracle(launcher: str, args: list[str], cwd: Path) -> dict[str, Any]:
    done = subprocess.run([launcher, *args], capture_output=True, text=True, cwd=cwd, check=False)
    if done.returncode != 0:
        raise SideError(f"{launcher} {' '.join(args)} exited {done.returncode}: {done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def oracle_clean(launcher: str, case: Case, log_dir: Path, now: int, *, root: Path) -> dict[str, Any]:
    """One ``oracle clean`` on ``log_dir`` (modified in place) at ``now``."""
    props = [arg for name, value in case.props.items() for arg in ("--prop", f"{name}={value}")]
    if case.dedupe_buffer_size is not None:
        props += ["--dedupe-buffer-size", str(case.dedupe_buffer_size)]
    args = ["clean", "--log-dir", str(log_dir), "--partition", PARTITION, "--now", str(now), *props]
    return _oracle(launcher, args, root)


def oracle_dump(launcher: str, log_dir: Path, *, root: Path) -> list[dict[str, Any]]:
    """Every segment of ``log_dir``'s partition decoded by Kafka's ``FileRecords``."""
    segments: list[dict[str, Any]] = _oracle(
        launcher, ["dump", "--log-dir", str(log_dir), "--partition", PARTITION], root
    )["segments"]
    return segments


def _cli(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = kafka_segments(list(argv))
    if status != 0:
        said = (out.getvalue() + err.getvalue())[-3000:]
        raise SideError(f"kafka-segments {' '.join(argv)} exited {status}: {said}")
    return out.getvalue()


def product_adopt(lake: Path, now: int) -> None:
    _cli("adopt", "--lake", str(lake), "--now", str(now), "--json")


def product_run(lake: Path, config: Path, now: int, report: Path) -> dict[str, Any]:
    """``kafka-segments run`` at ``now``; the JSON report."""
    _cli(
        "run",
        "--lake",
        str(lake),
        "--config",
        str(config),
        "--now",
        str(now),
        "--json",
        "--report",
        str(report),
    )
    result: dict[str, Any] = json.loads(report.read_text())
    return result


def product_export(lake: Path, target: Path) -> None:
    _cli("export", "--lake", str(lake), "--to", str(target), "--json")


def product_txn_indexes(lake: Path, run_id: str) -> dict[int, bytes]:
    """Base offset → ``.txnindex`` bytes (empty when there is none) of every committed segment the run
    wrote (``<base>-<run id>.log``). Kafka's segments cleaned in an earlier round have their index rebuilt
    by recovery when the oracle loads the log again, so only this round's are compared."""
    state = resolve_manifest(LocalStore(lake)).partition(TopicPartition(TOPIC, 0))
    written = [] if state is None else [s for s in state.segments if Path(s.key).stem.endswith(f"-{run_id}")]
    return {s.base_offset: _read_or_empty(lake / Path(s.key).with_suffix(".txnindex")) for s in written}


def kafka_txn_indexes(log_dir: Path, bases: Iterable[int]) -> dict[int, bytes]:
    """Base offset → ``.txnindex`` bytes (empty when there is none) of Kafka's segments at ``bases``."""
    return {base: _read_or_empty(log_dir / PARTITION / f"{base:020d}.txnindex") for base in bases}


def _read_or_empty(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


def product_mtimes(lake: Path) -> dict[int, int]:
    """Base offset → last-modified ms of every committed segment (the mtime the lake keeps for it)."""
    state = resolve_manifest(LocalStore(lake)).partition(TopicPartition(TOPIC, 0))
    return {} if state is None else {s.base_offset: s.last_modified_ms for s in state.segments}
