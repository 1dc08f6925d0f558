"""Issue 20, point 4, as a user meets it: decompression bombs the cleaner must decode (a 32 KB zstd batch
inflating to 1 GiB, a 510 KB gzip batch inflating to 512 MiB) cost ``kafka-segments run`` about the
decompression budget (``kafka_segments.compaction.max.batch.decompressed.bytes``), not the bombs' size: their
partitions are not cleaned in that run (``DecompressionLimitError``), the others are. Peak memory is the
peak RSS of the ``run`` process (``resource.getrusage`` of a child), against the same lake with small
batches in place of the bombs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_harness import CLI
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import write_segment
from kafka_segments.storage import LocalStore
from unit.bad_batches import gzip_bomb, records, zstd_bomb

pytestmark = pytest.mark.e2e

NOW = "2025-11-21T04:40:00Z"
BUDGET = 64 << 20
OVERHEAD = 64 << 20
"""What a bomb may cost beyond the budget: one decompression step's output and the allocator's slack."""
CONFIG = f"""\
topics:
  orders:
    cleanup.policy: compact
    min.cleanable.dirty.ratio: 0.0
    kafka_segments.compaction.max.batch.decompressed.bytes: {BUDGET}
"""
PEAK_RSS = """\
import resource, subprocess, sys
result = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=False)
sys.stderr.write(result.stdout + result.stderr)
print(result.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
"""


def _lake(root: Path, *, zstd_inflated: int, gzip_inflated: int) -> None:
    store = LocalStore(root)

    def put(partition: int, base_offset: int, batch: bytes) -> None:
        store.put(
            f"orders-{partition}/{base_offset:020d}.log", write_segment([batch], base_offset=base_offset).log
        )

    put(0, 0, zstd_bomb(zstd_inflated))
    put(0, 1, build_batch(records(1, 2)))  # the active segment: the bomb's segment is cleanable
    put(1, 0, gzip_bomb(gzip_inflated))
    put(1, 1, build_batch(records(1, 2)))
    put(2, 0, build_batch([Record(i, 1_700_000_000_000 + i, b"same", b"v") for i in range(4)]))
    put(2, 4, build_batch(records(4, 2)))


def _run(tmp_path: Path, name: str, **inflated: int) -> tuple[int, int, str]:
    root = tmp_path / name
    _lake(root, **inflated)
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    run = [str(CLI), "run", "--lake", str(root), "--config", str(config), "--now", NOW]
    measured = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, *run], capture_output=True, text=True, timeout=300, check=True
    )
    code, peak = (int(value) for value in measured.stdout.split())
    return code, peak, measured.stderr


def test_a_run_over_decompression_bombs_stays_within_the_budget(tmp_path: Path) -> None:
    code, control, _ = _run(tmp_path, "control", zstd_inflated=1 << 20, gzip_inflated=1 << 20)
    assert code == 1  # the small stand-ins are not valid records either: their partitions are quarantined

    code, peak, output = _run(tmp_path, "bombs", zstd_inflated=1 << 30, gzip_inflated=512 << 20)

    assert code == 1
    assert "Traceback" not in output
    assert "kafka-segments run: 2 partition(s) quarantined and left alone: orders-0, orders-1" in output
    for partition, codec in ((0, "zstd"), (1, "gzip")):
        assert (
            f"orders-{partition}: QUARANTINED, not cleaned and not deleted from in this run: "
            f"orders-{partition}/00000000000000000000.log at byte 0 (offset 0): {codec} records inflate past "
            f"the decompression limit of {BUDGET} bytes"
        ) in output
    assert "orders-2: cleaned" in output
    assert peak < control + BUDGET + OVERHEAD, f"peak RSS {peak >> 20} MiB, control {control >> 20} MiB"


def _peak(argv: list[str]) -> tuple[int, int, str]:
    measured = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, str(CLI), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    code, peak = (int(value) for value in measured.stdout.split())
    return code, peak, measured.stderr


DEFAULT_LIMIT = 256 << 20


def test_inspect_and_adopt_refuse_bombs_within_the_default_limit(tmp_path: Path) -> None:
    """Not only the cleaner: ``inspect`` decoding a 1 GiB zstd batch, and ``adopt`` scanning a legacy gzip
    wrapper whose message set inflates to 512 MiB (a wrapper is decompressed to read its header), stop at the
    default limit (256 MiB) with one line naming the object and byte, and stay within it in memory."""
    from unit.compaction_helpers import legacy_message
    from unit.test_decompression_default_limit import gzip_wrapper_bomb

    small = tmp_path / "small.log"
    small.write_bytes(build_batch(records(0, 2)))
    zstd_file = tmp_path / "zstd.log"
    zstd_file.write_bytes(zstd_bomb(1 << 30))
    lake = tmp_path / "lake"
    (lake / "orders-0").mkdir(parents=True)
    legacy = legacy_message(1, 0, b"k", b"v") + gzip_wrapper_bomb(1, 512 << 20)
    (lake / "orders-0" / "00000000000000000000.log").write_bytes(legacy)
    (lake / "orders-1").mkdir()
    (lake / "orders-1" / "00000000000000000000.log").write_bytes(write_segment([small.read_bytes()]).log)

    _, control, _ = _peak(["inspect", "--records", str(small)])
    code, peak, output = _peak(["inspect", "--records", str(zstd_file)])
    assert code == 1
    assert "Traceback" not in output
    assert (
        f"kafka-segments inspect: {zstd_file} at byte 0 (offset 0): zstd records inflate past the "
        f"decompression limit of {DEFAULT_LIMIT} bytes"
    ) in output
    assert peak < control + DEFAULT_LIMIT + OVERHEAD, (
        f"peak RSS {peak >> 20} MiB, control {control >> 20} MiB"
    )

    calm = tmp_path / "calm"
    (calm / "orders-1").mkdir(parents=True)
    (calm / "orders-1" / "00000000000000000000.log").write_bytes(write_segment([small.read_bytes()]).log)
    _, control, _ = _peak(["adopt", "--lake", str(calm)])
    code, peak, output = _peak(["adopt", "--lake", str(lake)])
    assert code == 1
    assert "Traceback" not in output
    assert (
        "orders-0/00000000000000000000.log at byte 36: DecompressionLimitError: the wrapper's message set"
        in (output)
    )
    assert "kafka-segments adopt: 1 partition(s) quarantined: orders-0" in output
    assert peak < control + DEFAULT_LIMIT + OVERHEAD, f"{peak >> 20} MiB peak, control {control >> 20} MiB"
