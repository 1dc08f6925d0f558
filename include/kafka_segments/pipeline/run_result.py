"""What a run did, for its reports (``pipeline.report``): one value every door builds the same way."""

from __future__ import annotations

from dataclasses import dataclass, field

from kafka_segments.lake.adoption_report import AdoptionResult
from kafka_segments.lake.gc_report import GcReport
from kafka_segments.lake.recover import RecoverReport
from kafka_segments.lake.runs import RunOutcome
from kafka_segments.pipeline.compaction.results import CompactionResult
from kafka_segments.pipeline.offsets_input import ResolvedOffsets
from kafka_segments.pipeline.tables_stage import TablesOutcome
from kafka_segments.retention.plan import RetentionPlan


@dataclass(frozen=True, slots=True)
class RunResult:
    """Everything a run did, for the reports."""

    run_id: str
    now_ms: int
    dry_run: bool
    base_version: int | None
    committed_version: int | None
    offsets: ResolvedOffsets | None
    adoption: AdoptionResult
    plan: RetentionPlan
    recovered: RecoverReport | None = None
    gc: GcReport | None = None
    note: str = ""
    compaction: CompactionResult = field(default_factory=CompactionResult)
    ended: RunOutcome | None = None
    """How the run ended (``None``: staged, not ended yet)."""
    previous_now_ms: int | None = None
    """The ``now`` of the version the run builds on (``None``: the lake had none)."""
    tables: TablesOutcome | None = None
    """What the ``tables`` stage did (``None``: it did not run)."""

    @property
    def outcome(self) -> RunOutcome:
        """How the run ended; before its end, what ending it would give."""
        if self.ended is not None:
            return self.ended
        if self.dry_run:
            return RunOutcome.DRY_RUN
        return RunOutcome.COMMITTED if self.committed_version is not None else RunOutcome.NOTHING_TO_CHANGE
