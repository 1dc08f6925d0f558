"""The command line (``kafka-segments …``) with the lake's store counted: what ``scale_bench.py --metadata``
runs in each fresh process.

The store ``open_lake`` returns is wrapped in ``tests/counting_store.py``'s ``CountingStore`` (a mapping
store stays one, so a local run takes the same paths), and a local lake's whole-file hashing (its etags are
the files' sha256) is counted too. At exit the counts go, as JSON, to the file named by
``$SCALE_BENCH_COUNTS``, with the process's own peak RSS (``VmHWM``). With ``$SCALE_BENCH_FORMAT`` 1 the
process's commits write manifest format 1, as the release before format 2 did
(``kafka_segments.lake.staging.COMMIT_FORMAT``: the bench measures both formats side by side; no
command writes format 1). Usage: ``python bench/counted_cli.py run --lake … --config …``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

COUNTS_ENV = "SCALE_BENCH_COUNTS"
FORMAT_ENV = "SCALE_BENCH_FORMAT"
TESTS = Path(__file__).resolve().parents[1] / "tests"


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(TESTS))
    from counting_store import CountingStore, counting_store
    from kafka_segments.cli import lake_cmds
    from kafka_segments.cli import main as cli_main
    from kafka_segments.lake import staging
    from kafka_segments.storage import ObjectStore

    stores: list[CountingStore] = []
    original = lake_cmds.open_lake

    def open_counted(uri: str) -> ObjectStore:
        store = counting_store(original(uri))
        stores.append(store)
        return store

    for name, module in list(sys.modules.items()):  # the modules that imported open_lake by name
        if name.startswith("kafka_segments.cli") and getattr(module, "open_lake", None) is original:
            module.open_lake = open_counted  # type: ignore[attr-defined]
    hashed = _count_local_hashing()
    if os.environ.get(FORMAT_ENV):
        staging.COMMIT_FORMAT = int(os.environ[FORMAT_ENV])
    try:
        return cli_main.main(argv)
    finally:
        out = os.environ.get(COUNTS_ENV)
        if out:
            counts: dict[str, Any] = {"stores": [store.counts().as_dict() for store in stores]}
            counts["local_hashed"] = dict(hashed)
            counts["vm_hwm_kb"] = _own_peak_rss_kb()
            Path(out).write_text(json.dumps(counts), encoding="utf-8")


def _own_peak_rss_kb() -> int | None:
    """This process's peak RSS since its exec (``VmHWM``: its own memory's high-water mark). The rusage a
    parent gets from ``wait4`` is not that: Linux keeps the larger of the child's and the memory the child
    had before its exec, the parent's (a bench holding moto's objects or a segment's bytes)."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return None


def _count_local_hashing() -> dict[str, int]:
    """``{"files": n, "bytes": n}`` of the files ``LocalStore`` hashes from now on (its etags: a listing's,
    a ``head``'s, a conditional write's check; left at 0 when the store hashes some other way)."""
    from kafka_segments.storage import local

    hashed = {"files": 0, "bytes": 0}
    hash_stream = getattr(local, "_hash_stream", None)
    if hash_stream is None:
        return hashed
    lock = threading.Lock()

    def counted(f: Any) -> str:
        start = f.tell()
        digest: str = hash_stream(f)
        with lock:
            hashed["files"] += 1
            hashed["bytes"] += f.tell() - start
        return digest

    local._hash_stream = counted
    return hashed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
