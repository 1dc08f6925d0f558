"""Regenerate the record batch v2 golden files in ``tests/data/v2/`` deterministically.

    .venv/bin/python tests/data/make_golden_v2.py           # (re)write the files
    .venv/bin/python tests/data/make_golden_v2.py --check   # exit 1 if a file differs from what this makes

``kafka-python-*.log`` are written by kafka-python 3.0.12's own ``DefaultRecordBatchBuilder`` (an
independent implementation; BaseOffset and PartitionLeaderEpoch patched in afterwards because that builder
always writes 0, and a small subclass for the control / LogAppendTime bits it cannot set). ``ours-*.log`` are
written by this project's builder. Every input is a constant (no clock, no randomness); the compressors are
pinned by requirements.lock. tests/data/README.md describes each file.
"""

from __future__ import annotations

import struct
import sys
import warnings
from pathlib import Path
from typing import Any

from kafka_segments.records import (
    CompressionType,
    ControlRecordType,
    EndTransactionMarker,
    Header,
    Record,
    RecordBatch,
    TimestampType,
    build_batch,
    build_end_transaction_marker,
    empty_batch_header,
    rebuild_batch,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    from kafka.record.default_records import DefaultRecordBatchBuilder

OUT_DIR = Path(__file__).resolve().parent / "v2"
TS = 1_700_000_000_000
DAY = 86_400_000

# (offset delta, timestamp, key, value, headers) as kafka-python's builder takes them
KpRecord = tuple[int, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]
KP_RECORDS: list[KpRecord] = [
    (0, TS, b"key-0", b"value-0", [("trace", b"abc"), ("nullhdr", None)]),
    (1, TS - 5, None, b"", []),  # null key, empty (not null) value, timestamp before the base
    (4, TS + 10, b"key-0", None, []),  # a tombstone after an offset gap
    (5, TS + 3, "ключ".encode(), b"\x00\xff", [("ü", b"")]),
]


class PatchedBuilder(DefaultRecordBatchBuilder):  # type: ignore[misc]
    """kafka-python's builder plus the attribute bits it cannot set (control, LogAppendTime)."""

    def __init__(self, *, control: bool = False, log_append_time: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.control = control
        self.log_append_time = log_append_time

    def _get_attributes(self, include_compression_type: bool = True) -> int:
        attributes = int(super()._get_attributes(include_compression_type))
        if self.control:
            attributes |= self.CONTROL_MASK
        if self.log_append_time is not None:
            attributes |= self.TIMESTAMP_TYPE_MASK
        return attributes

    def write_header(self, use_compression_type: bool = True) -> None:
        if self.log_append_time is not None:
            self._max_timestamp = self.log_append_time  # the broker's time, before the CRC is computed
        super().write_header(use_compression_type)


def kafka_python_batch(  # noqa: PLR0913 - one keyword argument per batch header field, as kafka-python's builder takes them
    records: list[KpRecord],
    *,
    base_offset: int,
    partition_leader_epoch: int = -1,
    compression: int = 0,
    is_transactional: bool = False,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    control: bool = False,
    log_append_time: int | None = None,
) -> bytes:
    """One batch from kafka-python's builder; BaseOffset / PartitionLeaderEpoch patched as a broker would."""
    builder = PatchedBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=is_transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=1 << 30,
        control=control,
        log_append_time=log_append_time,
    )
    for offset_delta, timestamp, key, value, headers in records:
        builder.append(offset_delta, timestamp, key, value, headers)
    buf = builder.build()
    # both fields lie before the CRC-covered region, so the CRC stays valid
    struct.pack_into(">q", buf, 0, base_offset)
    struct.pack_into(">i", buf, 12, partition_leader_epoch)
    return bytes(buf)


def kafka_python_files() -> dict[str, bytes]:
    compressible: list[KpRecord] = [
        (
            i,
            TS + i,
            f"user-{i % 4}".encode(),
            b"the same value again and again " * 4,
            [("seq", str(i).encode())],
        )
        for i in range(20)
    ]
    commit = EndTransactionMarker(ControlRecordType.COMMIT, 9)
    return {
        "kafka-python-none.log": kafka_python_batch(
            KP_RECORDS,
            base_offset=100,
            partition_leader_epoch=7,
            producer_id=4242,
            producer_epoch=3,
            base_sequence=17,
        ),
        "kafka-python-zstd-transactional.log": kafka_python_batch(
            compressible,
            base_offset=1000,
            partition_leader_epoch=2,
            compression=DefaultRecordBatchBuilder.CODEC_ZSTD,
            is_transactional=True,
            producer_id=4242,
            producer_epoch=3,
            base_sequence=0,
        ),
        "kafka-python-commit-marker.log": kafka_python_batch(
            [(0, TS + 100, commit.key_bytes(), commit.value_bytes(), [])],
            base_offset=1020,
            partition_leader_epoch=2,
            is_transactional=True,
            producer_id=4242,
            producer_epoch=3,
            control=True,
        ),
        "kafka-python-snappy-log-append-time.log": kafka_python_batch(
            compressible[:10],
            base_offset=5000,
            compression=DefaultRecordBatchBuilder.CODEC_SNAPPY,
            log_append_time=TS + 777,
        ),
    }


def ours_mixed_segment() -> bytes:
    """A segment of every kind of batch the codec writes, one after another (offsets 0..19)."""
    horizon_source = RecordBatch.from_bytes(
        build_batch(
            [
                Record(12, TS + 12, b"a", b"1"),
                Record(13, TS + 13, b"b", b"2"),
                Record(14, TS + 14, b"a", None),
                Record(15, TS + 15, b"c", b"3"),
            ],
            partition_leader_epoch=1,
        )
    )
    aborted_source = build_batch(
        [Record(o, TS + o, b"t", b"x") for o in (9, 10, 11)],
        producer_id=13,
        producer_epoch=0,
        base_sequence=0,
        is_transactional=True,
        partition_leader_epoch=1,
    )
    batches = [
        build_batch(
            [
                Record(0, TS, b"k0", b"v0", (Header("h", b"1"),)),
                Record(1, TS - 1, None, b""),
                Record(2, TS + 2, b"k0", None, (Header("n", None),)),
            ],
            partition_leader_epoch=0,
        ),
        build_batch(
            [Record(o, TS + o, f"k{o}".encode(), b"gzip me " * 8) for o in (3, 4, 5)],
            compression=CompressionType.GZIP,
            producer_id=11,
            producer_epoch=0,
            base_sequence=0,
            partition_leader_epoch=0,
        ),
        build_batch(
            [Record(6, TS + 6, b"t", b"x"), Record(7, TS + 7, b"t", b"y")],
            producer_id=12,
            producer_epoch=1,
            base_sequence=0,
            is_transactional=True,
            partition_leader_epoch=1,
        ),
        build_end_transaction_marker(
            EndTransactionMarker(ControlRecordType.COMMIT, 4),
            offset=8,
            timestamp=TS + 8,
            producer_id=12,
            producer_epoch=1,
            partition_leader_epoch=1,
        ),
        empty_batch_header(RecordBatch.from_bytes(aborted_source).header),
        rebuild_batch(horizon_source, horizon_source.records[1:3], delete_horizon_ms=TS + DAY),
        build_batch(
            [Record(16, TS + 16, b"z", b"zstd " * 10), Record(17, TS - 17, b"z", b"zstd " * 10)],
            compression=CompressionType.ZSTD,
            timestamp_type=TimestampType.LOG_APPEND_TIME,
            log_append_time=TS + 500,
            partition_leader_epoch=3,
        ),
        build_batch([Record(18, TS + 18, b"s", b"snappy")], compression=CompressionType.SNAPPY),
        build_batch([Record(19, TS + 19, b"l", b"lz4")], compression=CompressionType.LZ4),
    ]
    return b"".join(batches)


def golden_files() -> dict[str, bytes]:
    return {**kafka_python_files(), "ours-mixed-segment.log": ours_mixed_segment()}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    differ = []
    for name, data in golden_files().items():
        path = OUT_DIR / name
        if check:
            if not path.exists() or path.read_bytes() != data:
                differ.append(name)
        else:
            OUT_DIR.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            sys.stdout.write(f"wrote {path} ({len(data)} bytes)\n")
    if differ:
        sys.stdout.write(f"out of date: {', '.join(differ)}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
