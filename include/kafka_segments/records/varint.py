"""Zigzag varints (at most 5 bytes) and varlongs (at most 10), as Kafka writes them (``ByteUtils.writeVarint``
/ ``writeVarlong``)."""

from __future__ import annotations

VARINT_MAX_BYTES = 5
VARLONG_MAX_BYTES = 10
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


class VarintError(ValueError):
    """A varint runs past its buffer or past its maximum length."""


def zigzag_encode(value: int) -> int:
    return (value << 1) ^ (value >> 63)


def zigzag_decode(raw: int) -> int:
    return (raw >> 1) ^ -(raw & 1)


def encode_varint(value: int) -> bytes:
    """Encode a signed integer (32- or 64-bit range) as a zigzag varint.

    Raises:
        VarintError: ``value`` is outside the int64 range (it would otherwise be silently truncated).
    """
    if not INT64_MIN <= value <= INT64_MAX:
        raise VarintError(f"{value} does not fit a varlong (int64)")
    raw = zigzag_encode(value) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while raw > 0x7F:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def decode_varint(
    buf: bytes | bytearray | memoryview, pos: int, *, max_bytes: int = VARLONG_MAX_BYTES
) -> tuple[int, int]:
    """Decode the zigzag varint at ``pos``; return ``(value, next position)``.

    Raises:
        VarintError: the buffer ends inside the varint, or it is longer than ``max_bytes``.
    """
    raw = 0
    shift = 0
    end = len(buf)
    for i in range(max_bytes):
        if pos + i >= end:
            raise VarintError(f"varint at {pos} runs past the end of the buffer")
        byte = buf[pos + i]
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return zigzag_decode(raw), pos + i + 1
        shift += 7
    raise VarintError(f"varint at {pos} is longer than {max_bytes} bytes")
