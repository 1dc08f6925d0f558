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
from kafka_segments.records.fast.xxh32 import xxh32 as kernel_xxh32
from kafka_segments.records.lz4_frame import xxh32
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


FRAME_OPTIONS = ("store_size", "block_checksum", "content_checksum")


@pytest.mark.parametrize("option", FRAME_OPTIONS)
def test_frames_other_clients_write_are_decoded_in_place_too(option: str) -> None:
    """kafka-python's frames carry a content size (``lz4.frame``'s default), others checksums: Kafka's reader
    takes them all, and so does the kernel."""
    data = FIXED_PAYLOADS["text-100k"]
    options = {"store_size": False, "block_checksum": False, "content_checksum": False}
    frame = lz4.frame.compress(data, block_linked=False, **{**options, option: True})
    assert into(frame) == data
    assert general(frame) == data


def _sized(data: bytes, content_size: int) -> bytes:
    """A frame of ``data`` whose content size field says ``content_size``, its header checksum made valid."""
    frame = bytearray(lz4.frame.compress(data, block_linked=False, store_size=True))
    frame[6:14] = content_size.to_bytes(8, "little")
    frame[14] = (xxh32(bytes(frame[4:14])) >> 8) & 0xFF
    return bytes(frame)


def test_a_wrong_content_size_is_skipped_as_kafkas_reader_skips_it() -> None:
    data = FIXED_PAYLOADS["mixed-200k"]
    for size in (0, len(data) - 1, len(data) + 1000, (1 << 64) - 1):
        frame = _sized(data, size)
        assert into(frame) == data
        assert general(frame) == data


def test_a_wrong_content_checksum_is_read_but_not_checked_as_kafkas_reader_does() -> None:
    data = FIXED_PAYLOADS["text-100k"]
    frame = bytearray(lz4.frame.compress(data, block_linked=False, store_size=False, content_checksum=True))
    frame[-1] ^= 0xFF
    assert into(bytes(frame)) == data
    assert general(bytes(frame)) == data
    assert into(bytes(frame[:-1])) is None  # the checksum's 4 bytes must be there
    assert general(bytes(frame[:-1])) is None


def test_a_wrong_block_checksum_is_left_to_the_general_path_which_refuses_it() -> None:
    data = FIXED_PAYLOADS["text-100k"]
    frame = bytearray(lz4.frame.compress(data, block_linked=False, store_size=False, block_checksum=True))
    frame[-5] ^= 0xFF  # the last block's checksum, before the end mark
    assert into(bytes(frame)) is None
    with pytest.raises(ValueError, match="block checksum mismatch"):
        decompress(CompressionType.LZ4, bytes(frame), magic=2)


def test_linked_blocks_are_left_to_the_general_path_which_refuses_them() -> None:
    frame = lz4.frame.compress(FIXED_PAYLOADS["text-100k"], block_linked=True, store_size=False)
    assert into(frame) is None
    assert general(frame) is None  # Kafka's reader needs independent blocks


def test_a_bad_header_checksum_is_left_to_the_general_path() -> None:
    frame = bytearray(compress(CompressionType.LZ4, b"abc" * 1000, magic=2))
    frame[6] ^= 0x55
    assert into(bytes(frame)) is None
    assert general(bytes(frame)) is None


@pytest.mark.parametrize("option", ["", *FRAME_OPTIONS])
def test_bytes_after_the_end_mark_are_never_read_as_kafkas_reader_never_reads_them(option: str) -> None:
    data = b"abc" * 1000
    options = {option: True} if option else {"store_size": False}
    frame = lz4.frame.compress(data, block_linked=False, **options)
    for tail in (b"\x00", b"xyz", frame):
        assert into(frame + tail) == data
        assert general(frame + tail) == data


def test_any_truncation_is_left_to_the_general_path() -> None:
    frame = compress(CompressionType.LZ4, FIXED_PAYLOADS["mixed-200k"], magic=2)
    for cut in range(len(frame)):
        if cut % 997 == 0 or cut < 16 or cut > len(frame) - 16:
            assert into(frame[:cut]) is None, cut


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=3000).map(lambda b: b * 3),
    flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(1, 255)), min_size=1, max_size=4),
    options=st.fixed_dictionaries({option: st.booleans() for option in FRAME_OPTIONS}),
)
def test_a_damaged_frame_decodes_as_the_frame_decoder_decodes_it_or_not_at_all(
    data: bytes, flips: list[tuple[int, int]], options: dict[str, bool]
) -> None:
    """Whatever the frame's options and damage, the in-place path never gives other bytes than the frame
    decoder, nor bytes where it raises: it decodes or defers."""
    frame = bytearray(lz4.frame.compress(data, block_linked=False, **options))
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
    frames[1] = compress(CompressionType.LZ4, parts[1], magic=0)  # its header checksum is v0's
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


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=200), start=st.integers(0, 7))
def test_the_kernels_xxh32_is_the_frame_formats(data: bytes, start: int) -> None:
    padded = bytes(start) + data
    assert kernel_xxh32(np.frombuffer(padded, dtype=np.uint8), start, len(data)) == xxh32(data)
