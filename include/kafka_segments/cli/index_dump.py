"""Dumping ``.index``, ``.timeindex`` and ``.txnindex`` files for ``inspect``, as ``DumpLogSegments`` does.

Lines: ``offset: O position: P`` (offset index), ``timestamp: T offset: O`` (time index), ``version: 0
producerId: … firstOffset: … lastOffset: … lastStableOffset: …`` (transaction index). When the segment's
``.log`` lies beside the index, the entries are checked against it and every mismatch is reported."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from kafka_segments.errors import CorruptIndexError, InvalidFileNameError, KafkaSegmentsError
from kafka_segments.records.batch import BatchHeader
from kafka_segments.records.log import iter_batches
from kafka_segments.segment import (
    FileKind,
    IndexProblem,
    check_offset_index,
    check_time_index,
    check_txn_index,
    parse_offset_index,
    parse_segment_file_name,
    parse_time_index,
    parse_txn_index,
)


class Report(Protocol):
    lines: list[str]
    document: dict[str, Any]

    def fail(self, problem: str, **details: Any) -> None: ...


def dump_index_file(path: Path, report: Report) -> None:
    """Fill ``report`` with the entries of the index file at ``path`` and any problem found."""
    try:
        name = parse_segment_file_name(path.name)
    except InvalidFileNameError as exc:
        report.fail(f"{path}: not a Kafka segment or index file ({exc})")
        return
    dumper = _DUMPERS.get(name.kind)
    if dumper is None:
        report.fail(f"{path}: {name.kind.value} files are not supported by inspect")
        return
    try:
        problems = dumper(path, path.read_bytes(), name.base_offset, report)
    except CorruptIndexError as exc:
        report.fail(str(exc), position=exc.position)
        return
    if problems:
        report.lines.append(f"Mismatches in {path}:")
        report.lines.extend(f"  {problem}" for problem in problems)
        report.document["mismatches"] = [str(problem) for problem in problems]
        report.fail(f"{path}: {len(problems)} entries disagree with {_log_of(path).name}")


def _dump_offset_index(path: Path, data: bytes, base_offset: int, report: Report) -> list[IndexProblem]:
    index = parse_offset_index(data, base_offset=base_offset, path=str(path))
    if not index.entries:
        report.lines.append(f"{path} is empty.")
    report.lines.extend(f"offset: {e.offset} position: {e.position}" for e in index.entries)
    report.document["entries"] = [{"offset": e.offset, "position": e.position} for e in index.entries]
    batches = _log_headers(path)
    return [] if batches is None else list(check_offset_index(index, batches))


def _dump_time_index(path: Path, data: bytes, base_offset: int, report: Report) -> list[IndexProblem]:
    index = parse_time_index(data, base_offset=base_offset, path=str(path))
    report.lines.extend(f"timestamp: {e.timestamp} offset: {e.offset}" for e in index.entries)
    report.document["entries"] = [{"timestamp": e.timestamp, "offset": e.offset} for e in index.entries]
    batches = _log_headers(path)
    return [] if batches is None else list(check_time_index(index, batches, inactive=False))


def _dump_txn_index(path: Path, data: bytes, base_offset: int, report: Report) -> list[IndexProblem]:
    entries = parse_txn_index(data, base_offset=base_offset, path=str(path))
    report.lines.extend(
        f"version: 0 producerId: {t.producer_id} firstOffset: {t.first_offset} "
        f"lastOffset: {t.last_offset} lastStableOffset: {t.last_stable_offset}"
        for t in entries
    )
    report.document["entries"] = [
        {
            "producer_id": t.producer_id,
            "first_offset": t.first_offset,
            "last_offset": t.last_offset,
            "last_stable_offset": t.last_stable_offset,
        }
        for t in entries
    ]
    log = _log_of(path)
    if not log.exists():
        return []
    try:
        log_entries = list(iter_batches(log.read_bytes(), segment=str(log), verify_crc=False))
        return list(check_txn_index(entries, log_entries, base_offset=base_offset))
    except KafkaSegmentsError:
        return []  # a damaged log is reported by inspecting the .log itself


_Dumper = Callable[[Path, bytes, int, Report], list[IndexProblem]]
_DUMPERS: dict[FileKind, _Dumper] = {
    FileKind.INDEX: _dump_offset_index,
    FileKind.TIME_INDEX: _dump_time_index,
    FileKind.TXN_INDEX: _dump_txn_index,
}


def _log_of(path: Path) -> Path:
    return path.with_name(path.name.split(".")[0] + FileKind.LOG.value)


def _log_headers(path: Path) -> list[BatchHeader] | None:
    log = _log_of(path)
    if not log.exists():
        return None
    try:
        return [entry.header for entry in iter_batches(log.read_bytes(), segment=str(log), verify_crc=False)]
    except KafkaSegmentsError:
        return None
