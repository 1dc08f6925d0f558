"""One partition's cleaning round as a task an engine runs (plain values: it may be shipped to a worker)."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.compaction.eligibility import CompactionCandidate
from kafka_segments.config.model import TopicConfig
from kafka_segments.lake.runs import RunRecord
from kafka_segments.state import PartitionState


@dataclass(frozen=True, slots=True)
class CompactionTask:
    """One partition's round, as shipped to a worker (plain values; the worker opens ``lake``)."""

    lake: str
    run: RunRecord
    state: PartitionState
    config: TopicConfig
    candidate: CompactionCandidate
    write: bool = True
    """Stage the output objects (``False``: compute the entries and write nothing)."""
