"""Logs whose batches hold records streams another writer framed (other clients, hostile ones): the batch
header and CRC made right around the new stream, for the oracle tests of what Kafka's readers accept."""

from __future__ import annotations

import shutil
import struct
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from fidelity.sides import (
    PARTITION,
    SideError,
    config_yaml,
    oracle_clean,
    product_adopt,
    product_run,
    require_launcher,
    set_mtimes,
)
from kafka_segments.records import CompressionType, Record, build_batch
from kafka_segments.records.compression import decompress
from kafka_segments.records.crc import crc32c

T0 = 1_790_000_000_000
NOW = T0 + 86_400_000  # a day later: every segment but the active one is cleanable
PROPS = {"cleanup.policy": "compact"}
RECORDS_AT = 61  # a v2 batch's records stream starts after its 61-byte header
LENGTH_AT, CRC_AT, CRC_FROM = 8, 17, 21

Reframe = Callable[[bytes], bytes]
"""The records stream (uncompressed) -> the bytes the batch holds instead of our writer's."""


def with_stream(batch: bytes, codec: CompressionType, reframe: Reframe) -> bytes:
    """``batch`` with its records stream framed by ``reframe``, its length and CRC made right."""
    out = bytearray(batch[:RECORDS_AT] + reframe(decompress(codec, batch[RECORDS_AT:])))
    struct.pack_into(">i", out, LENGTH_AT, len(out) - LENGTH_AT - 4)
    struct.pack_into(">I", out, CRC_AT, crc32c(bytes(out[CRC_FROM:])))
    return bytes(out)


def batch(offset: int, keys: list[bytes], codec: CompressionType, reframe: Reframe | None = None) -> bytes:
    records = [Record(offset + i, T0 + offset + i, key, b"v%d" % (offset + i)) for i, key in enumerate(keys)]
    built = build_batch(records, compression=codec)
    return built if reframe is None else with_stream(built, codec, reframe)


def log_dir(root: Path, codec: CompressionType, streams: Mapping[str, Reframe]) -> Path:
    """A log directory: per stream, a batch whose keys come again (the round rebuilds or drops it) and one
    of keys of its own (kept whole); then the keys again, and an active segment."""
    batches, offset = [], 0
    for index, reframe in enumerate(streams.values()):
        batches.append(batch(offset, [b"again", b"own-%d" % index, b"again"], codec, reframe))
        batches.append(batch(offset + 3, [b"kept-%d-%d" % (index, i) for i in range(4)], codec, reframe))
        offset += 7
    batches.append(batch(offset, [b"again"], codec))
    return write_log(root, batches, codec)


def refusals(root: Path, source: Path) -> tuple[str, str]:
    """(Kafka's cleaner's error, the run's JSON report) on the log directory ``source``: both sides must
    refuse it (the run quarantines the partition at adoption or in its round, the report says why)."""
    kafka_dir, lake = root / "kafka", root / "lake"
    shutil.copytree(source, kafka_dir)
    shutil.copytree(source, lake)
    with pytest.raises(SideError) as kafka:
        oracle_clean(require_launcher(), kafka_dir, NOW, props=PROPS)
    config = root / "config.yaml"
    config.write_text(config_yaml(PROPS))
    try:
        product_adopt(lake, NOW)
    except SideError as adoption:  # quarantined at adoption: its report says why
        return str(kafka.value), _quarantined(str(adoption))
    with pytest.raises(SideError, match="quarantined"):
        product_run(lake, config, NOW, root / "report.json")
    return str(kafka.value), (root / "report.json").read_text()


def _quarantined(said: str) -> str:
    if "quarantined" not in said:
        raise AssertionError(f"adoption failed without quarantining the partition: {said}")
    return said


def write_log(root: Path, batches: list[bytes], codec: CompressionType = CompressionType.NONE) -> Path:
    """A log directory of ``batches`` in one segment, then one record alone in the active segment."""
    directory = root / "in"
    (directory / PARTITION).mkdir(parents=True)
    (directory / PARTITION / "00000000000000000000.log").write_bytes(b"".join(batches))
    last = batches[-1]
    next_offset = struct.unpack_from(">q", last, 0)[0] + struct.unpack_from(">i", last, 23)[0] + 1
    active = batch(next_offset, [b"active"], codec)
    (directory / PARTITION / f"{next_offset:020d}.log").write_bytes(active)
    set_mtimes(directory, T0 // 1000)
    return directory
