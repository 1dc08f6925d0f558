"""Kafka's own cleaner and kafka-segments side by side on one Kafka log directory.

The reference is the kafka-oracle launcher (Kafka's ``LogCleanerManager``, ``Cleaner`` and
``UnifiedLog.deleteOldSegments`` as a command) named by the environment variable ``KAFKA_ORACLE``; tests that
need it skip without it. One comparison: the same partition directory (same bytes, same mtimes, same
checkpoint files) is cleaned once by ``oracle clean`` and once by ``kafka-segments adopt`` + ``run`` on a lake
in a local directory, whose committed state is then ``export``-ed; both directories are decoded by
``oracle dump`` (Kafka's ``FileRecords``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kafka_segments.checkpoint import format_offset_checkpoint, read_offset_checkpoint
from kafka_segments.cli.main import main
from kafka_segments.topic_partition import TopicPartition
from unit.compaction_helpers import LogBuilder

ORACLE_VARIABLE = "KAFKA_ORACLE"
TP = TopicPartition("t", 0)
MTIME_S = 1_790_000_000
"""Every input file's mtime (Kafka reads segment mtimes: both sides must see the same)."""
T0 = MTIME_S * 1000
DAY = 86_400_000

needs_oracle = pytest.mark.skipif(
    not os.environ.get(ORACLE_VARIABLE),
    reason=f"{ORACLE_VARIABLE} does not name the kafka-oracle launcher: not compared with Kafka's cleaner",
)


def write_log_dir(root: Path, log: LogBuilder, *, cleaner_checkpoint: int | None = None) -> Path:
    """``root/t-0/<base>.log`` for every segment of ``log`` (and ``root/cleaner-offset-checkpoint``), every
    file at ``MTIME_S``."""
    partition = root / TP.dir_name
    partition.mkdir(parents=True)
    for base, batches in log.chunks:
        (partition / f"{base:020d}.log").write_bytes(b"".join(batches))
    if cleaner_checkpoint is not None:
        (root / "cleaner-offset-checkpoint").write_bytes(format_offset_checkpoint({TP: cleaner_checkpoint}))
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (MTIME_S, MTIME_S))
    return root


def _oracle(*args: str) -> dict[str, Any]:
    spec = importlib.util.find_spec("pyspark")
    assert spec is not None
    assert spec.origin is not None
    env = {**os.environ, "PYSPARK_JARS": str(Path(spec.origin).parent / "jars")}
    done = subprocess.run(
        [os.environ[ORACLE_VARIABLE], *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def _dump(log_dir: Path) -> list[dict[str, Any]]:
    """Every segment as ``oracle dump`` decodes it, without its mtime (an export writes files now)."""
    segments = _oracle("dump", "--log-dir", str(log_dir), "--partition", TP.dir_name)["segments"]
    return [{key: value for key, value in segment.items() if key != "mtime"} for segment in segments]


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(list(args))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


@dataclass(frozen=True)
class SideBySide:
    """What Kafka's cleaner and a run did to the same log directory."""

    kafka: dict[str, Any]
    """``oracle clean``'s document: ``stats``, ``end_offset``, ``checkpoint_after``, ``after`` ..."""
    run: dict[str, Any]
    """The run's JSON report (``run --json``)."""
    kafka_segments: list[dict[str, Any]]
    exported_segments: list[dict[str, Any]]
    kafka_cleaner_checkpoint: dict[TopicPartition, int]
    exported_cleaner_checkpoint: dict[TopicPartition, int]

    @property
    def compaction(self) -> dict[str, Any]:
        """The run's report of partition ``t-0``'s compaction."""
        (partition,) = self.run["compaction"]["partitions"]
        found: dict[str, Any] = partition
        return found


def side_by_side(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    log_dir: Path,
    *,
    now_ms: int,
    topic: Mapping[str, str],
) -> SideBySide:
    """Clean a copy of ``log_dir`` with Kafka's cleaner and another with a run at ``now_ms``, topic ``t``
    configured with ``topic`` on both sides."""
    kafka_dir, lake, exported = tmp_path / "kafka", tmp_path / "lake", tmp_path / "exported"
    shutil.copytree(log_dir, kafka_dir)
    shutil.copytree(log_dir, lake)
    props = [arg for key, value in topic.items() for arg in ("--prop", f"{key}={value}")]
    kafka = _oracle(
        "clean", "--log-dir", str(kafka_dir), "--partition", TP.dir_name, "--now", str(now_ms), *props
    )
    config = tmp_path / "config.yaml"
    config.write_text("topics:\n  t:\n" + "".join(f"    {key}: {value}\n" for key, value in topic.items()))
    _cli(capsys, "adopt", "--lake", str(lake), "--now", str(now_ms))
    report = _cli(capsys, "run", "--lake", str(lake), "--config", str(config), "--now", str(now_ms), "--json")
    _cli(capsys, "export", "--lake", str(lake), "--to", str(exported))
    return SideBySide(
        kafka=kafka,
        run=json.loads(report),
        kafka_segments=_dump(kafka_dir),
        exported_segments=_dump(exported),
        kafka_cleaner_checkpoint=read_offset_checkpoint(kafka_dir / "cleaner-offset-checkpoint"),
        exported_cleaner_checkpoint=read_offset_checkpoint(exported / "cleaner-offset-checkpoint"),
    )
