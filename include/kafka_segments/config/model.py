"""The effective configuration of one topic (``TopicConfig``), what the rules read: Kafka's settings after
precedence and defaults, each value with where it came from (``sources``; docs/configuration.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kafka_segments.records.compression import MAX_INFLATED_BATCH_BYTES

CLEANUP_DELETE = "delete"
CLEANUP_COMPACT = "compact"
DEFAULT_MAX_BATCH_DECOMPRESSED_BYTES = MAX_INFLATED_BATCH_BYTES
"""256 MiB: far above any batch a producer sends (``max.message.bytes`` bounds them compressed, 1 MiB by
default), far below the memory of a worker; every other decode of records uses the same bound."""
MAP_BYTES_PER_ENTRY = 24
"""``SkimpyOffsetMap.bytesPerEntry`` with the cleaner's MD5 (Kafka 4.1 ``CleanerConfig.HASH_ALGORITHM``): a
16-byte digest and an 8-byte offset per slot."""
JAVA_INT_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class OffsetMapCapacity:
    """The size of a cleaner thread's offset map (``LogCleaner.CleanerThread``, ``SkimpyOffsetMap``,
    ``Cleaner.buildOffsetMapForSegment``).

    ``slots``: ``min(log.cleaner.dedupe.buffer.size / log.cleaner.threads, Integer.MAX_VALUE) / 24``;
    ``max_entries``: ``(int) (slots * log.cleaner.io.buffer.load.factor)``, the number of distinct keys after
    which the next keyed record ends the round (Kafka's ``maxDesiredMapSize``).
    """

    slots: int
    max_entries: int

    @classmethod
    def of(cls, *, buffer_size: int, load_factor: float, threads: int) -> OffsetMapCapacity:
        """The capacity Kafka computes from the three broker settings (``threads`` >= 1)."""
        per_thread = min(_java_long_div(buffer_size, threads), JAVA_INT_MAX)
        slots = _java_long_div(per_thread, MAP_BYTES_PER_ENTRY)
        return cls(slots, _java_int_cast(slots * load_factor))


def _java_long_div(dividend: int, divisor: int) -> int:
    """Java's integer division: the quotient truncated toward zero."""
    quotient = abs(dividend) // abs(divisor)
    return quotient if (dividend >= 0) == (divisor > 0) else -quotient


def _java_int_cast(value: float) -> int:
    """Java's ``(int)`` of a finite double: truncated toward zero, saturated to the int range."""
    return max(-JAVA_INT_MAX - 1, min(JAVA_INT_MAX, int(value)))


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
    dedupe_buffer_size: int | None = None
    """``log.cleaner.dedupe.buffer.size``; ``None`` (not set): the offset map is unbounded, a round always
    reaches the end of the cleanable range (docs/compaction.md)."""
    dedupe_buffer_load_factor: float = 0.9
    """``log.cleaner.io.buffer.load.factor`` (used only with ``dedupe_buffer_size``)."""
    cleaner_threads: int = 1
    """``log.cleaner.threads``: the dedupe buffer is divided among them (used only with
    ``dedupe_buffer_size``)."""

    @property
    def offset_map_capacity(self) -> OffsetMapCapacity | None:
        """The bounded offset map of a round, or ``None`` for the unbounded one (no dedupe buffer set)."""
        if self.dedupe_buffer_size is None:
            return None
        return OffsetMapCapacity.of(
            buffer_size=self.dedupe_buffer_size,
            load_factor=self.dedupe_buffer_load_factor,
            threads=self.cleaner_threads,
        )

    @property
    def delete(self) -> bool:
        return CLEANUP_DELETE in self.cleanup_policy

    @property
    def compact(self) -> bool:
        return CLEANUP_COMPACT in self.cleanup_policy
