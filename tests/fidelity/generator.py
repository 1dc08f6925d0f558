"""Seeded Kafka partition logs for the differential suite: from one seed, a topic configuration, the
starting checkpoint files and several rounds of new data, each with the ``now`` the round runs at.

Everything the cleaner and retention distinguish appears with some probability in every case: updates and
tombstones, every codec, headers, unkeyed records, idempotent and transactional producers (committed,
aborted, open, spanning segments and rounds), control markers, legacy v0/v1 entries at the head of the log,
LogAppendTime batches, records without timestamps or from the future, offset gaps (2^31 ones between
segments included), a log start offset inside the first segment, cleaner checkpoints inside and outside the
log, small ``segment.bytes`` / ``segment.index.bytes`` for the grouping, dirty ratios that skip, compaction
lags, and retention by time and size. ``now`` moves past the delete horizons and lags between rounds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from kafka_segments.records import (
    CompressionType,
    ControlRecordType,
    EndTransactionMarker,
    Header,
    Record,
    TimestampType,
    build_batch,
    build_end_transaction_marker,
)
from kafka_segments.records.batch import NO_PRODUCER_ID, NO_SEQUENCE
from unit.compaction_helpers import legacy_message, legacy_wrapper

T0 = 1_790_000_000_000
"""Epoch ms of the first record (2026-09-21)."""
MINUTE = 60_000
HOUR = 60 * MINUTE
SPAN_2_31 = 2**31
CODECS = tuple(CompressionType)
CODEC_ODDS = {
    CompressionType.NONE: 0.6,
    CompressionType.GZIP: 0.5,
    CompressionType.SNAPPY: 0.3,
    CompressionType.LZ4: 0.5,
    CompressionType.ZSTD: 0.3,
}
"""How likely a case is to use each codec (snappy less often while its rebuilt bytes differ: a case stops
at its first round with a difference, docs/fidelity.md)."""
LEGACY_CODECS = (CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY)


@dataclass(frozen=True)
class Round:
    """New segments (base offset → bytes, the last one active), their mtime (epoch s) and the round's now."""

    segments: tuple[tuple[int, bytes], ...]
    mtime_s: int
    now: int


@dataclass(frozen=True)
class Case:
    """One generated input: the topic's Kafka properties, the starting checkpoints and the rounds."""

    seed: int
    props: dict[str, str]
    log_start_offset: int | None
    cleaner_checkpoint: int | None
    rounds: tuple[Round, ...]
    dedupe_buffer_size: int | None = None
    """``log.cleaner.dedupe.buffer.size`` (broker); ``None``: the oracle's default and the product's unset."""

    def describe(self) -> str:
        sizes = [sum(len(data) for _, data in r.segments) for r in self.rounds]
        return (
            f"seed {self.seed}: props {self.props}, log start {self.log_start_offset}, "
            f"cleaner checkpoint {self.cleaner_checkpoint}, rounds (bytes, now) "
            f"{[(size, r.now) for size, r in zip(sizes, self.rounds, strict=True)]}"
        )


@dataclass
class _Producer:
    producer_id: int
    transactional: bool
    epoch: int = 0
    sequence: int = 0
    open_txn: bool = False


@dataclass
class _Writer:
    """The log under construction: segments of batch bytes, the next offset and the producers' state."""

    rng: random.Random
    segment_bytes: int
    keys: int
    clock: int
    codecs: tuple[CompressionType, ...] = CODECS
    next_offset: int = 0
    legacy_left: int = 0
    segments: list[tuple[int, list[bytes]]] = field(default_factory=list)
    producers: list[_Producer] = field(default_factory=list)

    def roll(self, *, jump: int = 0) -> None:
        self.next_offset += jump
        if not self.segments or self.segments[-1][1]:
            self.segments.append((self.next_offset, []))
        else:
            self.segments[-1] = (self.next_offset, [])

    def append(self, batch: bytes, last_offset: int) -> None:
        batches = self.segments[-1][1]
        if batches and sum(map(len, batches)) + len(batch) > self.segment_bytes:
            self.roll()
            batches = self.segments[-1][1]
        batches.append(batch)
        self.next_offset = last_offset + 1
        if self.rng.random() < 0.04:
            self.next_offset += self.rng.randrange(1, 5)  # an offset gap, as a compacted source leaves

    def timestamp(self, now_hint: int) -> int:
        self.clock += self.rng.randrange(0, 2 * MINUTE)
        roll = self.rng.random()
        if roll < 0.03:
            return -1
        if roll < 0.06:
            return now_hint + self.rng.randrange(HOUR, 48 * HOUR)  # from the future
        return self.clock

    def record(self, offset: int, timestamp: int) -> Record:
        rng = self.rng
        key = None if rng.random() < 0.03 else f"k{rng.randrange(self.keys)}".encode()
        value = None if rng.random() < 0.15 else rng.randbytes(rng.randrange(0, 80))
        headers: tuple[Header, ...] = ()
        if rng.random() < 0.15:
            headers = tuple(
                Header(f"h{i}", None if rng.random() < 0.2 else rng.randbytes(rng.randrange(6)))
                for i in range(rng.randrange(1, 3))
            )
        return Record(offset, timestamp, key, value, headers)

    def data_batch(self, now_hint: int) -> None:
        rng = self.rng
        if self.legacy_left > 0:
            self.legacy_left -= 1
            self.legacy_batch()
            return
        producer = rng.choice(self.producers) if self.producers and rng.random() < 0.5 else None
        count = rng.randrange(1, 6)
        ts = self.timestamp(now_hint)
        records = [self.record(self.next_offset + i, ts if ts < 0 else ts + i) for i in range(count)]
        log_append = rng.random() < 0.08
        producer_id, epoch, sequence, transactional = NO_PRODUCER_ID, -1, NO_SEQUENCE, False
        if producer is not None:
            producer_id, epoch, sequence = producer.producer_id, producer.epoch, producer.sequence
            producer.sequence += count
            transactional = producer.transactional
            producer.open_txn = producer.open_txn or transactional
        batch = build_batch(
            records,
            compression=rng.choice(self.codecs),
            producer_id=producer_id,
            producer_epoch=epoch,
            base_sequence=sequence,
            is_transactional=transactional,
            timestamp_type=TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME,
            log_append_time=max(ts, self.clock) if log_append else None,
        )
        self.append(batch, records[-1].offset)

    def legacy_batch(self) -> None:
        rng = self.rng
        codec = rng.choice(LEGACY_CODECS)
        magic = rng.choice((0, 1)) if codec == CompressionType.NONE else 1  # wrappers here are v1
        ts = self.clock
        count = rng.randrange(1, 4) if codec != CompressionType.NONE else 1
        messages = []
        for i in range(count):
            record = self.record(i if codec != CompressionType.NONE else self.next_offset, ts)
            messages.append(legacy_message(magic, record.offset, record.key, record.value, timestamp=ts))
        if codec == CompressionType.NONE:
            self.append(messages[0], self.next_offset)
            return
        last = self.next_offset + count - 1
        inner = b"".join(messages)
        self.append(legacy_wrapper(last, codec, inner, timestamp=ts), last)

    def marker(self, producer: _Producer, now_hint: int) -> None:
        kind = ControlRecordType.COMMIT if self.rng.random() < 0.6 else ControlRecordType.ABORT
        ts = max(self.timestamp(now_hint), self.clock)
        batch = build_end_transaction_marker(
            EndTransactionMarker(kind, 0),
            offset=self.next_offset,
            timestamp=ts,
            producer_id=producer.producer_id,
            producer_epoch=producer.epoch,
        )
        producer.open_txn = False
        self.append(batch, self.next_offset)

    def step(self, now_hint: int) -> None:
        open_txns = [p for p in self.producers if p.open_txn]
        if open_txns and self.rng.random() < 0.2:
            self.marker(self.rng.choice(open_txns), now_hint)
        elif self.rng.random() < 0.04:
            self.roll()
        elif self.rng.random() < 0.01:
            self.roll(jump=SPAN_2_31 + self.rng.randrange(1000))  # the grouping's 2^31 offset span
        else:
            self.data_batch(now_hint)

    def take_round(self) -> tuple[tuple[int, bytes], ...]:
        """The segments written since the last call (the last one active); the next round starts a new one."""
        taken = tuple((base, b"".join(batches)) for base, batches in self.segments if batches)
        self.segments = []
        self.roll()
        return taken


def _props(rng: random.Random, segment_bytes: int) -> dict[str, str]:
    policy = rng.choices(("compact", "compact,delete", "delete"), weights=(6, 3, 1))[0]
    props = {
        "cleanup.policy": policy,
        "segment.bytes": str(segment_bytes),
        "min.cleanable.dirty.ratio": rng.choice(("0.0", "0.1", "0.5", "0.9")),
        "delete.retention.ms": str(rng.choice((0, 10 * MINUTE, 2 * HOUR, 86_400_000))),
    }
    if rng.random() < 0.3:
        props["min.compaction.lag.ms"] = str(rng.choice((5 * MINUTE, HOUR, 6 * HOUR)))
    if rng.random() < 0.3:
        least = int(props.get("min.compaction.lag.ms", "0"))
        props["max.compaction.lag.ms"] = str(
            rng.choice([lag for lag in (30 * MINUTE, 3 * HOUR, 8 * HOUR) if lag >= least])
        )
    if rng.random() < 0.3:
        interval = rng.choice((128, 512))
        largest_time_index = 12 * (segment_bytes // interval + 2)  # what recovering an input segment needs
        props["index.interval.bytes"] = str(interval)
        props["segment.index.bytes"] = str(largest_time_index * rng.choice((1, 2, 3)))
    if "delete" in policy:
        if rng.random() < 0.6:
            props["retention.ms"] = str(rng.choice((HOUR, 4 * HOUR, 12 * HOUR)))
        if rng.random() < 0.5:
            props["retention.bytes"] = str(rng.choice((2, 4, 8)) * segment_bytes)
    return props


def _starting_offsets(
    rng: random.Random, first: tuple[tuple[int, bytes], ...]
) -> tuple[int | None, int | None]:
    """A log start offset (sometimes inside the first segment) and a cleaner checkpoint (sometimes out of
    range) for the first round's segments."""
    first_base, last_base = first[0][0], first[-1][0]
    log_start = None
    if rng.random() < 0.2 and len(first) > 1:
        log_start = rng.randrange(first_base, first[1][0] + 1)
    checkpoint = None
    roll = rng.random()
    if roll < 0.15:
        checkpoint = rng.randrange(first_base, last_base + 1)
    elif roll < 0.22:
        checkpoint = last_base + rng.randrange(1000, 10**6)  # above the log end offset
    elif roll < 0.27 and log_start is not None and log_start > first_base:
        checkpoint = rng.randrange(first_base, log_start)  # below the log start offset
    return log_start, checkpoint


def generate(seed: int, *, scale: int = 1) -> Case:
    """The case of ``seed``; ``scale`` multiplies the amount of data per round."""
    rng = random.Random(seed)
    segment_bytes = rng.choice((1024, 2048, 4096, 8192))
    writer = _Writer(rng, segment_bytes=segment_bytes, keys=rng.choice((5, 20, 100)), clock=T0)
    writer.codecs = tuple(c for c in CODECS if rng.random() < CODEC_ODDS[c]) or (CompressionType.NONE,)
    writer.legacy_left = rng.choice((0, 0, 0, rng.randrange(1, 8)))
    writer.producers = [
        _Producer(1000 + i, transactional=rng.random() < 0.6) for i in range(rng.randrange(4))
    ]
    writer.roll()
    rounds = []
    now = T0
    for _ in range(rng.randrange(1, 4)):
        for _ in range(rng.randrange(10, 80) * scale):
            writer.step(now)
        now = max(now, writer.clock) + rng.choice((MINUTE, 20 * MINUTE, 2 * HOUR, 7 * HOUR, 30 * HOUR))
        segments = writer.take_round()
        if not segments:
            continue
        rounds.append(Round(segments, mtime_s=writer.clock // 1000, now=now))
        writer.clock = now
    log_start, checkpoint = _starting_offsets(rng, rounds[0].segments)
    return Case(seed, _props(rng, segment_bytes), log_start, checkpoint, tuple(rounds))
