"""What the differential suite compares after each round, as a list of named differences (empty: the same).

Each difference is ``Difference(check, detail)``; ``check`` names what differed (``segments.files``,
``batch.crc``, ``batch.zstd-bytes``,
``record``, ``checkpoint.cleaner-offset-checkpoint``, ``report.cleanable.first_dirty_offset``,
``report.stats.messages_read``, ...), so a known difference can be recognised by its check alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TIMING_FIELDS = frozenset({"mtime"})
"""Dump fields not compared on the export (it writes files now; the lake's mtimes are compared instead)."""
COMPRESSED_BYTES_ONLY = frozenset({"size", "crc", "pos"})
"""A zstd or snappy batch differing only in these fields has the same records compressed to other bytes:
``batch.zstd-bytes`` / ``batch.snappy-bytes``."""
STATS = ("bytes_read", "bytes_written", "messages_read", "messages_written")
"""Kafka's CleanerStats fields the product reports under the same names."""


@dataclass(frozen=True)
class Difference:
    check: str
    detail: str

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}"


def _segment_files(segments: Sequence[Mapping[str, Any]]) -> list[str]:
    return [s["file"] for s in segments]


def compare_segments(
    kafka: Sequence[Mapping[str, Any]], ours: Sequence[Mapping[str, Any]]
) -> list[Difference]:
    """Files and sha256 of every ``.log``, then the first differing batch header field and record of
    each segment whose bytes differ."""
    if _segment_files(kafka) != _segment_files(ours):
        return [Difference("segments.files", f"Kafka {_segment_files(kafka)}, ours {_segment_files(ours)}")]
    found = []
    for k_seg, o_seg in zip(kafka, ours, strict=True):
        if k_seg["sha256"] == o_seg["sha256"]:
            continue
        found.extend(_compare_batches(k_seg["file"], k_seg["batches"], o_seg["batches"]))
        if not found:
            found.append(Difference("segments.sha256", f"{k_seg['file']}: same decoded batches, other bytes"))
    return found


def _compare_batches(
    file: str, kafka: Sequence[Mapping[str, Any]], ours: Sequence[Mapping[str, Any]]
) -> list[Difference]:
    if len(kafka) != len(ours):
        k_spans = [(b["base_offset"], b["last_offset"]) for b in kafka]
        o_spans = [(b["base_offset"], b["last_offset"]) for b in ours]
        return [Difference("segments.batches", f"{file}: Kafka {k_spans}, ours {o_spans}")]
    for k_batch, o_batch in zip(kafka, ours, strict=True):
        where = f"{file} batch at offset {k_batch['base_offset']}"
        fields = sorted((set(k_batch) | set(o_batch)) - {"records"})
        differing = [f for f in fields if k_batch.get(f) != o_batch.get(f)]
        records = [
            Difference("record", f"{where}: Kafka {k}, ours {o}")
            for k, o in zip(k_batch.get("records", []), o_batch.get("records", []), strict=False)
            if k != o
        ]
        if len(k_batch.get("records", [])) != len(o_batch.get("records", [])):
            records.append(Difference("record", f"{where}: record counts differ"))
        codec = k_batch.get("compression")
        if not records and set(differing) <= COMPRESSED_BYTES_ONLY and codec in ("zstd", "snappy"):
            return [
                Difference(
                    f"batch.{codec}-bytes", f"{where}: Kafka {k_batch['size']} bytes, ours {o_batch['size']}"
                )
            ]
        found = [
            Difference(f"batch.{f}", f"{where}: Kafka {k_batch.get(f)}, ours {o_batch.get(f)}")
            for f in differing
        ]
        if found or records:
            return found + records[:3]
    return []


def compare_mtimes(kafka: Sequence[Mapping[str, Any]], ours: Mapping[int, int]) -> list[Difference]:
    """Kafka's ``.log`` mtimes against the last-modified times the lake keeps (non-empty segments)."""
    k_times = {s["base_offset"]: s["mtime"] for s in kafka if s["size"]}
    o_times = {base: ms for base, ms in ours.items() if base in k_times}
    if k_times != o_times:
        return [Difference("segments.mtime", f"Kafka {k_times}, ours {o_times}")]
    return []


def compare_txn_indexes(kafka: Mapping[int, bytes], ours: Mapping[int, bytes]) -> list[Difference]:
    """The ``.txnindex`` of every segment a run wrote against Kafka's for the same base offset."""
    return [
        Difference("segments.txnindex", f"segment {base}: Kafka {kafka[base].hex()}, ours {data.hex()}")
        for base, data in sorted(ours.items())
        if kafka[base] != data
    ]


def read_checkpoint(path: Path) -> dict[str, int]:
    """``topic partition`` → offset of a checkpoint file (empty when absent or empty)."""
    if not path.exists():
        return {}
    lines = path.read_text().split("\n")
    entries = [line.split() for line in lines[2:] if line.strip()]
    return {f"{topic} {partition}": int(offset) for topic, partition, offset in entries}


STALE_CHECKPOINT = "checkpoint.kept-below-log-start"
"""Kafka rewrote an invalid cleaner checkpoint at its look (``forceUpdateCheckpoint``) and ours kept it."""


def compare_checkpoints(
    kafka_dir: Path, our_dir: Path, names: Sequence[str], *, reset_to: int | None = None
) -> list[Difference]:
    """Both checkpoint files. ``reset_to``: the first dirty offset Kafka's look stored because the
    checkpoint was invalid; a cleaner checkpoint that is that value on Kafka's side and below it on ours is
    told apart as ``STALE_CHECKPOINT``."""
    found = []
    for name in names:
        kafka, ours = read_checkpoint(kafka_dir / name), read_checkpoint(our_dir / name)
        if kafka == ours:
            continue
        stale = reset_to is not None and set(kafka) == set(ours)
        stale = stale and all(
            kafka[tp] == reset_to and ours[tp] < kafka[tp] for tp in kafka if kafka[tp] != ours[tp]
        )
        check = STALE_CHECKPOINT if stale and name == "cleaner-offset-checkpoint" else f"checkpoint.{name}"
        found.append(Difference(check, f"Kafka {kafka}, ours {ours}"))
    return found


def checkpoint_reset(kafka: Mapping[str, Any]) -> int | None:
    """The first dirty offset the oracle's look stored for an invalid checkpoint, else ``None``."""
    cleanable = kafka.get("cleanable") or {}
    return cleanable["first_dirty_offset"] if cleanable.get("force_update_checkpoint") else None


def our_partition(report: Mapping[str, Any]) -> Mapping[str, Any] | None:
    partitions = (report.get("compaction") or {}).get("partitions") or []
    return next(iter(partitions), None)


def round_down(offset: int | None, bases: Sequence[int]) -> int | None:
    """The base offset of the segment holding ``offset`` (``offset`` itself below the first segment)."""
    if offset is None:
        return None
    return max((base for base in bases if base <= offset), default=offset)


def compare_report(
    kafka: Mapping[str, Any], report: Mapping[str, Any], bases: Sequence[int]
) -> list[Difference]:
    """The product's compaction report against the oracle's cleanable range, eligibility (and whether the
    round was forced by ``max.compaction.lag.ms``) and CleanerStats.

    Kafka's ``cleanableOffsets`` reports the first uncleanable offset where the rule put it (the last stable
    offset may be mid-segment); the product reports the round's upper bound, rounded down to the base offset
    of the segment holding it (``bases``: Kafka's segments before the round), so Kafka's is rounded the same
    way before they are compared."""
    if not kafka["policy"]["compact"]:
        return []
    ours = our_partition(report)
    if ours is None:
        return [Difference("report.partition", "no compaction entry in the report")]
    found: list[Difference] = []

    def check(name: str, k: object, o: object) -> None:
        same = math.isclose(k, o, rel_tol=1e-9) if isinstance(k, float) and isinstance(o, float) else k == o
        if not same:
            found.append(Difference(f"report.{name}", f"Kafka {k}, ours {o}"))

    cleanable = kafka["cleanable"] or {}
    check("cleanable.first_dirty_offset", cleanable.get("first_dirty_offset"), ours["first_dirty_offset"])
    uncleanable = round_down(cleanable.get("first_uncleanable_offset"), bases)
    check("cleanable.first_uncleanable_offset", uncleanable, ours["first_uncleanable_offset"])
    if cleanable and cleanable["total_bytes"]:  # no bytes: Kafka's ratio is 0/0 (NaN), the report's 0.0
        check(
            "cleanable.cleanable_ratio",
            float(cleanable["cleanable_ratio"]),
            float(ours["dirty_ratio"]["before"]),
        )
        forced = ours["checkpoint"]["state"] in ("below-log-start", "above-log-end")
        check("cleanable.force_update_checkpoint", cleanable["force_update_checkpoint"], forced)
    check("checkpoint_before", kafka["checkpoint_before"], ours["checkpoint"]["before"])
    check("eligible", kafka["eligible"], ours["status"] == "cleaned")
    check("max_compaction_delay_ms", kafka["max_compaction_delay_ms"], ours["max_compaction_delay_ms"])
    if kafka["eligible"] and ours["status"] == "cleaned":
        check("end_offset", kafka["end_offset"], ours["end_offset"])
        lagging = ours["eligibility"] == "max.compaction.lag.ms"
        check("round.need_compaction_now", kafka["round"]["need_compaction_now"], lagging)
        for name in STATS:
            check(f"stats.{name}", kafka["stats"][name], ours["stats"][name])
    return found
