"""Issue 38, point 1: a segment of many zstd batches, each one record inflating just under the per-batch
decompression limit, costs ``run``, ``dump`` and ``read_lake`` a bounded amount of memory, not one inflated
batch per batch (before: 8 such batches of 240 MiB took ``run`` to 2.6 GB, ``dump`` to 3.1 GB and
``read_lake`` to 5.0 GB, and 4 batches about half that). On a local lake and on S3.

Peak memory is the peak RSS of the command's process (``resource.getrusage`` of a child). Each command is
measured over the same lake with 4 and with 8 bombs: the peak must not grow with their number (before, it
grew by one to two and a half bombs' size per bomb), and must stay within the budget docs/lake.md gives
("Bad input and faults") plus ``OVERHEAD`` above the same command over a lake of small records. The bombs
are 40 MiB (the reader's and dump's limit stays the default 256 MiB; the cleaner's is set to 64 MiB): small
enough for seconds, large enough that growth shows, and above glibc's largest mmap threshold (32 MiB), so
that what is freed goes back to the system and the peak measures what is held."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_harness import CLI
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS, EmbeddedS3
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import write_segment
from kafka_segments.storage import LocalStore, ObjectStore
from s3_fixtures import new_s3_store

pytestmark = pytest.mark.e2e

NOW = "2025-11-21T04:40:00Z"
NOW_MS = 1_763_700_000_000
BOMB = 40 << 20
"""Zero bytes one bomb's record holds (its batch is ~1 KB of zstd)."""
PIECE = 64 << 20
"""``records.fast.pieces.PIECE_BYTES``: a reader's piece (one bomb)."""
CLEANER_LIMIT = 64 << 20
OVERHEAD = 96 << 20
"""What a command may cost beyond its budget: a decompression step's output, the allocator's slack (Arrow's
pool keeps freed pages a while). Measured for ``read_lake`` over 8 bombs on S3: 130 to 190 MiB above its
control on a quiet machine, 207 MiB once under CI's load; before the bound, 4.8 GB above it."""
GROWTH = 3 * BOMB
"""How much the peak may differ between 4 and 8 bombs: the allocators' noise (glibc keeps some freed heap
memory, Arrow's pool frees on a timer): up to 10 MiB on a quiet machine, 80 MiB once under CI's load.
Before, it grew by 4 to 10 bombs' size (160 to 400 MiB)."""
PEAK_RSS = """\
import resource, subprocess, sys
out = subprocess.DEVNULL if sys.argv[1] == "drop" else subprocess.PIPE
result = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.PIPE, text=True)
sys.stderr.write((result.stdout or "") + result.stderr)
print(result.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
"""
"""Run a command (its output kept, or its stdout dropped), print its exit code and peak RSS."""
READ_LAKE = """\
import sys
from kafka_segments.reading import read_lake
rows = 0
for batch in read_lake(sys.argv[1], {"subscribe": "orders"}):
    rows += batch.num_rows
    del batch
sys.stderr.write(f"rows {rows}")
"""
CONFIG = f"""\
topics:
  orders:
    cleanup.policy: compact
    min.cleanable.dirty.ratio: 0.0
    kafka_segments.compaction.max.batch.decompressed.bytes: {CLEANER_LIMIT}
"""


def bomb_segment(count: int, *, size: int = BOMB) -> bytes:
    """``count`` zstd batches at offsets 0..count-1, each one valid record of ``size`` zero bytes."""
    one = build_batch([Record(0, NOW_MS, b"k", bytes(size))], compression=CompressionType.ZSTD)
    # the base offset is outside the CRC: the same batch at each offset
    return write_segment([struct.pack(">q", i) + one[8:] for i in range(count)], base_offset=0).log


def fill(store: ObjectStore, count: int, *, size: int = BOMB, adopted: bool) -> None:
    """Partition orders-0: the bombs' segment, then an active segment (so the bombs' one is cleanable)."""
    store.put("orders-0/00000000000000000000.log", bomb_segment(count, size=size))
    tail = build_batch([Record(count, NOW_MS, b"k", b"v")], base_offset=count)
    store.put(f"orders-0/{count:020d}.log", write_segment([tail], base_offset=count).log)
    if adopted:
        adopt(store, now_ms=NOW_MS)


Lake = tuple[ObjectStore, str, dict[str, str]]
"""A fresh lake: its store, its URI and the environment a command needs to reach it."""
MakeLake = Callable[[str], Lake]


@pytest.fixture(params=["local", "s3"])
def make_lake(request: pytest.FixtureRequest, tmp_path: Path) -> MakeLake:
    """A maker of fresh lakes, on a local directory or on S3 (moto's server over HTTP on loopback)."""
    if request.param == "local":

        def local(name: str) -> Lake:
            return LocalStore(tmp_path / name), str(tmp_path / name), dict(os.environ)

        return local
    server: EmbeddedS3 = request.getfixturevalue("s3_server")
    env = {k: v for k, v in os.environ.items() if k not in {"AWS_PROFILE", "AWS_SESSION_TOKEN"}}
    env.update(
        AWS_ACCESS_KEY_ID=EMBEDDED_CREDENTIALS["aws_access_key_id"],
        AWS_SECRET_ACCESS_KEY=EMBEDDED_CREDENTIALS["aws_secret_access_key"],
        AWS_DEFAULT_REGION=DEFAULT_REGION,
        AWS_ENDPOINT_URL=server.endpoint_url,
    )

    def s3(name: str) -> Lake:
        store = new_s3_store(server)
        return store, store.describe(), env

    return s3


def peak(argv: list[str], env: dict[str, str], *, stdout: str) -> tuple[int, int, str]:
    """(exit code, peak RSS in bytes, output) of ``argv`` run as a child; ``stdout``: "keep" or "drop"."""
    measured = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, stdout, *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env=env,
    )
    code, rss = (int(value) for value in measured.stdout.split())
    return code, rss, measured.stderr


Measured = dict[str, tuple[int, int, str]]


def measure(
    make_lake: MakeLake, argv_of: Callable[[str], list[str]], *, adopted: bool, stdout: str = "keep"
) -> Measured:
    """The command ``argv_of(uri)`` over lakes of 8 batches of small records (``control``), 4 and 8 bombs."""
    found = {}
    for name, count, size in (("control", 8, 16), ("4", 4, BOMB), ("8", 8, BOMB)):
        store, uri, env = make_lake(name)
        fill(store, count, size=size, adopted=adopted)
        found[name] = peak(argv_of(uri), env, stdout=stdout)
    return found


def check_bounded(found: Measured, budget: int) -> None:
    control, four, eight = (found[name][1] for name in ("control", "4", "8"))
    mib = {name: rss >> 20 for name, (_, rss, _) in found.items()}
    assert abs(eight - four) < GROWTH, f"peak RSS grows with the bombs (MiB): {mib}"
    assert eight < control + budget + OVERHEAD, f"peak RSS past the budget (MiB): {mib}"


def test_read_lake_holds_one_piece_of_a_segment_of_bombs(make_lake: MakeLake) -> None:
    """The reader decodes a bounded piece at a time (``PIECE`` bytes, or one batch): its budget is a piece
    and the Arrow batch made of it, whatever the number of bombs; every record is still read."""
    found = measure(make_lake, lambda uri: [sys.executable, "-c", READ_LAKE, uri], adopted=True)
    for name, rows in (("control", 9), ("4", 5), ("8", 9)):
        code, _, output = found[name]
        assert code == 0, output
        assert output.endswith(f"rows {rows}"), output
    check_bounded(found, 2 * PIECE)


def test_dump_holds_one_batch_of_a_segment_of_bombs(make_lake: MakeLake) -> None:
    """``dump`` prints batch by batch and keeps none: its budget is one batch's records, its payload and
    its line (a record's text), whatever the number of bombs."""
    found = measure(
        make_lake,
        lambda uri: [str(CLI), "dump", "--lake", uri, "--topic", "orders", "--partition", "0"],
        adopted=True,
        stdout="drop",
    )
    for name in found:
        code, _, output = found[name]
        assert code == 0, output
    check_bounded(found, 4 * BOMB)


def test_run_refuses_a_segment_that_inflates_past_its_budget(make_lake: MakeLake, tmp_path: Path) -> None:
    """The cleaner decodes a whole segment: its records may take the decompression limit (or 256 times the
    segment's bytes, if larger). Past it (here at the second bomb: two are more than the 64 MiB limit), the
    partition is quarantined for the run with one line naming the object, byte and offset where the budget
    ran out; the peak is about that budget, 4 bombs or 8."""
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    found = measure(
        make_lake,
        lambda uri: [str(CLI), "run", "--lake", uri, "--config", str(config), "--now", NOW],
        adopted=False,
    )
    assert found["control"][0] == 0, found["control"][2]
    second = len(bomb_segment(1))  # the bombs' batches are all alike: where the second one starts
    for name in ("4", "8"):
        code, _, output = found[name]
        assert code == 1
        assert "Traceback" not in output
        assert "kafka-segments run: 1 partition(s) quarantined and left alone: orders-0" in output
        assert (
            f"orders-0/00000000000000000000.log at byte {second} (offset 1): the segment's records "
            f"inflate past {CLEANER_LIMIT} bytes"
        ) in output, output
    check_bounded(found, CLEANER_LIMIT)
