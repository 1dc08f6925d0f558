"""Kafka's LZ4 frames decompressed straight into a buffer (``records.fast.lz4_into``, its kernel
in ``records.fast.lz4_kernels``): the same bytes as the frame decoder, and ``None`` — never a different
answer — for every frame it leaves to the general path."""

from __future__ import annotations

import ctypes.util

import lz4.frame
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.compression import compress, decompress
from kafka_segments.records.fast import lz4_kernels
from kafka_segments.records.fast.lz4_into import (
    decode_frames_into,
    frame_block_max,
    native_decoder,
)
from unit.test_compression import FIXED_PAYLOADS

pytestmark = pytest.mark.unit

ROOM = 8 << 20
U8 = npt.NDArray[np.uint8]


def decompress_frame_into(frame: bytes | bytearray | memoryview, out: U8) -> int | None:
    """Decompress one ``frame`` into ``out[:n]`` and return ``n``; ``None`` when the frame is not one this
    path decodes (module docstring) or does not fit ``out`` — ``out`` may then hold partial output."""
    if not native_decoder():
        return None
    array = np.frombuffer(frame, dtype=np.uint8)
    starts, ends = np.zeros(1, dtype=np.int64), np.full(1, len(array), dtype=np.int64)
    block_max = frame_block_max(array, starts, ends, np.ones(1, dtype=np.bool_))
    payload_start = np.zeros(1, dtype=np.int64)
    index, used = decode_frames_into(
        array, starts, ends, block_max, out=out, used=0, first=0, payload_start=payload_start
    )
    return used if index == 1 else None


def into(frame: bytes, *, room: int = ROOM) -> bytes | None:
    out = np.zeros(room, dtype=np.uint8)
    written = decompress_frame_into(frame, out)
    return None if written is None else out[:written].tobytes()


def general(frame: bytes) -> bytes | None:
    """What the general path gives (``None``: it raises)."""
    try:
        return decompress(CompressionType.LZ4, frame, magic=2)
    except ValueError:
        return None


@pytest.mark.parametrize("name", sorted(FIXED_PAYLOADS))
def test_kafkas_frames_decode_to_what_the_frame_decoder_gives(name: str) -> None:
    data = FIXED_PAYLOADS[name]
    frame = compress(CompressionType.LZ4, data, magic=2)  # lz4-java's layout: 64 KiB blocks, no checksums
    assert into(frame) == data


def test_incompressible_blocks_are_copied_as_stored() -> None:
    data = FIXED_PAYLOADS["random-70k"]
    frame = compress(CompressionType.LZ4, data, magic=2)
    assert frame[7:11][3] & 0x80  # the first block is stored (its size's high bit)
    assert into(frame) == data


@pytest.mark.parametrize("block_size", [lz4.frame.BLOCKSIZE_MAX256KB, lz4.frame.BLOCKSIZE_MAX4MB])
def test_larger_blocks_need_room_for_a_whole_block(block_size: int) -> None:
    data = FIXED_PAYLOADS["mixed-200k"]
    frame = lz4.frame.compress(data, block_size=block_size, block_linked=False, store_size=False)
    assert into(frame) == data
    assert into(frame, room=len(data)) is None  # less room than one block's maximum: the general path


@pytest.mark.parametrize("option", ["store_size", "block_checksum", "content_checksum"])
def test_frames_with_other_options_are_left_to_the_general_path(option: str) -> None:
    data = FIXED_PAYLOADS["text-100k"]
    options = {"store_size": False, "block_checksum": False, "content_checksum": False}
    frame = lz4.frame.compress(data, block_linked=False, **{**options, option: True})
    assert into(frame) is None
    assert general(frame) == data


def test_linked_blocks_are_left_to_the_general_path_which_refuses_them() -> None:
    frame = lz4.frame.compress(FIXED_PAYLOADS["text-100k"], block_linked=True, store_size=False)
    assert into(frame) is None
    assert general(frame) is None  # Kafka's reader needs independent blocks


def test_a_bad_header_checksum_is_left_to_the_general_path() -> None:
    frame = bytearray(compress(CompressionType.LZ4, b"abc" * 1000, magic=2))
    frame[6] ^= 0x55
    assert into(bytes(frame)) is None
    assert general(bytes(frame)) is None


def test_bytes_after_the_end_mark_are_left_to_the_general_path() -> None:
    frame = compress(CompressionType.LZ4, b"abc" * 1000, magic=2) + b"\x00"
    assert into(frame) is None
    assert general(frame) is None


def test_any_truncation_is_left_to_the_general_path() -> None:
    frame = compress(CompressionType.LZ4, FIXED_PAYLOADS["mixed-200k"], magic=2)
    for cut in range(len(frame)):
        if cut % 997 == 0 or cut < 16 or cut > len(frame) - 16:
            assert into(frame[:cut]) is None, cut


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=3000).map(lambda b: b * 3),
    flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(1, 255)), min_size=1, max_size=4),
)
def test_a_damaged_frame_decodes_as_the_frame_decoder_decodes_it_or_not_at_all(
    data: bytes, flips: list[tuple[int, int]]
) -> None:
    """Whatever the damage, the in-place path never gives other bytes than the frame decoder, nor bytes
    where it raises: it decodes or defers."""
    frame = bytearray(compress(CompressionType.LZ4, data, magic=2))
    for at, mask in flips:
        frame[at % len(frame)] ^= mask
    got = into(bytes(frame))
    if got is not None:
        assert got == general(bytes(frame))


def test_lz4s_block_decoder_is_linked_on_this_stack() -> None:
    """The pinned ``lz4`` wheel exports LZ4's block decoder: without it every frame above would have been
    ``None`` and the fast path untested."""
    assert native_decoder()


def test_no_library_or_no_decoder_in_it_binds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lz4_kernels, "_library_candidates", list)
    assert lz4_kernels.bind.__wrapped__() is False
    libc = ctypes.util.find_library("c")
    assert libc
    monkeypatch.setattr(lz4_kernels, "_library_candidates", lambda: ["/nonexistent/liblz4.so", libc])
    assert lz4_kernels.bind.__wrapped__() is False


def test_a_run_stops_at_the_first_frame_it_does_not_decode_and_resumes_after_it() -> None:
    parts = [FIXED_PAYLOADS["text-100k"], b"xyz" * 50, FIXED_PAYLOADS["mixed-200k"]]
    frames = [compress(CompressionType.LZ4, part, magic=2) for part in parts]
    frames[1] = lz4.frame.compress(parts[1], block_linked=False, content_checksum=True)  # not Kafka's layout
    array = np.frombuffer(b"".join(frames), dtype=np.uint8)
    ends = np.cumsum([len(frame) for frame in frames]).astype(np.int64)
    starts = ends - [len(frame) for frame in frames]
    block_max = frame_block_max(array, starts, ends, np.ones(3, dtype=np.bool_))
    assert block_max.tolist() == [64 << 10, 0, 64 << 10]
    out, payload_start = np.zeros(ROOM, dtype=np.uint8), np.full(3, -1, dtype=np.int64)
    index, used = decode_frames_into(
        array, starts, ends, block_max, out=out, used=0, first=0, payload_start=payload_start
    )
    assert (index, used) == (1, len(parts[0]))
    index, used = decode_frames_into(
        array, starts, ends, block_max, out=out, used=used + 7, first=2, payload_start=payload_start
    )
    assert (index, used) == (3, len(parts[0]) + 7 + len(parts[2]))
    assert payload_start.tolist() == [0, -1, len(parts[0]) + 7]
    assert out[payload_start[2] : used].tobytes() == parts[2]


def test_a_frame_that_does_not_fit_is_not_decoded_and_the_output_before_it_stands() -> None:
    frames = [compress(CompressionType.LZ4, FIXED_PAYLOADS["text-100k"], magic=2)] * 2
    array = np.frombuffer(b"".join(frames), dtype=np.uint8)
    starts = np.array([0, len(frames[0])], dtype=np.int64)
    ends = starts + len(frames[0])
    block_max = frame_block_max(array, starts, ends, np.ones(2, dtype=np.bool_))
    room = len(FIXED_PAYLOADS["text-100k"]) + (64 << 10)  # one frame and a block, not two frames
    out, payload_start = np.zeros(room, dtype=np.uint8), np.zeros(2, dtype=np.int64)
    index, used = decode_frames_into(
        array, starts, ends, block_max, out=out, used=0, first=0, payload_start=payload_start
    )
    assert (index, used) == (1, len(FIXED_PAYLOADS["text-100k"]))
    assert out[:used].tobytes() == FIXED_PAYLOADS["text-100k"]
