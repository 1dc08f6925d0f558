"""LZ4 frames other clients write, and frames with fields Kafka's reader reads past, cleaned as Kafka's own
cleaner cleans them (docs/fidelity.md, "What Kafka's readers accept").

Kafka's ``Lz4BlockInputStream`` skips a frame's content size, reads a content checksum without checking it,
checks block checksums, and never reads what follows the end mark. A run refused the first three kinds of
frame (``lz4.frame`` checks the content size and checksum; bytes after the end mark were called damage) and
quarantined the partition where Kafka cleaned it. One log holds one batch of each kind twice: once with keys
written again later (the round rebuilds or drops it) and once with keys of its own (the round keeps its bytes
as they are); each batch's CRC is valid. Both sides must write the same bytes. A wrong block checksum is the
one thing both refuse.

Runs only when ``KAFKA_ORACLE`` names the kafka-oracle launcher (``clean`` runs Kafka's own ``Cleaner``).
"""

from __future__ import annotations

import json
import shutil
import struct
from collections.abc import Callable
from pathlib import Path

import lz4.frame
import pytest
from fidelity.sides import (
    PARTITION,
    SideError,
    config_yaml,
    needs_oracle,
    oracle_clean,
    product_adopt,
    product_run,
    require_launcher,
    set_mtimes,
    side_by_side,
)
from kafka_segments.records import CompressionType, Record, build_batch
from kafka_segments.records.crc import crc32c
from kafka_segments.records.lz4_frame import xxh32

pytestmark = [pytest.mark.e2e, needs_oracle]

T0 = 1_790_000_000_000
NOW = T0 + 86_400_000  # a day later: every segment but the active one is cleanable
PROPS = {"cleanup.policy": "compact"}
RECORDS_AT = 61  # a v2 batch's records stream starts after its 61-byte header
LENGTH_AT, CRC_AT, CRC_FROM = 8, 17, 21


def _sized(data: bytes, size: int) -> bytes:
    frame = bytearray(lz4.frame.compress(data, block_linked=False, store_size=True))
    frame[6:14] = size.to_bytes(8, "little")
    frame[14] = (xxh32(bytes(frame[4:14])) >> 8) & 0xFF
    return bytes(frame)


def _flip_last(frame: bytes) -> bytes:
    return frame[:-1] + bytes((frame[-1] ^ 0xFF,))


FRAMES: dict[str, Callable[[bytes], bytes]] = {
    "content size (kafka-python's frames)": lambda data: lz4.frame.compress(data, block_linked=False),
    "a content size too large": lambda data: _sized(data, len(data) + 1000),
    "a content size of 0": lambda data: _sized(data, 0),
    "a wrong content checksum": lambda data: _flip_last(
        lz4.frame.compress(data, block_linked=False, store_size=False, content_checksum=True)
    ),
    "block checksums": lambda data: lz4.frame.compress(
        data, block_linked=False, store_size=False, block_checksum=True
    ),
    "bytes after the end mark": lambda data: (
        lz4.frame.compress(data, block_linked=False, store_size=False) + b"\x00\x07 trailing"
    ),
    "every field and bytes after the end mark": lambda data: (
        _flip_last(lz4.frame.compress(data, block_linked=False, block_checksum=True, content_checksum=True))
        + b"\x01"
    ),
}


def _with_frame(batch: bytes, frame_of: Callable[[bytes], bytes]) -> bytes:
    """``batch`` with its records stream in another frame, its length and CRC made right."""
    data = lz4.frame.decompress(batch[RECORDS_AT:])
    out = bytearray(batch[:RECORDS_AT] + frame_of(data))
    struct.pack_into(">i", out, LENGTH_AT, len(out) - LENGTH_AT - 4)
    struct.pack_into(">I", out, CRC_AT, crc32c(bytes(out[CRC_FROM:])))
    return bytes(out)


def _batch(offset: int, keys: list[bytes], frame_of: Callable[[bytes], bytes] | None = None) -> bytes:
    records = [
        Record(offset + i, T0 + offset + i, key, b"value %d" % (offset + i)) for i, key in enumerate(keys)
    ]
    batch = build_batch(records, compression=CompressionType.LZ4)
    return batch if frame_of is None else _with_frame(batch, frame_of)


def _log(tmp_path: Path, frames: dict[str, Callable[[bytes], bytes]]) -> Path:
    """Per kind of frame: a batch whose keys come again (rebuilt or dropped) and one of keys of its own
    (kept whole); then the keys again, and an active segment."""
    batches, offset = [], 0
    for index, frame_of in enumerate(frames.values()):
        batches.append(_batch(offset, [b"again", b"own-%d" % index, b"again"], frame_of))
        batches.append(_batch(offset + 3, [b"kept-%d-%d" % (index, i) for i in range(4)], frame_of))
        offset += 7
    batches.append(_batch(offset, [b"again"]))
    log_dir = tmp_path / "in"
    (log_dir / PARTITION).mkdir(parents=True)
    (log_dir / PARTITION / "00000000000000000000.log").write_bytes(b"".join(batches))
    (log_dir / PARTITION / f"{offset + 1:020d}.log").write_bytes(_batch(offset + 1, [b"active"]))
    set_mtimes(log_dir, T0 // 1000)
    return log_dir


def test_frames_kafkas_reader_takes_are_cleaned_as_kafka_cleans_them(tmp_path: Path) -> None:
    sides = side_by_side(_log(tmp_path, FRAMES), tmp_path / "work", now=NOW, props=PROPS)

    assert sides.compaction.get("error") is None
    assert sides.exported_segments == sides.kafka_segments
    batches = sides.kafka_segments[0]["batches"]
    # per kind of frame, Kafka rebuilt the first batch (one record left) and kept the second one whole
    assert [batch["count"] for batch in batches[: 2 * len(FRAMES)]] == [1, 4] * len(FRAMES)


def test_a_wrong_block_checksum_is_refused_by_both(tmp_path: Path) -> None:
    def wrong_block_checksum(data: bytes) -> bytes:
        frame = lz4.frame.compress(data, block_linked=False, store_size=False, block_checksum=True)
        return frame[:-5] + bytes((frame[-5] ^ 0xFF,)) + frame[-4:]

    log_dir = _log(tmp_path, {"wrong": wrong_block_checksum})
    kafka_dir, lake = tmp_path / "kafka", tmp_path / "lake"
    shutil.copytree(log_dir, kafka_dir)
    shutil.copytree(log_dir, lake)
    with pytest.raises(SideError, match="Block checksum mismatch"):
        oracle_clean(require_launcher(), kafka_dir, NOW, props=PROPS)

    config = tmp_path / "lz4.yaml"
    config.write_text(config_yaml(PROPS))
    product_adopt(lake, NOW)
    with pytest.raises(SideError, match="quarantined"):
        product_run(lake, config, NOW, tmp_path / "report.json")
    (partition,) = json.loads((tmp_path / "report.json").read_text())["compaction"]["partitions"]
    assert "t-0/00000000000000000000.log at byte 0 (offset 0)" in partition["error"]
    assert "block checksum mismatch" in partition["error"]
