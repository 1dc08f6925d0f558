"""Checksums used by Kafka's record formats.

* CRC-32C (Castagnoli) for record batch v2, through the ``crc32c`` C extension (SSE4.2 / ARMv8 hardware
  instructions). It is a hard requirement: the pure-Python alternatives are far too slow (bench/RESULTS.md).
* CRC-32 (IEEE, zlib's) for legacy messages v0/v1.
"""

from __future__ import annotations

import zlib

import crc32c as _crc32c

Buffer = bytes | bytearray | memoryview


def crc32c(data: Buffer, value: int = 0) -> int:
    """CRC-32C of ``data`` (optionally continuing from ``value``)."""
    return int(_crc32c.crc32c(data, value))


def crc32(data: Buffer) -> int:
    """CRC-32 (IEEE 802.3, as ``java.util.zip.CRC32``) of ``data``."""
    return zlib.crc32(data) & 0xFFFFFFFF
