"""A bounded offset map (``log.cleaner.dedupe.buffer.size``) against Kafka's own cleaner.

The oracle is a launcher running Kafka's ``LogCleanerManager`` and ``Cleaner`` on a log directory (``clean``,
``dump``, ``genlog``); the test runs only when the environment variable ``KAFKA_ORACLE`` names it. One log,
two rounds on each side with the smallest dedupe buffer a broker accepts (1 MiB + 1 byte: 43690 slots,
39321 keys at the 0.9 load factor) over 40000 distinct keys: both rounds end where the map fills, in the
middle of a batch. After each round the exported lake and Kafka's log directory must hold the same segment
files (bytes, batches, records) and the same cleaner checkpoint, and the run's report Kafka's end offset and
record counts.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

CLI = Path(sys.executable).parent / "kafka-segments"
T0_MS = 1_790_000_000_000
NOW_MS = T0_MS + 3_600_000
MTIME_S = T0_MS // 1000
SEGMENT_BYTES = 262_144
DEDUPE_BUFFER = 1024 * 1024 + 1
MAP_KEYS = int(DEDUPE_BUFFER // 24 * 0.9)
CONFIG = f"""\
broker:
  log.cleaner.dedupe.buffer.size: {DEDUPE_BUFFER}
topics:
  t:
    cleanup.policy: compact
    internal.segment.bytes: {SEGMENT_BYTES}
"""


@pytest.fixture
def oracle() -> Path:
    launcher = os.environ.get("KAFKA_ORACLE")
    if not launcher:
        pytest.skip(
            "KAFKA_ORACLE is not set: it names the Kafka cleaner oracle launcher this test compares with"
        )
    path = Path(launcher)
    if not path.is_file():
        pytest.skip(f"KAFKA_ORACLE={launcher} is not a file")
    return path


def run(*args: str | Path) -> str:
    jars = Path(importlib.util.find_spec("pyspark").origin or "").parent / "jars"  # type: ignore[union-attr]
    env = {**os.environ, "PYSPARK_JARS": os.environ.get("PYSPARK_JARS", str(jars))}
    done = subprocess.run(
        [str(arg) for arg in args], capture_output=True, text=True, timeout=600, check=False, env=env
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def fixed_mtimes(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (MTIME_S, MTIME_S))


def kafka_round(oracle: Path, log_dir: Path) -> dict[str, Any]:
    out = run(
        oracle, "clean", "--log-dir", log_dir, "--partition", "t-0", "--now", str(NOW_MS),
        "--prop", "cleanup.policy=compact", "--prop", f"segment.bytes={SEGMENT_BYTES}",
        "--dedupe-buffer-size", str(DEDUPE_BUFFER), "--no-records",
    )  # fmt: skip
    result: dict[str, Any] = json.loads(out)
    return result


def product_round(lake: Path, config: Path, export: Path) -> dict[str, Any]:
    report = json.loads(run(CLI, "run", "--lake", lake, "--config", config, "--now", str(NOW_MS), "--json"))
    run(CLI, "export", "--lake", lake, "--to", export)
    (partition,) = report["compaction"]["partitions"]
    assert partition["status"] == "cleaned", partition
    result: dict[str, Any] = partition
    return result


def segments(oracle: Path, log_dir: Path) -> list[dict[str, Any]]:
    """Every segment as Kafka decodes it, without the file times (they are set differently)."""
    dump = json.loads(run(oracle, "dump", "--log-dir", log_dir, "--partition", "t-0"))
    return [{k: v for k, v in segment.items() if k != "mtime"} for segment in dump["segments"]]


def checkpoint(log_dir: Path) -> str:
    return (log_dir / "cleaner-offset-checkpoint").read_text()


def test_two_rounds_end_where_kafkas_map_fills(oracle: Path, tmp_path: Path) -> None:
    source = tmp_path / "in"
    run(oracle, "genlog", source / "t-0", "100000", "10", "none", "40000", str(SEGMENT_BYTES), str(T0_MS))
    fixed_mtimes(source)
    kafka_dir, lake = tmp_path / "kafka", tmp_path / "lake"
    shutil.copytree(source, kafka_dir)
    shutil.copytree(source, lake)
    fixed_mtimes(kafka_dir)
    fixed_mtimes(lake)
    config = tmp_path / "kafka-segments.yaml"
    config.write_text(CONFIG)
    run(CLI, "adopt", "--lake", lake, "--now", str(NOW_MS))

    ends = []
    for number in (1, 2):
        kafka = kafka_round(oracle, kafka_dir)
        export = tmp_path / f"export-{number}"
        ours = product_round(lake, config, export)

        assert kafka["end_offset"] < kafka["cleanable"]["first_uncleanable_offset"]  # the map filled
        assert ours["end_offset"] == ours["checkpoint"]["after"] == kafka["end_offset"]
        assert ours["first_dirty_offset"] == kafka["round"]["first_dirty_offset"]
        assert ours["stats"]["messages_read"] == kafka["stats"]["messages_read"]
        assert ours["stats"]["messages_written"] == kafka["stats"]["messages_written"]
        assert ours["stats"]["map_keys"] == MAP_KEYS
        assert checkpoint(export) == checkpoint(kafka_dir)
        assert segments(oracle, export) == segments(oracle, kafka_dir)
        ends.append(kafka["end_offset"])
    assert ends[0] < ends[1]
    assert kafka["stats"]["messages_written"] < kafka["stats"]["messages_read"]  # round 2 removed records
