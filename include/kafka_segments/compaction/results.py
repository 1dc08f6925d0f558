"""The values a cleaning round produces: per-batch outcomes, cleaned segments, the round's result."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from kafka_segments.compaction.decisions import BatchDecision
from kafka_segments.compaction.fates import DigestTable
from kafka_segments.compaction.offset_map import OffsetLookup
from kafka_segments.compaction.producers import ProducerState
from kafka_segments.segment.txn_index import AbortedTxn


class BatchAction(Enum):
    """How a source batch reached the output."""

    COPIED = "copied"
    REBUILT = "rebuilt"
    EMPTY_HEADER = "empty-header"
    DELETED = "deleted"


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    """What the round did with one source batch."""

    base_offset: int
    last_offset: int
    decision: BatchDecision
    action: BatchAction
    records_read: int
    """Every record of the batch (a deleted batch's records are counted though Kafka never decodes them)."""
    records_retained: int
    unkeyed_dropped: int
    horizon_stamped: bool
    bytes_read: int = 0
    is_control: bool = False
    tombstones_read: int = 0
    """Data records with a null value."""
    tombstones_retained: int = 0
    aborted_removed: int = 0
    """Records of aborted transactional data removed (the whole batch, whatever its keys)."""


@dataclass(frozen=True, slots=True)
class CleanedSegment:
    """One output segment: the cleaned ``.log`` bytes of a group of source segments."""

    base_offset: int
    batches: tuple[bytes, ...]
    """The output batches in offset order (copied, rebuilt or empty headers)."""
    aborted: tuple[AbortedTxn, ...]
    """The new segment's ``.txnindex`` entries (aborts whose data was still seen in this round)."""
    last_modified_ms: int
    """The mtime of the group's last source segment."""
    sources: tuple[str, ...]

    @property
    def data(self) -> bytes:
        """The cleaned ``.log`` bytes."""
        return b"".join(self.batches)


@dataclass(frozen=True, slots=True)
class RoundResult:
    """The outcome of one cleaning round."""

    first_dirty_offset: int
    end_offset: int
    """``map.latestOffset + 1``: the new cleaner checkpoint; every segment below it was rewritten."""
    segments: tuple[CleanedSegment, ...]
    batches: tuple[BatchOutcome, ...]
    map_keys: int = field(default=0, compare=False)
    """Distinct keys (key digests) in the round's offset map (0 when the map given cannot tell)."""

    @property
    def replaced(self) -> tuple[str, ...]:
        """The source segments the cleaned segments replace, in order."""
        return tuple(name for segment in self.segments for name in segment.sources)

    @property
    def records_read(self) -> int:
        return sum(outcome.records_read for outcome in self.batches)

    @property
    def records_retained(self) -> int:
        return sum(outcome.records_retained for outcome in self.batches)

    @property
    def tombstones_read(self) -> int:
        return sum(outcome.tombstones_read for outcome in self.batches)

    @property
    def tombstones_retained(self) -> int:
        return sum(outcome.tombstones_retained for outcome in self.batches)

    @property
    def aborted_removed(self) -> int:
        return sum(outcome.aborted_removed for outcome in self.batches)

    def count(self, action: BatchAction) -> int:
        """How many source batches the round handled with ``action``."""
        return sum(1 for outcome in self.batches if outcome.action is action)

    @property
    def horizons_stamped(self) -> int:
        return sum(1 for outcome in self.batches if outcome.horizon_stamped)

    @property
    def unkeyed_dropped(self) -> int:
        """Kafka's ``invalidMessagesRead``: unkeyed records removed from the mapped range."""
        return sum(outcome.unkeyed_dropped for outcome in self.batches)


@dataclass(frozen=True, slots=True)
class RoundContext:
    """What every batch decision of one round shares."""

    offset_map: OffsetLookup
    active: dict[int, ProducerState]
    upper_bound: int
    now_ms: int
    delete_retention_ms: int
    legacy_horizon_ms: int
    digest_table: DigestTable | None = None
    """``offset_map`` as a lookup table (built once per round); ``None``: the map is asked key by key."""
