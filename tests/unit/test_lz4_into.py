"""Kafka's LZ4 frames decompressed straight into a buffer (``records.lz4_into``): the same bytes as the frame
decoder, and ``None`` — never a different answer — for every frame it leaves to the general path."""

from __future__ import annotations

import lz4.frame
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.compression import compress, decompress
from kafka_segments.records.lz4_into import decompress_frame_into
from unit.test_compression import FIXED_PAYLOADS

pytestmark = pytest.mark.unit

ROOM = 8 << 20


def into(frame: bytes, *, room: int = ROOM) -> bytes | None:
    out = np.zeros(room, dtype=np.uint8)
    written = decompress_frame_into(memoryview(frame), memoryview(out))
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
