"""``kafka-segments inspect FILE...``: Kafka's ``kafka-dump-log.sh`` for segment and index files, in
``DumpLogSegments``' line format. Damage is reported after the valid part (``Found N invalid bytes at the end
of <file>: <reason>``) and makes the command exit 1; nothing is raised past this module for a corrupt file."""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kafka_segments.cli.common import EXIT_OK, EXIT_PROBLEM, Commands, add_json
from kafka_segments.cli.index_dump import dump_index_file
from kafka_segments.coordinator.dump_log import (
    parse_offsets_record,
    parse_share_group_state_record,
    parse_transaction_log_record,
)
from kafka_segments.errors import CorruptRecordError
from kafka_segments.records.batch import NO_SEQUENCE, BatchHeader, increment_sequence
from kafka_segments.records.control import (
    ControlKey,
    ControlRecordError,
    ControlRecordType,
    EndTransactionMarker,
)
from kafka_segments.records.log import Entry, iter_batches
from kafka_segments.records.record import Record

TIMESTAMP_TYPE_NAMES = {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}
LOG_SUFFIX = ".log"

Decoder = Callable[..., tuple[str, str | None]]
"""``(key, value, *, offset)`` -> the ``key:`` and ``payload:`` texts (payload ``None``: not printed)."""
DECODERS: dict[str, Decoder] = {
    "offsets": parse_offsets_record,
    "transaction_log": parse_transaction_log_record,
    "share_group_state": parse_share_group_state_record,
}


def add_parsers(commands: Commands) -> None:
    """Add ``inspect`` to the command line."""
    sub = commands.add_parser(
        "inspect",
        help="print a segment or index file like kafka-dump-log.sh",
        description=(
            "Print Kafka segment (.log) and index (.index, .timeindex, .txnindex) files like Kafka's "
            "kafka-dump-log.sh: one line per batch by default, records with --records, JSON with --json. "
            "Corruption is reported with its byte position and offset (exit code 1), never a crash."
        ),
    )
    sub.add_argument("files", nargs="+", metavar="FILE", help="segment or index files")
    sub.add_argument("--records", action="store_true", help="also print every record with key and payload")
    decoders = sub.add_mutually_exclusive_group()
    decoders.add_argument(
        "--offsets-decoder",
        dest="decoder",
        action="store_const",
        const="offsets",
        help="decode records as __consumer_offsets records, as kafka-dump-log.sh does (implies --records)",
    )
    decoders.add_argument(
        "--transaction-log-decoder",
        dest="decoder",
        action="store_const",
        const="transaction_log",
        help="decode records as __transaction_state records, as kafka-dump-log.sh does (implies --records)",
    )
    decoders.add_argument(
        "--share-group-state-decoder",
        dest="decoder",
        action="store_const",
        const="share_group_state",
        help="decode records as __share_group_state records (share groups' ShareSnapshot and ShareUpdate), "
        "as kafka-dump-log.sh does (implies --records)",
    )
    add_json(sub)
    sub.add_argument(
        "--no-verify-crc", dest="verify_crc", action="store_false", help="report CRCs but do not fail on them"
    )
    sub.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Dump every file; return 1 when any of them is damaged or unreadable as Kafka data."""
    decoder = DECODERS[args.decoder] if args.decoder else None
    reports = [
        inspect_file(Path(name), records=args.records, verify_crc=args.verify_crc, decoder=decoder)
        for name in args.files
    ]
    if args.json:
        json.dump({"files": [report.document for report in reports]}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for report in reports:
            sys.stdout.write("".join(line + "\n" for line in report.lines))
    for report in reports:
        if report.problem:
            print(f"kafka-segments inspect: {report.problem}", file=sys.stderr)
    return EXIT_PROBLEM if any(report.problem for report in reports) else EXIT_OK


class FileReport:
    """What inspecting one file produced: text lines, a JSON document, and the problem found (if any)."""

    def __init__(self, path: Path, kind: str) -> None:
        self.lines: list[str] = [f"Dumping {path}"]
        self.document: dict[str, Any] = {"file": str(path), "kind": kind, "problem": None}
        self.problem: str | None = None

    def fail(self, problem: str, **details: Any) -> None:
        self.problem = problem
        self.document["problem"] = {"message": problem, **details}


def inspect_file(
    path: Path, *, records: bool = False, verify_crc: bool = True, decoder: Decoder | None = None
) -> FileReport:
    """One file's report; a ``decoder`` (``DECODERS``) prints every record with its key and value decoded."""
    suffix = path.suffix
    if suffix != LOG_SUFFIX:
        report = FileReport(path, suffix.lstrip(".") or "unknown")
        if not path.exists():
            raise FileNotFoundError(f"No such file: {path}")
        dump_index_file(path, report)
        return report
    report = FileReport(path, "log")
    data = path.read_bytes()
    start_offset = _start_offset(path)
    if start_offset is not None:
        report.lines.append(f"Log starting offset: {start_offset}")
    report.document["start_offset"] = start_offset
    report.document["batches"] = batches = []
    valid_bytes = 0
    try:
        for entry in iter_batches(data, segment=str(path), verify_crc=False):
            batches.append(_dump_entry(entry, report.lines, records=records, decoder=decoder))
            valid_bytes = entry.header.position + entry.header.size_in_bytes
    except CorruptRecordError as damage:
        _report_damage(report, damage, len(data) - valid_bytes)
        return report
    invalid = [b for b in batches if not b["is_valid"]]
    if invalid and verify_crc:
        first = invalid[0]
        report.fail(
            f"{path}: {len(invalid)} batch(es) with an invalid CRC, the first at byte {first['position']} "
            f"(offset {first['base_offset']})",
            position=first["position"],
            offset=first["base_offset"],
        )
    return report


def _dump_entry(entry: Entry, lines: list[str], *, records: bool, decoder: Decoder | None) -> dict[str, Any]:
    header = entry.header
    is_valid = entry.is_valid()
    lines.append(batch_line(header, is_valid))
    document = batch_document(header, is_valid)
    if records or decoder is not None:
        document["records"] = [dump_record(header, r, lines, decoder=decoder) for r in entry.records]
    return document


def batch_line(header: BatchHeader, is_valid: bool) -> str:
    if header.magic >= 2:
        horizon = header.delete_horizon_ms
        head = (
            f"baseOffset: {header.base_offset} lastOffset: {header.last_offset} "
            f"count: {header.records_count} "
            f"baseSequence: {header.base_sequence} lastSequence: {header.last_sequence} "
            f"producerId: {header.producer_id} producerEpoch: {header.producer_epoch} "
            f"partitionLeaderEpoch: {header.partition_leader_epoch} "
            f"isTransactional: {_bool(header.is_transactional)} isControl: {_bool(header.is_control)} "
            f"deleteHorizonMs: {'OptionalLong.empty' if horizon is None else f'OptionalLong[{horizon}]'}"
        )
    else:
        head = f"offset: {header.last_offset}"
    return (
        f"{head} position: {header.position} {TIMESTAMP_TYPE_NAMES[header.timestamp_type]}: "
        f"{header.max_timestamp} size: {header.size_in_bytes} magic: {header.magic} "
        f"compresscodec: {header.compression.name.lower()} crc: {header.crc} isvalid: {_bool(is_valid)}"
    )


def batch_document(header: BatchHeader, is_valid: bool) -> dict[str, Any]:
    return {
        "base_offset": header.base_offset,
        "last_offset": header.last_offset,
        "count": header.records_count,
        "base_sequence": header.base_sequence,
        "last_sequence": header.last_sequence,
        "producer_id": header.producer_id,
        "producer_epoch": header.producer_epoch,
        "partition_leader_epoch": header.partition_leader_epoch,
        "is_transactional": header.is_transactional,
        "is_control": header.is_control,
        "delete_horizon_ms": header.delete_horizon_ms,
        "position": header.position,
        "timestamp_type": TIMESTAMP_TYPE_NAMES[header.timestamp_type],
        "max_timestamp": header.max_timestamp,
        "base_timestamp": header.base_timestamp,
        "size": header.size_in_bytes,
        "magic": header.magic,
        "compression": header.compression.name.lower(),
        "crc": header.crc,
        "is_valid": is_valid,
    }


def dump_record(
    header: BatchHeader, record: Record, lines: list[str], *, decoder: Decoder | None = None
) -> dict[str, Any]:
    sequence = _record_sequence(header, record)
    parts = [
        f"| offset: {record.offset} {TIMESTAMP_TYPE_NAMES[header.timestamp_type]}: {record.timestamp}",
        f"keySize: {_size(record.key)} valueSize: {_size(record.value)}",
    ]
    document: dict[str, Any] = {
        "offset": record.offset,
        "timestamp": record.timestamp,
        "key_size": _size(record.key),
        "value_size": _size(record.value),
        "sequence": sequence,
        "headers": [{"key": h.key, "value_base64": _b64(h.value)} for h in record.headers],
        "key_base64": _b64(record.key),
        "value_base64": _b64(record.value),
    }
    if header.magic >= 2:
        parts.append(f"sequence: {sequence} headerKeys: [{','.join(h.key for h in record.headers)}]")
    if header.is_control:
        control = _describe_control(record)
        parts.append(control)
        document["control"] = control.strip()
    elif decoder is not None:
        key, payload = decoder(record.key, record.value, offset=record.offset)
        parts.extend([f"key: {key}"] + ([] if payload is None else [f"payload: {payload}"]))
        document["decoded"] = {"key": key, "payload": payload}
    else:
        parts.extend(_contents(record))
    lines.append(" ".join(parts))
    return document


def _contents(record: Record) -> Iterator[str]:
    if record.key is not None:
        yield f"key: {_text(record.key)}"
    if record.value is not None:
        yield f"payload: {_text(record.value)}"


def _describe_control(record: Record) -> str:
    try:
        key = ControlKey.parse(record.key)
        if key.type in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
            marker = EndTransactionMarker.parse(record)
            return f"endTxnMarker: {marker.type.name} coordinatorEpoch: {marker.coordinator_epoch}"
        return f"controlType: {key.type.name}({key.type_id})"
    except ControlRecordError as exc:
        return f"controlType: INVALID ({exc})"


def _record_sequence(header: BatchHeader, record: Record) -> int:
    if header.magic < 2 or header.base_sequence == NO_SEQUENCE:
        return NO_SEQUENCE
    return increment_sequence(header.base_sequence, record.offset - header.base_offset)


def _report_damage(report: FileReport, damage: CorruptRecordError, invalid_bytes: int) -> None:
    report.lines.append(
        f"Found {invalid_bytes} invalid bytes at the end of {Path(damage.segment).name}: {damage.reason}"
    )
    report.fail(str(damage), position=damage.position, offset=damage.offset, invalid_bytes=invalid_bytes)


def _start_offset(path: Path) -> int | None:
    stem = path.name.split(".")[0]
    return int(stem) if stem.isdigit() else None


def _size(value: bytes | None) -> int:
    return -1 if value is None else len(value)


def _text(value: bytes) -> str:
    return value.decode("utf-8", errors="backslashreplace")


def _b64(value: bytes | None) -> str | None:
    return None if value is None else base64.b64encode(value).decode("ascii")


def _bool(value: bool) -> str:
    return "true" if value else "false"
