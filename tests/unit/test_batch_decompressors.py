"""``compression.batch_decompressors``: the codec resolved once per segment, LZ4 descriptors checked over
columns — the same bytes and the same errors as ``decompress`` for every frame, damaged ones included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.compression import batch_decompressors, compress, decompress

pytestmark = pytest.mark.unit

CODECS = [
    CompressionType.NONE,
    CompressionType.GZIP,
    CompressionType.SNAPPY,
    CompressionType.LZ4,
    CompressionType.ZSTD,
]


def _outcome(fn: object, data: bytes) -> tuple[str, object]:
    try:
        return "ok", fn(data)  # type: ignore[operator]
    except Exception as exc:  # the same class and message are expected from both paths
        return type(exc).__name__, str(exc)


@settings(max_examples=200, deadline=None)
@given(
    payloads=st.lists(st.tuples(st.sampled_from(CODECS), st.binary(max_size=300)), min_size=1, max_size=6),
    damage=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 255)), max_size=3),
    cut=st.integers(0, 3),
)
def test_every_frame_decompresses_or_fails_as_decompress_does(
    payloads: list[tuple[CompressionType, bytes]], damage: list[tuple[int, int]], cut: int
) -> None:
    frames = [bytearray(compress(codec, data)) for codec, data in payloads]
    first = frames[0]
    for at, value in damage:  # damage the first frame's header or body, and maybe cut it short
        if at < len(first):
            first[at] = value
    frames[0] = first[: max(0, len(first) - cut)]
    blob = b"".join(frames)
    lengths = np.array([len(f) for f in frames], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    ends = starts + lengths
    array = np.frombuffer(blob, dtype=np.uint8)
    codecs = np.array([codec for codec, _ in payloads], dtype=np.int16)
    fns = batch_decompressors(codecs, array, starts, ends)
    for (codec, _), fn, start, end in zip(payloads, fns, starts.tolist(), ends.tolist(), strict=True):
        frame = blob[start:end]
        if codec == CompressionType.NONE:
            assert fn is None
            continue
        assert _outcome(fn, frame) == _outcome(lambda d, c=codec: decompress(c, d), frame)


def test_a_frame_shorter_than_its_descriptor_is_not_taken_for_checked() -> None:
    good = compress(CompressionType.LZ4, b"x" * 100)
    blob = good[:5] + good  # a 5-byte frame followed by a valid one: its descriptor lies in the next frame
    array = np.frombuffer(blob, dtype=np.uint8)
    fns = batch_decompressors(
        np.array([3, 3], dtype=np.int16), array, np.array([0, 5]), np.array([5, len(blob)])
    )
    assert fns[1] is not None
    assert fns[1](blob[5:]) == b"x" * 100
    with pytest.raises(ValueError, match="shorter than a frame header"):
        fns[0](blob[:5])  # type: ignore[misc]
