"""``python -m kafka_segments.cli.warm [--archive]``: compile, or load from numba's cache, every kernel a run
uses, once, so that a user's first run does not (docs/compaction.md, "Engines"). ``scripts/setup`` runs it
after installing.

It runs ``kafka-segments run`` then ``export`` on a tiny local lake built here: one compacted partition per
codec (none, gzip, snappy, lz4, zstd), each with tombstones, a committed transaction and an active segment,
so adoption's header scan, the streamed read, the cleaning round, the rebuilt batches and the indexes all
call their kernels. ``--archive`` does the same in a fresh Python that imports the package from the Spark
job's library archive (``spark_submit.library_archive``), whose kernels numba caches under the archive's name
in the user's cache folder (``records.fast.jit``), then builds the archive again with those kernels in it: a
Spark worker on this machine loads them from the cache, and one on another machine (same CPU) from the
archive, instead of compiling. The two compilations run at the same time (the archive's in its own process),
so on two cores set-up waits for about one of them, not both."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.builder import build_batch
from kafka_segments.records.control import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker,
)
from kafka_segments.records.record import Record

NOW_MS = 1_800_000_000_000
TOPIC = "warm"
CONFIG = f"topics:\n  {TOPIC}:\n    cleanup.policy: compact\n    delete.retention.ms: 0\n"


class WarmUpError(RuntimeError):
    """A warm-up step failed (the command and what it printed)."""


def _segment(compression: CompressionType, base: int) -> bytes:
    """Plain batches with a repeated key and a tombstone, then a transaction and its COMMIT marker."""
    ts = NOW_MS - 3_600_000
    keys = [b"a", b"b", b"a", b"c", b"b", b"a"]
    plain = [Record(base + i, ts + i, key, None if i == 4 else b"v%d" % i) for i, key in enumerate(keys)]
    first = build_batch(plain[:3], compression=compression) + build_batch(plain[3:], compression=compression)
    txn = [Record(base + 6 + i, ts + 6 + i, key, b"t") for i, key in enumerate([b"a", b"d"])]
    options = {"producer_id": 7, "producer_epoch": 0, "base_sequence": 0, "is_transactional": True}
    batch = build_batch(txn, compression=compression, **options)  # type: ignore[arg-type]
    marker = build_end_transaction_marker(
        EndTransactionMarker(ControlRecordType.COMMIT, 0),
        offset=base + 8,
        timestamp=ts + 8,
        producer_id=7,
        producer_epoch=0,
    )
    return first + batch + marker


def write_lake(lake: Path) -> None:
    """One partition per codec, waiting for adoption: a cleanable segment and a one-record active one."""
    for partition, compression in enumerate(CompressionType):
        folder = lake / f"{TOPIC}-{partition}"
        folder.mkdir(parents=True)
        (folder / f"{0:020d}.log").write_bytes(_segment(compression, 0))
        active = Record(9, NOW_MS - 1_000, b"active", b"v")
        (folder / f"{9:020d}.log").write_bytes(build_batch([active], compression=compression))


def _command(*argv: str) -> None:
    from kafka_segments.cli.main import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = main(list(argv))
    if status != 0:
        raise WarmUpError(f"kafka-segments {' '.join(argv)} exited {status}: {out.getvalue()[-2000:]}")


def warm(work: Path) -> None:
    """``run`` and ``export`` on a tiny lake under ``work`` (a new or empty folder)."""
    lake, config = work / "lake", work / "config.yaml"
    write_lake(lake)
    config.write_text(CONFIG)
    _command("run", "--lake", str(lake), "--config", str(config), "--now", str(NOW_MS), "--json")
    _command("export", "--lake", str(lake), "--to", str(work / "export"), "--json")


def start_archive_warm_up() -> tuple[Path, subprocess.Popen[str]]:
    """The warm-up started in a fresh Python importing the package from the Spark job's library archive:
    the archive and the process (``finish_archive_warm_up`` waits for it)."""
    from kafka_segments.pipeline.engines.spark_submit import library_archive

    archive = library_archive()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(archive), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [sys.executable, "-m", "kafka_segments.cli.warm"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    return archive, process


def finish_archive_warm_up(archive: Path, process: subprocess.Popen[str]) -> Path:
    """Wait for the archive's warm-up; the archive that carries the kernels it compiled (or loaded).

    Raises:
        WarmUpError: the warm-up failed (what it printed last).
    """
    from kafka_segments.pipeline.engines.spark_submit import library_archive

    _out, errors = process.communicate()
    if process.returncode != 0:
        raise WarmUpError(f"the warm-up from {archive} exited {process.returncode}: {errors[-2000:]}")
    return library_archive()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kafka_segments.cli.warm", description=__doc__)
    parser.add_argument("--archive", action="store_true", help="also for the Spark job's library archive")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    archived = start_archive_warm_up() if args.archive else None
    try:
        with tempfile.TemporaryDirectory(prefix="kafka-segments-warm-") as work:
            warm(Path(work))
    except BaseException:
        if archived is not None:
            archived[1].kill()
            archived[1].communicate()
        raise
    print(f"kernels ready in {time.perf_counter() - start:.1f} s ({Path(__file__).parent.parent})")
    if archived is not None:
        archive = finish_archive_warm_up(*archived)
        print(f"kernels ready in {time.perf_counter() - start:.1f} s ({archive.name}, at the same time)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
