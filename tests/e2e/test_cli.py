"""The kafka-segments command as a user runs it: a real process, real files, exit codes and output."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from cli_harness import cli
from kafka_segments import __version__
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.builder import build_batch
from kafka_segments.records.control import (
    ControlRecordType,
    EndTransactionMarker,
    build_end_transaction_marker,
)
from kafka_segments.records.record import Header, Record
from kafka_segments.segment import write_segment

pytestmark = pytest.mark.e2e

T0 = 1_700_000_000_000


@pytest.fixture
def segment(tmp_path: Path) -> Path:
    """Two data batches (one lz4, one transactional) and a COMMIT marker, starting at offset 100."""
    data = (
        build_batch(
            [
                Record(100, T0, b"k1", b"v1", (Header("h1", b"x"), Header("h2", None))),
                Record(101, T0 + 5, b"k2", None),
            ],
            compression=CompressionType.LZ4,
            producer_id=42,
            producer_epoch=1,
            base_sequence=7,
            partition_leader_epoch=3,
        )
        + build_batch(
            [Record(102, T0 + 9, None, b"\xff\xfe")],
            producer_id=43,
            producer_epoch=0,
            base_sequence=0,
            is_transactional=True,
        )
        + build_end_transaction_marker(
            EndTransactionMarker(ControlRecordType.COMMIT, coordinator_epoch=9),
            offset=103,
            timestamp=T0 + 10,
            producer_id=43,
            producer_epoch=0,
        )
    )
    path = tmp_path / "00000000000000000100.log"
    path.write_bytes(data)
    return path


def test_version_from_console_script_and_module() -> None:
    for console_script in (True, False):
        result = cli("--version", console_script=console_script)
        assert result.returncode == 0
        assert result.stdout.strip() == f"kafka-segments {__version__}"


def test_help_lists_commands() -> None:
    result = cli("--help")
    assert result.returncode == 0
    assert "inspect" in result.stdout
    assert "demo" in result.stdout


def test_no_command_prints_help_and_fails() -> None:
    result = cli()
    assert result.returncode == 2
    assert "usage: kafka-segments" in result.stdout


def test_inspect_prints_batches_like_kafka_dump_log(segment: Path) -> None:
    result = cli("inspect", str(segment))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"Dumping {segment}"
    assert lines[1] == "Log starting offset: 100"
    assert lines[2].startswith(
        "baseOffset: 100 lastOffset: 101 count: 2 baseSequence: 7 lastSequence: 8 producerId: 42 "
        "producerEpoch: 1 partitionLeaderEpoch: 3 isTransactional: false isControl: false "
        "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000005 size: "
    )
    assert lines[2].endswith(
        "magic: 2 compresscodec: lz4 crc: " + lines[2].split("crc: ")[1].split()[0] + " isvalid: true"
    )
    assert "isTransactional: true isControl: true" in lines[4]
    assert len(lines) == 5


def test_inspect_records_shows_keys_payloads_and_markers(segment: Path) -> None:
    result = cli("inspect", "--records", str(segment))
    assert result.returncode == 0, result.stderr
    records = [line for line in result.stdout.splitlines() if line.startswith("|")]
    assert records == [
        "| offset: 100 CreateTime: 1700000000000 keySize: 2 valueSize: 2 sequence: 7 headerKeys: [h1,h2] "
        "key: k1 payload: v1",
        "| offset: 101 CreateTime: 1700000000005 keySize: 2 valueSize: -1 sequence: 8 headerKeys: [] key: k2",
        "| offset: 102 CreateTime: 1700000000009 keySize: -1 valueSize: 2 sequence: 0 headerKeys: [] "
        "payload: \\xff\\xfe",
        "| offset: 103 CreateTime: 1700000000010 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
        "endTxnMarker: COMMIT coordinatorEpoch: 9",
    ]


def test_inspect_json_is_lossless(segment: Path) -> None:
    result = cli("inspect", "--json", "--records", str(segment))
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)["files"][0]
    assert document["kind"] == "log"
    assert document["problem"] is None
    assert [b["base_offset"] for b in document["batches"]] == [100, 102, 103]
    first = document["batches"][0]
    assert first["compression"] == "lz4"
    assert first["records"][1]["value_base64"] is None
    assert document["batches"][1]["records"][0]["value_base64"] == "//4="
    assert document["batches"][2]["records"][0]["control"] == "endTxnMarker: COMMIT coordinatorEpoch: 9"


def test_inspect_reports_truncation_after_the_valid_part(segment: Path) -> None:
    data = segment.read_bytes()
    segment.write_bytes(data[:-10])
    result = cli("inspect", str(segment))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[2].startswith("baseOffset: 100 ")
    assert lines[-1].startswith("Found ")
    assert "invalid bytes at the end of 00000000000000000100.log" in lines[-1]
    assert len(result.stderr.strip().splitlines()) == 1
    assert "(offset 103)" in result.stderr
    assert "Traceback" not in result.stderr


def test_inspect_reports_a_bad_crc(segment: Path) -> None:
    data = bytearray(segment.read_bytes())
    data[70] ^= 0xFF  # inside the first batch's records, covered by its CRC
    segment.write_bytes(bytes(data))
    result = cli("inspect", "--json", str(segment))
    assert result.returncode == 1
    document = json.loads(result.stdout)["files"][0]
    assert document["batches"][0]["is_valid"] is False
    assert document["problem"]["position"] == 0
    assert document["problem"]["offset"] == 100
    assert "invalid CRC" in result.stderr
    assert cli("inspect", "--no-verify-crc", str(segment)).returncode == 0


def test_inspect_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = cli("inspect", str(tmp_path / "00000000000000000000.log"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "No such file" in result.stderr


def test_demo_adopts_runs_retention_describes_dumps_and_exports_the_lake(tmp_path: Path) -> None:
    export = tmp_path / "export"
    result = cli("demo", "--output", str(export))
    assert result.returncode == 0, result.stderr
    assert "embedded S3 server listening on http://127.0.0.1:" in result.stderr
    assert "embedded S3 server stopped" in result.stderr
    sections = (
        "adopt",
        "describe",
        "run (retention, --engine inline)",
        "dump orders-1",
        f"export to {export}",
        "recover",
        "gc (dry run)",
    )
    for section in sections:
        assert f"\n== {section} ==\n" in result.stdout
    assert "committed version 1; 4 segment(s) adopted" in result.stdout
    assert (
        "\n== query: the compacted view (latest committed value per key) ==\nread_lake(lake, "
        in result.stdout
    )
    assert "orders-1 offset 28: customer-1 = b'late'" in result.stdout
    assert "orders-0: log start 0 -> 29, log end 29; deleted consumed: 2 segment(s)" in result.stdout
    assert "orders-1: log start 0 -> 20, log end 29; deleted consumed: 1 segment(s)" in result.stdout
    assert "held back by group billing (at 20; lag 9 records" in result.stdout
    assert (
        "demo OK: 4 segments uploaded to the embedded S3 lake, adopted and committed, retention run, "
        "2 exported and inspected with their 5 rebuilt index files, 0 with problems" in result.stdout
    )
    logs = sorted(p.relative_to(export).as_posix() for p in export.rglob("*.log"))
    assert logs == [
        "orders-0/00000000000000000029.log",  # emptied by retention: Kafka's empty active segment
        "orders-1/00000000000000000020.log",
    ]
    assert (export / "log-start-offset-checkpoint").read_text() == "0\n0\n"


@pytest.fixture
def indexed_segment(tmp_path: Path) -> Path:
    """A segment with offset, time and transaction indexes (an aborted transaction), written by our writer."""
    batches = [
        build_batch(
            [Record(10 + i, T0 + i, b"k", b"v" * 50)],
            producer_id=7,
            producer_epoch=0,
            base_sequence=i,
            is_transactional=True,
        )
        for i in range(4)
    ]
    batches.append(
        build_end_transaction_marker(
            EndTransactionMarker(ControlRecordType.ABORT, coordinator_epoch=1),
            offset=14,
            timestamp=T0 + 20,
            producer_id=7,
            producer_epoch=0,
        )
    )
    files = write_segment(batches, index_interval_bytes=100)
    for name, data in files.files().items():
        (tmp_path / name).write_bytes(data)
    return tmp_path / "00000000000000000010.log"


def test_inspect_index_files_like_kafka_dump_log(indexed_segment: Path) -> None:
    index, timeindex, txnindex = (
        indexed_segment.with_suffix(s) for s in (".index", ".timeindex", ".txnindex")
    )
    result = cli("inspect", str(index), str(timeindex), str(txnindex))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        # batches of 119 bytes (the marker 78) and an interval of 100: every batch but the first is indexed
        f"Dumping {index}",
        "offset: 11 position: 119",
        "offset: 12 position: 238",
        "offset: 13 position: 357",
        "offset: 14 position: 476",
        f"Dumping {timeindex}",
        "timestamp: 1700000000001 offset: 11",
        "timestamp: 1700000000002 offset: 12",
        "timestamp: 1700000000003 offset: 13",
        "timestamp: 1700000000020 offset: 14",
        f"Dumping {txnindex}",
        "version: 0 producerId: 7 firstOffset: 10 lastOffset: 14 lastStableOffset: 15",
    ]
    document = json.loads(cli("inspect", "--json", str(txnindex)).stdout)["files"][0]
    assert document["entries"] == [
        {"producer_id": 7, "first_offset": 10, "last_offset": 14, "last_stable_offset": 15}
    ]


def test_inspect_reports_an_index_that_disagrees_with_its_log(indexed_segment: Path) -> None:
    index = indexed_segment.with_suffix(".index")
    index.write_bytes(struct.pack(">ii", 2, 100))  # offset 12 at a position that is not a batch start
    result = cli("inspect", str(index))
    assert result.returncode == 1
    assert "Mismatches in" in result.stdout
    assert "position 100 is not the start of a batch" in result.stdout
    assert "entries disagree with 00000000000000000010.log" in result.stderr


def test_inspect_reports_a_malformed_index(indexed_segment: Path) -> None:
    index = indexed_segment.with_suffix(".index")
    index.write_bytes(b"\x00" * 7)
    result = cli("inspect", str(index))
    assert result.returncode == 1
    assert "00000000000000000010.index" in result.stderr
    assert "not a multiple of the 8-byte entry size" in result.stderr
    assert "Traceback" not in result.stderr
