"""Hand-made cases for the differences a seed does not reliably show: each is the smallest input that shows
one rule (docs/fidelity.md)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from kafka_segments.records import Record, build_batch

from fidelity.generator import HOUR, T0, Case, Round
from fidelity.sides import oracle_genlog


def _batch(offset: int, keys: list[str], *, producer_id: int = -1, transactional: bool = False) -> bytes:
    records = [
        Record(offset + i, T0 + offset, key.encode(), b"v%d" % (offset + i)) for i, key in enumerate(keys)
    ]
    return build_batch(
        records,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=0 if producer_id >= 0 else -1,
        is_transactional=transactional,
    )


def retention_past_the_round() -> Case:
    """``compact,delete``: the round cleans [0, 18), then ``retention.ms`` deletes every segment and the log
    start offset becomes 19 (issue 21 point 2: Kafka's cleaner checkpoint stays 18)."""
    first = b"".join(_batch(offset, ["a", "b", "c"]) for offset in range(0, 18, 3))
    props = {"cleanup.policy": "compact,delete", "segment.bytes": "1048576", "retention.ms": str(HOUR)}
    round_ = Round(((0, first), (18, _batch(18, ["a"]))), mtime_s=T0 // 1000, now=T0 + 2 * HOUR)
    return Case(-1, props, None, None, (round_,))


def open_transaction_below_the_log_start() -> Case:
    """Producer 5's transaction (offsets 0-1) never ends; the log start offset (10) lies in the offset gap
    after the first segment's last batch (2-4). Loading the log, Kafka deletes the producer snapshots at or
    below the log start offset (``ProducerStateManager.truncateAndReload``) and replays batches from it
    only (``UnifiedLog.rebuildProducerState``): the transaction is forgotten and [10, 26) is cleaned
    (kafka-segments kept it open and cleaned nothing before it learnt the rule, docs/fidelity.md)."""
    first = _batch(0, ["a", "b"], producer_id=5, transactional=True) + _batch(2, ["c", "c", "d"])
    second = b"".join(_batch(offset, ["c", "d"]) for offset in range(20, 26, 2))
    props = {"cleanup.policy": "compact", "segment.bytes": "1048576", "min.cleanable.dirty.ratio": "0.0"}
    segments = ((0, first), (20, second), (26, _batch(26, ["e"])))
    return Case(-2, props, 10, None, (Round(segments, mtime_s=T0 // 1000, now=T0 + HOUR),))


def open_transaction_regrouped_above_the_log_start() -> Case:
    """``open_transaction_below_the_log_start``, then a second round: the first round grouped [0, 4] and
    [20, 25] into one cleaned segment ending above the log start offset, so Kafka's next load replays producer
    5's batch again and the transaction holds the last stable offset at the log start offset (10) again."""
    case = open_transaction_below_the_log_start()
    later = Round(((27, _batch(27, ["c", "d"])),), mtime_s=T0 // 1000 + 7200, now=T0 + 3 * HOUR)
    return replace(case, seed=-4, rounds=(*case.rounds, later))


def producer_below_the_log_start() -> Case:
    """Producer 9's only batch (offset 0, key ``a``) lies in a segment ending below the log start offset (10),
    and ``a`` is written again at 20. Kafka's load does not replay it (as for open transactions), so the
    producer is not active for the round and its emptied batch goes; an active producer's would stay as an
    empty batch (``Cleaner.cleanInto``: ``isBatchLastRecordOfProducer``)."""
    first = _batch(0, ["a"], producer_id=9) + _batch(1, ["b", "c", "d"])
    second = b"".join(_batch(offset, ["a", "e"]) for offset in range(20, 26, 2))
    props = {"cleanup.policy": "compact", "segment.bytes": "1048576", "min.cleanable.dirty.ratio": "0.0"}
    segments = ((0, first), (20, second), (26, _batch(26, ["f"])))
    return Case(-5, props, 10, None, (Round(segments, mtime_s=T0 // 1000, now=T0 + HOUR),))


def genlog_case(launcher: str, work: Path, *, records: int, keys: int, codec: str) -> Case:
    """A single round over ``oracle genlog``'s log (Kafka's own builder; the last record alone in the active
    segment) of ``records`` records of 10 B over ``keys`` keys, 1 MiB segments, cleaned a day later."""
    partition = work / "genlog" / "t-0"
    oracle_genlog(
        launcher,
        partition,
        records=records,
        value_bytes=10,
        codec=codec,
        keys=keys,
        segment_bytes=1 << 20,
        t0=T0,
    )
    segments = tuple((int(path.stem), path.read_bytes()) for path in sorted(partition.glob("*.log")))
    props = {"cleanup.policy": "compact", "segment.bytes": "1048576"}
    return Case(-3, props, None, None, (Round(segments, mtime_s=T0 // 1000, now=T0 + 24 * HOUR),))
