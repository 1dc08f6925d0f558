"""What follows a records stream's last gzip member, zstd frame or snappy block, read as Kafka's readers read
it (docs/fidelity.md, "What Kafka's readers accept"; each rule checked with Kafka's own cleaner in
``tests/interop/test_kafka_oracle_codec_tails.py``). One table per codec, each row named after the rule."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable

import cramjam
import pytest
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.compression import ZSTD_SOURCE_BUFFER, compress, decompress
from kafka_segments.records.gzip_stream import JAVA_INPUT_BUFFER, gzip_inflate

pytestmark = pytest.mark.unit

Make = Callable[[bytes], bytes]
"""A records stream (the argument) with what follows it."""

DATA = b"records stream " * 20
GZ_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
EMPTY_STORED_BLOCK = b"\x00\x00\x00\xff\xff"  # a non-final stored deflate block of no bytes


def gz(data: bytes, *, deflate_end: int | None = None, header: bytes = GZ_HEADER) -> bytes:
    """One member; ``deflate_end``: its deflate data padded with empty stored blocks to end about there
    (counted from the end of the header, where the JDK's buffer starts)."""
    body = zlib.compress(data, 6, wbits=-zlib.MAX_WBITS)
    pads = 0 if deflate_end is None else (deflate_end - len(body)) // len(EMPTY_STORED_BLOCK)
    return header + EMPTY_STORED_BLOCK * pads + body + struct.pack("<II", zlib.crc32(data), len(data))


DAMAGED_MEMBER = GZ_HEADER + b"\xff" * 8
"""18 bytes: a header, then deflate data no inflater takes."""

GZIP_TAILS = [
    ("up to 18 bytes after a member are never read", lambda d: gz(d) + b"\x01\x02\x03", True),
    ("up to 18 bytes, even a header and a cut member", lambda d: gz(d) + gz(b"abcd")[:16], True),
    ("up to 18 bytes, even a header and damage", lambda d: gz(d) + DAMAGED_MEMBER, True),
    ("more are read as a header: not one, they are ignored", lambda d: gz(d) + bytes(range(64)), True),
    (
        "more are read as a header: method 7 is not one",
        lambda d: gz(d) + b"\x1f\x8b\x07" + b"\xff" * 27,
        True,
    ),
    ("a header that parses starts a member", lambda d: gz(d) + GZ_HEADER + b"\xff" * 20, False),
    ("a member after it has its trailer checked", lambda d: gz(d) + gz(b"")[:-8] + b"\x01" + bytes(7), False),
    (
        "bytes beyond the reader's 8 KiB buffer are always read as a header",
        lambda d: gz(d, deflate_end=JAVA_INPUT_BUFFER - 8) + DAMAGED_MEMBER,
        False,
    ),
    (
        "bytes beyond the reader's buffer that are not a header are ignored",
        lambda d: gz(d, deflate_end=JAVA_INPUT_BUFFER - 4) + b"\x01\x02\x03",
        True,
    ),
    (
        "a buffer not filled holds all: up to 18 bytes are never read",
        lambda d: gz(d, deflate_end=JAVA_INPUT_BUFFER - 60) + DAMAGED_MEMBER,
        True,
    ),
]


@pytest.mark.parametrize(("rule", "make", "read"), GZIP_TAILS, ids=[row[0] for row in GZIP_TAILS])
def test_gzip_as_the_jdks_gzip_input_stream_reads_it(rule: str, make: Make, read: bool) -> None:
    stream = make(DATA)
    if read:
        assert decompress(CompressionType.GZIP, stream) == DATA
    else:
        with pytest.raises(ValueError, match="invalid gzip stream"):
            decompress(CompressionType.GZIP, stream)


def test_the_padding_puts_the_trailer_at_the_end_of_the_first_buffer() -> None:
    """The buffer rows rely on it: the deflate data of ``gz(DATA, deflate_end=8184)`` ends at most 4 bytes
    before 8184 (counted after the header, where the JDK's first 8 KiB read starts)."""
    stream = gz(DATA, deflate_end=JAVA_INPUT_BUFFER - 8)
    end = len(stream) - 8 - len(GZ_HEADER)
    assert JAVA_INPUT_BUFFER - 8 - len(EMPTY_STORED_BLOCK) < end <= JAVA_INPUT_BUFFER - 8


def test_gzip_members_and_limits_keep_their_rules() -> None:
    two = gz(DATA[:7]) + gz(DATA[7:])
    assert decompress(CompressionType.GZIP, two) == DATA
    assert gzip_inflate(two, limit=len(DATA)) == DATA
    with pytest.raises(ValueError, match="decompression limit"):
        gzip_inflate(two, limit=len(DATA) - 1)


def zs(data: bytes) -> bytes:
    return compress(CompressionType.ZSTD, data)


def skippable(size: int) -> bytes:
    return struct.pack("<II", 0x184D2A50, size) + bytes(size)


def padded_zstd(data: bytes, frames_end: int, tail: bytes) -> bytes:
    """A skippable frame, then ``data``'s frame ending at ``frames_end``, then ``tail``."""
    frame = zs(data)
    return skippable(frames_end - len(frame) - 8) + frame + tail


ABC = zs(b"abc")
"""A frame of 3 bytes: its first 4 or 8 bytes are an incomplete frame."""
READ = ZSTD_SOURCE_BUFFER

ZSTD_TAILS = [
    ("an incomplete frame after the last gives no data: ignored", lambda d: zs(d) + ABC[:8], True),
    ("a magic number alone is an incomplete frame", lambda d: zs(d) + ABC[:4], True),
    ("a cut skippable frame is an incomplete frame", lambda d: zs(d) + skippable(100)[:12], True),
    ("a skippable frame is a frame", lambda d: zs(d) + skippable(3), True),
    ("junk is not a frame", lambda d: zs(d) + b"\x01\x02\x03", False),
    ("read with the last frame's end", lambda d: padded_zstd(d, READ - 10, ABC[:8]), True),
    ("read after it: a truncated source", lambda d: padded_zstd(d, READ - 4, ABC[:8]), False),
    ("a frame ending a read: the next truncates", lambda d: padded_zstd(d, READ, ABC[:4]), False),
    ("read with a frame's end in a later read", lambda d: padded_zstd(d, READ + 100, ABC[:4]), True),
    ("an incomplete first frame is truncated", lambda d: zs(d)[:-2], False),
]


@pytest.mark.parametrize(("rule", "make", "read"), ZSTD_TAILS, ids=[row[0] for row in ZSTD_TAILS])
def test_zstd_as_zstd_jnis_input_stream_reads_it(rule: str, make: Make, read: bool) -> None:
    stream = make(DATA)
    if read:
        assert decompress(CompressionType.ZSTD, stream) == DATA
        assert bytes(decompress(CompressionType.ZSTD, stream, max_size=len(DATA))) == DATA
    else:
        with pytest.raises(ValueError, match="invalid zstd stream"):
            decompress(CompressionType.ZSTD, stream)


XERIAL_HEADER = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)
BAD_HEADER = b"\x82SNA" + b"x" * 12


def xerial(*parts: bytes) -> bytes:

    blocks = b"".join(
        struct.pack(">i", len(raw)) + raw for raw in (bytes(cramjam.snappy.compress_raw(p)) for p in parts)
    )
    return XERIAL_HEADER + blocks


SNAPPY_TAILS = [
    ("fewer than 4 bytes after a block end the stream", lambda d: xerial(d) + b"\x01\x02\x03", True),
    ("a bad header is passed over", lambda d: xerial(d) + BAD_HEADER, True),
    (
        "a bad header between blocks is passed over",
        lambda d: xerial(d[:9]) + BAD_HEADER + xerial(d[9:])[16:],
        True,
    ),
    ("a cut header is refused", lambda d: xerial(d) + BAD_HEADER[:10], False),
    (
        "a block length with too few bytes is refused",
        lambda d: xerial(d) + struct.pack(">i", 100) + b"abc",
        False,
    ),
]


@pytest.mark.parametrize(("rule", "make", "read"), SNAPPY_TAILS, ids=[row[0] for row in SNAPPY_TAILS])
def test_snappy_as_snappy_javas_input_stream_reads_it(rule: str, make: Make, read: bool) -> None:
    stream = make(DATA)
    if read:
        assert decompress(CompressionType.SNAPPY, stream) == DATA
    else:
        with pytest.raises(ValueError, match="snappy stream"):
            decompress(CompressionType.SNAPPY, stream)
