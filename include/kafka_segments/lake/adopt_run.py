"""``kafka-segments adopt``: adoption as a run of its own, through one ``LakeTransaction`` — begin, adopt the
uploaded segments, commit when anything changed (else end the run with nothing to adopt). The bootstrap of a
lake in manifest format 2 streams partition by partition (``lake.bootstrap``)."""

from __future__ import annotations

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.lake import staging
from kafka_segments.lake.adoption import DEFAULT_MAX_WORKERS
from kafka_segments.lake.adoption_report import AdoptionReport
from kafka_segments.lake.bootstrap import bootstrap
from kafka_segments.lake.bootstrap_report import BootstrapReport
from kafka_segments.lake.runs import RunOutcome
from kafka_segments.lake.transaction import LakeTransaction
from kafka_segments.state import MANIFEST_FORMAT_2
from kafka_segments.storage.base import ObjectStore

NOTHING_TO_ADOPT = "nothing to adopt"


def adopt(
    store: ObjectStore,
    *,
    now_ms: int,
    run_id: str | None = None,
    clock: Clock = wall_clock_ms,
    max_workers: int = DEFAULT_MAX_WORKERS,
    manifest_format: int | None = None,
) -> AdoptionReport | BootstrapReport:
    """Adopt as a run of its own: begin, adopt, commit when anything changed (else end the run).

    ``manifest_format``: the format a lake without a version is bootstrapped in (default: what every commit
    writes, ``staging.COMMIT_FORMAT``; format 1 only for tests and the bench); format 2 streams
    (``lake.bootstrap``, a ``BootstrapReport``). A lake with a version: its next version is in
    ``staging.COMMIT_FORMAT``.

    Raises:
        CheckpointFileError: bootstrap from a malformed checkpoint file (the run is aborted).
        CommitConflictError: another run committed first; nothing of this run is visible, adopt again.
        CommitStateUnknownError: the commit's outcome is unknown; ``recover`` settles it.
        ObjectStoreError: the store failed.
    """
    txn = LakeTransaction.begin(store, now_ms=now_ms, operation="adopt", run_id=run_id, clock=clock)
    new_format = manifest_format or staging.COMMIT_FORMAT  # read now: tests and the bench may set format 1
    if txn.run.base_version is None and new_format == MANIFEST_FORMAT_2:
        return bootstrap(txn, max_workers=max_workers, unchanged_reason=NOTHING_TO_ADOPT)
    with txn:
        result = txn.adopt(max_workers=max_workers)
        txn.stage(result.partitions, format_version=new_format if txn.run.base_version is None else None)
    outcome = txn.commit(unchanged_reason=NOTHING_TO_ADOPT)
    if outcome is RunOutcome.LOST and txn.lost_to is not None:
        raise txn.lost_to
    return AdoptionReport(txn.run_id, txn.run.base_version, txn.committed_version, result)
