"""The effective configuration of one topic: Kafka's settings after precedence and defaults
(docs/configuration.md).

``TopicConfig`` is what the rules read; ``Config`` resolves it for any topic (a topic that the file does not
name gets the broker defaults). Every value carries where it came from (``sources``), for
``kafka-segments config check`` and for reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

CLEANUP_DELETE = "delete"
CLEANUP_COMPACT = "compact"
DEFAULT_MAX_BATCH_DECOMPRESSED_BYTES = 256 << 20
"""256 MiB: far above any batch a producer sends (``max.message.bytes`` bounds them compressed, 1 MiB by
default), far below the memory of a worker."""


@dataclass(frozen=True, slots=True)
class TopicConfig:
    """One topic's effective settings, with Kafka's meaning and units.

    Topic-level settings follow Kafka's ``LogConfig``; the broker-only settings the rules need
    (``producer.id.expiration.ms``, ``offsets.retention.minutes``, ``log.cleaner.enable``) are copied in so a
    rule needs nothing else.
    """

    topic: str
    cleanup_policy: frozenset[str]
    """Subset of {"delete", "compact"}; empty behaves as infinite retention (log-start-offset only)."""
    retention_ms: int
    """-1 (any negative): unlimited."""
    retention_bytes: int
    """-1 (any negative): unlimited."""
    segment_bytes: int
    """The effective segment size: ``internal.segment.bytes`` when set (tests only), else ``segment.bytes``
    (``LogConfig.segmentSize()``); compaction's grouping uses it."""
    segment_index_bytes: int
    index_interval_bytes: int
    file_delete_delay_ms: int
    delete_retention_ms: int
    min_compaction_lag_ms: int
    max_compaction_lag_ms: int
    min_cleanable_dirty_ratio: float
    message_timestamp_type: str
    """``CreateTime`` or ``LogAppendTime``."""
    max_message_bytes: int
    consumed_retention_enabled: bool
    """KIP-68: ``retention.commitoffset.enable`` (broker ``log.retention.commitoffset.enable``)."""
    consumed_retention_ms: int
    """KIP-68: ``retention.commitoffset.ms`` (broker ``log.retention.commitoffset.ms/.minutes/.hours``)."""
    required_groups: tuple[str, ...]
    """``kafka_segments.consumed.required.groups``: groups that must have consumed data before consumed
    retention may delete it (a group without an unexpired offset pins the partition)."""
    producer_id_expiration_ms: int
    offsets_retention_ms: int
    """``offsets.retention.minutes`` × 60000 (KIP-211 offset expiry)."""
    cleaner_enabled: bool
    """``log.cleaner.enable``: when false, compacted topics get neither cleaning nor retention."""
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)
    """Per setting name (topic-level names, ``internal.segment.bytes`` and the broker-only names above):
    where its value came from (``topic``, ``broker: <name>``, ``default``)."""
    segment_ms: int = 604_800_000
    """``segment.ms`` (broker ``log.roll.ms`` / ``log.roll.hours``): when Kafka rolls a segment. The lake
    never rolls segments; kept so the effective configuration is complete."""
    max_batch_decompressed_bytes: int = DEFAULT_MAX_BATCH_DECOMPRESSED_BYTES
    """``kafka_segments.compaction.max.batch.decompressed.bytes``: the most bytes one compressed batch may
    inflate to when compaction decodes it; a batch past it (a decompression bomb) leaves its partition
    uncleaned for the run (``DecompressionLimitError``), so a round's memory does not follow compression
    ratios."""

    @property
    def delete(self) -> bool:
        return CLEANUP_DELETE in self.cleanup_policy

    @property
    def compact(self) -> bool:
        return CLEANUP_COMPACT in self.cleanup_policy
