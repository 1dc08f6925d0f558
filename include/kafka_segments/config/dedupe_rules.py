"""The broker checks of the cleaner's offset map settings, when ``log.cleaner.dedupe.buffer.size`` is set.

Kafka's own checks, in the order a broker meets them at startup:

* ``log.cleaner.threads`` is ``atLeast(0)`` (``CleanerConfig.CONFIG_DEF``, checked per value), but
  ``KafkaConfig.validateValues`` divides the buffer by it: 0 threads stop the broker (division by zero).
* ``KafkaConfig.validateValues``: ``dedupeBufferSize / threads > 1024 * 1024`` (integer division), "must be
  at least 1MB per cleaner thread".
* ``Cleaner``'s precondition: ``offsetMap.slots * loadFactor > 1`` ("offset map is too small to fit in even a
  single message, so log cleaning will never make progress").

``log.cleaner.io.buffer.load.factor`` has no range of its own in Kafka; above 1 it lets a round try to put
more distinct keys than the map has slots, and Kafka's ``SkimpyOffsetMap.put`` then fails the round (the
partition becomes uncleanable; ``compaction.map_fill``). Without a dedupe buffer the map is unbounded and
the other two settings are not used, so nothing is checked.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_segments.config.catalogue import CLEANER_THREADS, DEDUPE_BUFFER_SIZE, DEDUPE_LOAD_FACTOR, Value
from kafka_segments.config.model import OffsetMapCapacity
from kafka_segments.config.problems import ConfigProblem
from kafka_segments.config.sections import Section

MIN_BYTES_PER_THREAD = 1024 * 1024
"""``KafkaConfig.validateValues``: the buffer per cleaner thread must be more than this."""


def dedupe_problems(broker: Section, values: Mapping[str, Value | None]) -> list[ConfigProblem]:
    """The first problem of the offset map settings (one line: each check needs the ones before it)."""
    size, threads, factor = values[DEDUPE_BUFFER_SIZE], values[CLEANER_THREADS], values[DEDUPE_LOAD_FACTOR]
    if not isinstance(size, int) or not isinstance(threads, int) or not isinstance(factor, float | int):
        return []
    rule = _threads_rule(threads) or _size_rule(size, threads) or _factor_rule(size, threads, float(factor))
    if rule is None:
        return []
    name, text = rule
    key = name if name in broker.values else DEDUPE_BUFFER_SIZE
    return [broker.problem(key, broker.values[key], text)]


def _threads_rule(threads: int) -> tuple[str, str] | None:
    if threads >= 1:
        return None
    return CLEANER_THREADS, (
        f"{DEDUPE_BUFFER_SIZE} is divided by {CLEANER_THREADS} ({threads}): it must be at least 1 "
        "(KafkaConfig.validateValues divides by it; a broker with 0 cleaner threads does not start)"
    )


def _size_rule(size: int, threads: int) -> tuple[str, str] | None:
    per_thread = size // threads if size >= 0 else -(-size // threads)
    if per_thread > MIN_BYTES_PER_THREAD:
        return None
    return DEDUPE_BUFFER_SIZE, (
        f"{DEDUPE_BUFFER_SIZE} must be at least 1MB per cleaner thread: {size} / {threads} thread(s) = "
        f"{per_thread} bytes, it must be more than {MIN_BYTES_PER_THREAD} (KafkaConfig.validateValues)"
    )


def _factor_rule(size: int, threads: int, factor: float) -> tuple[str, str] | None:
    capacity = OffsetMapCapacity.of(buffer_size=size, load_factor=factor, threads=threads)
    if capacity.slots * factor > 1:
        return None
    return DEDUPE_LOAD_FACTOR, (
        f"offset map is too small to fit in even a single message: {capacity.slots} slots x {factor} "
        f"must be more than 1 (Cleaner; raise {DEDUPE_LOAD_FACTOR} or {DEDUPE_BUFFER_SIZE})"
    )
