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

from pathlib import Path

import lz4.frame
import pytest
from fidelity.sides import needs_oracle, side_by_side
from kafka_segments.records import CompressionType
from kafka_segments.records.lz4_frame import xxh32

from interop.replaced_streams import NOW, PROPS, Reframe, log_dir, refusals

pytestmark = [pytest.mark.e2e, needs_oracle]

LZ4 = CompressionType.LZ4


def _sized(data: bytes, size: int) -> bytes:
    frame = bytearray(lz4.frame.compress(data, block_linked=False, store_size=True))
    frame[6:14] = size.to_bytes(8, "little")
    frame[14] = (xxh32(bytes(frame[4:14])) >> 8) & 0xFF
    return bytes(frame)


def _flip_last(frame: bytes) -> bytes:
    return frame[:-1] + bytes((frame[-1] ^ 0xFF,))


FRAMES: dict[str, Reframe] = {
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


def test_frames_kafkas_reader_takes_are_cleaned_as_kafka_cleans_them(tmp_path: Path) -> None:
    sides = side_by_side(log_dir(tmp_path, LZ4, FRAMES), tmp_path / "work", now=NOW, props=PROPS)

    assert sides.compaction.get("error") is None
    assert sides.exported_segments == sides.kafka_segments
    batches = sides.kafka_segments[0]["batches"]
    # per kind of frame, Kafka rebuilt the first batch (one record left) and kept the second one whole
    assert [batch["count"] for batch in batches[: 2 * len(FRAMES)]] == [1, 4] * len(FRAMES)


def test_a_wrong_block_checksum_is_refused_by_both(tmp_path: Path) -> None:
    def wrong_block_checksum(data: bytes) -> bytes:
        frame = lz4.frame.compress(data, block_linked=False, store_size=False, block_checksum=True)
        return bytes(frame[:-5]) + bytes((frame[-5] ^ 0xFF,)) + bytes(frame[-4:])

    kafka, ours = refusals(tmp_path, log_dir(tmp_path, LZ4, {"wrong": wrong_block_checksum}))

    assert "Block checksum mismatch" in kafka
    assert "t-0/00000000000000000000.log at byte 0 (offset 0)" in ours
    assert "block checksum mismatch" in ours
