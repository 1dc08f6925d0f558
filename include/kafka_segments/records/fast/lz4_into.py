"""Kafka's LZ4 frames decompressed straight into a caller's arena, a run of frames per kernel call.

Kafka's producers (``KafkaLZ4BlockOutputStream``) write one LZ4 frame of independent blocks per batch, with
no checksums or content size; other clients write a content size (kafka-python, ``lz4.frame``'s default) or
checksums. Every frame Kafka's reader takes is decoded by LZ4's block decoder from a numba kernel
(``lz4_kernels.frames_into``), headers checked in a kernel too: no Python work per frame or block, which
cost as much as the decompression on 1 KiB records. Anything else (a bad header or block checksum, damage,
no LZ4 library to link) goes to the general path (``compression.decompress``), which says why."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from kafka_segments.records.fast import lz4_kernels as _k

__all__ = ["decode_frames_into", "frame_block_max", "native_decoder"]

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]


def native_decoder() -> bool:
    """Whether LZ4's block decoder is linked for the kernel (see ``lz4_kernels.bind``)."""
    return _k.bind()


def frame_block_max(array: U8, starts: I64, ends: I64, candidates: npt.NDArray[np.bool_]) -> I64:
    """For each frame ``array[starts[i]:ends[i]]`` among ``candidates``: its block maximum size when its
    header is one Kafka's reader takes (checksum included), else 0 — as for every frame not a candidate."""
    return _k.frames_block_max(array, starts, ends, candidates)


def decode_frames_into(
    array: U8, starts: I64, ends: I64, block_max: I64, *, out: U8, used: int, first: int, payload_start: I64
) -> tuple[int, int]:
    """Decode frames from ``first`` on into ``out`` from ``used`` on, until one is not decoded
    (``lz4_kernels.frames_into``).

    Raises:
        LZ4NotLinkedError: ``native_decoder()`` is false (callers ask it first).
    """
    return _k.frames_into(array, starts, ends, block_max, out, used, first, payload_start)
