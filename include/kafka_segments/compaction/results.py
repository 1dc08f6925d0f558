"""The values a cleaning round produces: per-batch outcomes, cleaned segments, the round's result."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction.decisions import BatchDecision
from kafka_segments.compaction.offset_map import OffsetMap
from kafka_segments.compaction.producers import ProducerState
from kafka_segments.records.fast import DigestTable
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
    """The records ``MemoryRecords.filterTo`` reads: every record of the batch, none of a batch the
    batch-retention check deletes (``DELETE``: aborted data, an expired marker), whose record loop Kafka
    skips (its bytes still count as read)."""
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


ACTIONS = tuple(BatchAction)
"""Action code -> action (codes are positions in this tuple)."""

I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
Codes = npt.NDArray[np.int8]

_BOOLS = ("horizon_stamped", "is_control")
_COUNTS = (
    "records_read",
    "records_retained",
    "unkeyed_dropped",
    "bytes_read",
    "tombstones_read",
    "tombstones_retained",
    "aborted_removed",
)
_INTS = ("base_offset", "last_offset", *_COUNTS)


@dataclass(frozen=True, slots=True, eq=False)
class BatchOutcomes(Sequence[BatchOutcome]):
    """The outcomes of many batches as columns (one row per source batch, in log order): a round handles
    ~10^5 batches per GiB, so they are counted over arrays and a ``BatchOutcome`` is only built when one is
    looked at. Two ``BatchOutcomes`` are equal when every outcome is."""

    base_offset: I64
    last_offset: I64
    decisions: tuple[BatchDecision, ...]
    action: Codes
    """Positions in ``ACTIONS``."""
    records_read: I64
    records_retained: I64
    unkeyed_dropped: I64
    horizon_stamped: Bools
    bytes_read: I64
    is_control: Bools
    tombstones_read: I64
    tombstones_retained: I64
    aborted_removed: I64

    @classmethod
    def empty(cls) -> BatchOutcomes:
        return cls.concat(())

    @classmethod
    def of(cls, outcomes: Sequence[BatchOutcome]) -> BatchOutcomes:
        """The columns of ``outcomes``."""
        columns: dict[str, npt.NDArray[Any]] = {
            name: np.array([getattr(o, name) for o in outcomes], dtype=np.int64) for name in _INTS
        }
        columns |= {name: np.array([getattr(o, name) for o in outcomes], dtype=np.bool_) for name in _BOOLS}
        actions = np.array([ACTIONS.index(o.action) for o in outcomes], dtype=np.int8)
        return cls(decisions=tuple(o.decision for o in outcomes), action=actions, **columns)

    @classmethod
    def concat(cls, parts: Sequence[BatchOutcomes]) -> BatchOutcomes:
        """The outcomes of ``parts`` one after the other."""

        def joined(name: str, dtype: type[np.generic]) -> npt.NDArray[Any]:
            arrays = [getattr(part, name) for part in parts]
            return np.concatenate(arrays) if arrays else np.empty(0, dtype=dtype)

        columns = {name: joined(name, np.int64) for name in _INTS}
        columns |= {name: joined(name, np.bool_) for name in _BOOLS}
        decisions = tuple(d for part in parts for d in part.decisions)
        return cls(decisions=decisions, action=joined("action", np.int8), **columns)

    def total(self, name: str) -> int:
        """The sum of one count column (``records_read``, ``tombstones_retained``, ...)."""
        if name not in _COUNTS:
            raise ValueError(f"not a count of BatchOutcome: {name!r}")
        return int(getattr(self, name).sum())

    def count(self, action: BatchAction) -> int:
        return int(np.count_nonzero(self.action == ACTIONS.index(action)))

    def __len__(self) -> int:
        return len(self.decisions)

    @overload
    def __getitem__(self, index: int) -> BatchOutcome: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[BatchOutcome]: ...

    def __getitem__(self, index: int | slice) -> BatchOutcome | Sequence[BatchOutcome]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        row = range(len(self))[index]
        return BatchOutcome(
            base_offset=int(self.base_offset[row]),
            last_offset=int(self.last_offset[row]),
            decision=self.decisions[row],
            action=ACTIONS[int(self.action[row])],
            records_read=int(self.records_read[row]),
            records_retained=int(self.records_retained[row]),
            unkeyed_dropped=int(self.unkeyed_dropped[row]),
            horizon_stamped=bool(self.horizon_stamped[row]),
            bytes_read=int(self.bytes_read[row]),
            is_control=bool(self.is_control[row]),
            tombstones_read=int(self.tombstones_read[row]),
            tombstones_retained=int(self.tombstones_retained[row]),
            aborted_removed=int(self.aborted_removed[row]),
        )

    def __iter__(self) -> Iterator[BatchOutcome]:
        return (self[row] for row in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


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
    batches: BatchOutcomes
    map_keys: int = field(default=0, compare=False)
    """Distinct keys (key digests) in the round's offset map (0 when the map given cannot tell)."""

    @property
    def replaced(self) -> tuple[str, ...]:
        """The source segments the cleaned segments replace, in order."""
        return tuple(name for segment in self.segments for name in segment.sources)

    @property
    def records_read(self) -> int:
        return self.batches.total("records_read")

    @property
    def records_retained(self) -> int:
        return self.batches.total("records_retained")

    @property
    def tombstones_read(self) -> int:
        return self.batches.total("tombstones_read")

    @property
    def tombstones_retained(self) -> int:
        return self.batches.total("tombstones_retained")

    @property
    def aborted_removed(self) -> int:
        return self.batches.total("aborted_removed")

    def count(self, action: BatchAction) -> int:
        """How many source batches the round handled with ``action``."""
        return self.batches.count(action)

    @property
    def horizons_stamped(self) -> int:
        return int(np.count_nonzero(self.batches.horizon_stamped))

    @property
    def unkeyed_dropped(self) -> int:
        """Kafka's ``invalidMessagesRead``: unkeyed records removed from the mapped range."""
        return self.batches.total("unkeyed_dropped")


@dataclass(frozen=True, slots=True)
class RoundContext:
    """What every batch decision of one round shares."""

    offset_map: OffsetMap
    active: dict[int, ProducerState]
    upper_bound: int
    now_ms: int
    delete_retention_ms: int
    legacy_horizon_ms: int
    digest_table: DigestTable
    """``offset_map`` as a lookup table (built once per round)."""
