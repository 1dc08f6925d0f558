"""A run that appends one segment, for the commit tests, and a child process that commits it and dies.

``stage_appending_run`` is used in-process by the commit and race tests. Run as a script, this module is the
child of ``test_commit_kill.py``: it stages a run on the lake described by its environment and commits it
through a store that sends itself SIGKILL right before (``KILL_AT=before-put``) or right after
(``KILL_AT=after-put``) the PUT of the manifest the run commits::

    KS_LAKE=local KS_ROOT=/tmp/lake KS_RUN_ID=... KS_KILL_AT=before-put python commit_child.py
    KS_LAKE=s3 KS_BUCKET=lake KS_PREFIX=t-1/ KS_ENDPOINT=http://127.0.0.1:5000 ... python commit_child.py

Exit status 3 means the kill never happened (the process must not survive the commit).
"""

from __future__ import annotations

import os
import signal
import sys

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.lake import Manifest, PartitionState, RunRecord, begin_run, build_manifest, stage_manifest
from kafka_segments.lake.commit import commit_run
from kafka_segments.lake.layout import manifest_key
from kafka_segments.lake.staging import stage_segment
from kafka_segments.storage import LocalStore, ObjectStore, S3Store
from kafka_segments.topic_partition import TopicPartition
from kit import make_segment

from lake.faults import AFTER, BEFORE, Call, FaultyStore

TP = TopicPartition("orders", 0)


def stage_appending_run(
    store: ObjectStore, *, clock: Clock = wall_clock_ms, run_id: str | None = None, operation: str = "append"
) -> tuple[RunRecord, Manifest]:
    """Begin a run on the head, write one new segment at the end of ``orders-0`` and stage the manifest.

    Returns the run and the manifest it staged (the run's new segment is its last segment).
    """
    run, base = begin_run(store, now_ms=clock(), operation=operation, run_id=run_id, clock=clock)
    previous = base.partition(TP) if base is not None else None
    base_offset = previous.log_end_offset if previous is not None else 0
    files = make_segment(base_offset, key_prefix=f"{run.run_id}-")
    entry = stage_segment(
        store,
        run,
        topic_partition=TP,
        base_offset=base_offset,
        files=files.by_kind(),
        clock=clock,
    )
    state = PartitionState(
        TP,
        log_start_offset=previous.log_start_offset if previous is not None else 0,
        log_end_offset=entry.next_offset,
        segments=(*(previous.segments if previous is not None else ()), entry),
        cleaner_checkpoint=previous.cleaner_checkpoint if previous is not None else None,
        run_id=run.run_id,
    )
    others = [p for p in (base.partitions if base is not None else ()) if p.topic_partition != TP]
    manifest = build_manifest(run, base=base, partitions=[*others, state])
    stage_manifest(store, run, manifest)
    return run, manifest


def _store_from_env() -> ObjectStore:
    if os.environ["KS_LAKE"] == "local":
        return LocalStore(os.environ["KS_ROOT"])
    return S3Store(
        os.environ["KS_BUCKET"],
        os.environ["KS_PREFIX"],
        endpoint_url=os.environ["KS_ENDPOINT"],
        region=os.environ.get("KS_REGION"),
    )


def _kill(_: Call) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main() -> int:
    store = _store_from_env()
    run, manifest = stage_appending_run(store, run_id=os.environ["KS_RUN_ID"])
    faulty = FaultyStore(store)
    when = {"before-put": BEFORE, "after-put": AFTER}[os.environ["KS_KILL_AT"]]
    faulty.fail("put", key=manifest_key(manifest.version), when=when, error=_kill)
    commit_run(faulty, run.run_id)
    return 3


if __name__ == "__main__":
    sys.exit(main())
