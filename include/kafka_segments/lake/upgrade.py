"""``kafka-segments upgrade``: commit the head again in another manifest format (docs/metadata-format-2.md,
"Migration"), as a run of its own through the one transaction. Nothing else changes: the same partitions,
segments and retired objects, at version ``head + 1``; older versions stay readable in the format they were
written in. Any commit on a format 1 head writes format 2 as well (``staging.COMMIT_FORMAT``): upgrade is
that commit with no other change."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.lake.history import read_head
from kafka_segments.lake.runs import RunOutcome
from kafka_segments.lake.transaction import LakeTransaction
from kafka_segments.state import MANIFEST_FORMAT_2
from kafka_segments.storage.base import ObjectStore

UPGRADE_OPERATION = "upgrade"


@dataclass(frozen=True, slots=True)
class UpgradeResult:
    run_id: str
    outcome: RunOutcome
    from_format: int | None
    """The head's format before (``None``: the lake has no version yet)."""
    to_format: int
    version: int | None
    """The version committed in ``to_format`` (``None``: nothing was committed)."""

    def to_dict(self) -> dict[str, object]:
        return {
            "run_id": self.run_id,
            "outcome": self.outcome.value,
            "from_format": self.from_format,
            "to_format": self.to_format,
            "committed_version": self.version,
        }

    def to_text(self) -> str:
        if self.version is not None:
            return f"upgrade: version {self.version} is the head in manifest format {self.to_format}\n"
        if self.from_format is None:
            return "upgrade: the lake has no version yet; its first commit writes the default format\n"
        return f"upgrade: the head is already in manifest format {self.to_format}; nothing committed\n"


def upgrade(
    store: ObjectStore, *, to_format: int = MANIFEST_FORMAT_2, clock: Clock = wall_clock_ms
) -> UpgradeResult:
    """Commit the head again in ``to_format`` (nothing to do when it is in it already, or there is no head).
    Like recovery's fence, the new version keeps the head's ``now``: it changes nothing but the format.

    Raises:
        CommitConflictError: another run committed meanwhile (run it again).
        CommitStateUnknownError: the commit's outcome is unknown (``recover`` settles it).
    """
    head = read_head(store)
    if head is None or head.format_version == to_format:
        before = None if head is None else head.format_version
        return UpgradeResult("", RunOutcome.NOTHING_TO_CHANGE, before, to_format, None)
    txn = LakeTransaction.begin(store, now_ms=head.now_ms, operation=UPGRADE_OPERATION, clock=clock)
    with txn:
        base = txn.base or head
        txn.stage(base.partitions, always=True, format_version=to_format)
        outcome = txn.commit()
    if outcome is RunOutcome.LOST and txn.lost_to is not None:
        raise txn.lost_to
    return UpgradeResult(txn.run_id, outcome, base.format_version, to_format, txn.committed_version)
