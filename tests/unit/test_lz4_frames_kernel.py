"""Rebuilt batches' records compressed into LZ4 frames by a kernel
(``records.fast.lz4_kernels.compress_frames``, used by ``records.fast.rebuild``): byte for byte the frames
``lz4.frame.compress`` writes with Kafka's options, each after the bytes that precede its span, resumable
where the output has no room left."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.records import CompressionType, Record, build_batch
from kafka_segments.records.compression import compress
from kafka_segments.records.fast import decode_record_columns, lz4_kernels, rebuild_batches
from kafka_segments.records.fast import rebuild as fast_rebuild
from unit.test_compression import FIXED_PAYLOADS

pytestmark = pytest.mark.unit

PREFIX = 5


def laid_out(parts: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``parts`` one after the other, each after ``PREFIX`` bytes of its own: (source, starts, ends)."""
    pieces = [bytes([index % 256]) * PREFIX + part for index, part in enumerate(parts)]
    source = np.frombuffer(b"".join(pieces), dtype=np.uint8)
    ends = np.cumsum([len(piece) for piece in pieces]).astype(np.int64)
    starts = ends - np.array([len(part) for part in parts], dtype=np.int64)
    return source, starts, ends


def kafka_frame(part: bytes) -> bytes:
    return compress(CompressionType.LZ4, part, magic=2)


def test_the_frame_compressor_is_linked_on_this_stack() -> None:
    assert lz4_kernels.bind_compressor()


@settings(max_examples=100, deadline=None)
@given(parts=st.lists(st.binary(max_size=3000).map(lambda b: b * 30), min_size=1, max_size=6))
def test_frames_are_the_ones_lz4_frame_writes_each_after_its_prefix(parts: list[bytes]) -> None:
    source, starts, ends = laid_out(parts)
    out = np.zeros(len(source) * 2 + (1 << 18), dtype=np.uint8)
    spans = np.zeros((len(parts), 2), dtype=np.int64)
    index, used, status = lz4_kernels.compress_frames(source, starts, ends, PREFIX, out, 0, 0, spans)
    assert (index, status) == (len(parts), lz4_kernels.COMPRESSED)
    assert used == spans[-1, 1]
    for i, part in enumerate(parts):
        begin, end = spans[i]
        assert out[begin:end].tobytes() == kafka_frame(part)
        assert out[begin - PREFIX : begin].tobytes() == bytes([i % 256]) * PREFIX


def test_no_room_stops_before_the_frame_and_a_larger_output_resumes_there() -> None:
    parts = [FIXED_PAYLOADS["text-100k"], FIXED_PAYLOADS["random-70k"], FIXED_PAYLOADS["mixed-200k"]]
    source, starts, ends = laid_out(parts)
    first = len(kafka_frame(parts[0]))
    out = np.zeros(PREFIX + first + (64 << 10), dtype=np.uint8)  # the first frame, not the second's bound
    spans = np.zeros((3, 2), dtype=np.int64)
    index, used, status = lz4_kernels.compress_frames(source, starts, ends, PREFIX, out, 0, 0, spans)
    assert (index, used, status) == (1, PREFIX + first, lz4_kernels.NO_ROOM)
    more = np.concatenate([out[:used], np.zeros(1 << 20, dtype=np.uint8)])
    index, used, status = lz4_kernels.compress_frames(source, starts, ends, PREFIX, more, used, index, spans)
    assert (index, status) == (3, lz4_kernels.COMPRESSED)
    assert [more[a:b].tobytes() for a, b in spans] == [kafka_frame(part) for part in parts]


@pytest.mark.parametrize("scratch", [4 << 20, 150_000, 20_000], ids=["default", "a-frame-or-two", "grown"])
def test_rebuilt_lz4_batches_are_the_same_without_the_kernel(
    monkeypatch: pytest.MonkeyPatch, scratch: int
) -> None:
    """With any scratch size: whole rounds in one buffer, a frame or two per fill, or a buffer smaller than
    LZ4's bound for one frame (grown)."""
    monkeypatch.setattr(fast_rebuild, "_LZ4_SCRATCH", scratch)
    records = [Record(o, 1_700_000_000_000 + o, b"k%d" % (o % 7), b"v" * (o * 37 % 900)) for o in range(300)]
    segment = b"".join(
        build_batch(records[at : at + 50], base_offset=at, compression=codec)
        for at, codec in zip(range(0, 300, 50), [CompressionType.LZ4, CompressionType.ZSTD] * 3, strict=True)
    )
    columns = decode_record_columns(segment)
    keep = np.arange(len(columns)) % 3 != 0
    batches = list(range(len(columns.batches)))
    with_kernel = rebuild_batches(columns, keep, batches, [None, 1_800_000_000_000] * 3)
    monkeypatch.setattr(lz4_kernels, "bind_compressor", lambda: 0)
    without = rebuild_batches(columns, keep, batches, [None, 1_800_000_000_000] * 3)
    assert with_kernel == without
    assert all(batch is not None for batch in with_kernel)


def test_without_the_library_the_kernels_refuse_instead_of_calling_an_unlinked_symbol(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source, starts, ends = laid_out([b"abc" * 100])
    out, spans = np.zeros(1 << 18, dtype=np.uint8), np.zeros((1, 2), dtype=np.int64)
    monkeypatch.setattr(lz4_kernels, "bind_compressor", lambda: 0)
    with pytest.raises(lz4_kernels.LZ4NotLinkedError, match="LZ4F_compressFrame"):
        lz4_kernels.compress_frames(source, starts, ends, PREFIX, out, 0, 0, spans)
    monkeypatch.setattr(lz4_kernels, "bind", lambda: False)
    block_max = np.full(1, 64 << 10, dtype=np.int64)
    with pytest.raises(lz4_kernels.LZ4NotLinkedError, match="LZ4_decompress_safe"):
        lz4_kernels.frames_into(source, starts, ends, block_max, out, 0, 0, np.zeros(1, dtype=np.int64))


def test_a_fresh_process_links_before_its_first_kernel_call() -> None:
    """Calling a kernel whose symbol LLVM cannot resolve brings the process down: the public entry points
    link first, whatever was (not) called before them."""
    script = """
import numpy as np
from kafka_segments.records.fast import lz4_kernels
from kafka_segments.records.compression import compress
from kafka_segments.records.fast.lz4_into import decode_frames_into, frame_block_max
data = b"kafka" * 5000
frame = np.frombuffer(compress(3, data), dtype=np.uint8)
starts, ends = np.zeros(1, dtype=np.int64), np.full(1, len(frame), dtype=np.int64)
out, spans = np.zeros(1 << 18, dtype=np.uint8), np.zeros((1, 2), dtype=np.int64)
block_max = frame_block_max(frame, starts, ends, np.ones(1, dtype=np.bool_))
decoded = decode_frames_into(frame, starts, ends, block_max, out=out, used=0, first=0, payload_start=spans[0])
assert decoded == (1, len(data))
raw = np.frombuffer(b"x" * 61 + data, dtype=np.uint8)
at, end = np.full(1, 61, dtype=np.int64), np.full(1, len(raw), dtype=np.int64)
assert lz4_kernels.compress_frames(raw, at, end, 61, out, 0, 0, spans)[0] == 1
"""
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
