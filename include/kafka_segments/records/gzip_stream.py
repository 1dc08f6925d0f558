"""gzip records streams as Kafka writes them (``gzip_deflate``: ``GZIPOutputStream``'s one member) and reads
them (``gzip_inflate``), for ``compression``: the JDK's ``GZIPInputStream`` over the batch's bytes with an
8 KiB input buffer (``GzipCompression.wrapForInput``), as JDK 17 reads them.

``GZIPInputStream`` reads a member's header straight from the batch, then inflates from its buffer, filled
8 KiB at a time. At the end of a member it reads the 8-byte trailer (CRC-32 and size: both checked) and
looks for another member only when bytes are left beyond its buffer or more than 26 bytes are left in it
(``readTrailer``); a next header it cannot parse, or cannot read to its end, ends the stream there, and what
follows is never read. So up to 18 bytes after a member are ignored whatever they hold when they sit in the
buffer, and more are ignored unless they start with a header (magic, method 8; the flags' fields are
skipped, a header CRC checked). A header that parses starts a member, whose damage is an error. Damage is a
``ValueError`` (callers add the location); ``limit``: see ``compression``."""

from __future__ import annotations

import struct
import zlib

from kafka_segments.records.decompressed_size import check_size

__all__ = ["GZIP_PIECE", "gzip_deflate", "gzip_inflate"]

Buffer = bytes | bytearray | memoryview

GZIP_PIECE = 1 << 20
"""zlib's output per call when a limit is set (its own output buffer then never holds more)."""

JAVA_INPUT_BUFFER = 8 * 1024
"""``GzipCompression.wrapForInput``'s input buffer: the reader fills it this many bytes at a time."""
LOOK_FURTHER = 26
"""``GZIPInputStream.readTrailer`` looks for another member when more bytes than this are left in its
buffer (the trailer included) or any are left beyond it."""
GZIP_LEVEL = 6  # Deflater.DEFAULT_COMPRESSION (-1) is zlib's level 6
GZIP_MAGIC = b"\x1f\x8b"
GZIP_HEADER = GZIP_MAGIC + b"\x08\x00\x00\x00\x00\x00\x00\xff"  # deflate, no flags, mtime 0, XFL 0, OS 255
TRAILER = struct.Struct("<II")  # CRC-32 and size (mod 2**32) of the member's data
_DEFLATE = 8
_FHCRC, _FEXTRA, _FNAME, _FCOMMENT = 0x02, 0x04, 0x08, 0x10
_FIXED_HEADER = 10
_MASK32 = 0xFFFFFFFF


def gzip_deflate(data: Buffer) -> bytes:
    """``data`` as one member with ``GZIPOutputStream``'s header (no flags, mtime 0, XFL 0, OS 255)."""
    body = zlib.compress(data, GZIP_LEVEL, wbits=-zlib.MAX_WBITS)  # raw deflate
    return b"".join((GZIP_HEADER, body, TRAILER.pack(zlib.crc32(data), len(data) & _MASK32)))


class _NotAHeaderError(Exception):
    """The bytes at a member's start are not a header ``GZIPInputStream.readHeader`` takes."""


def gzip_inflate(data: Buffer, limit: int | None = None) -> bytes | bytearray:
    """The records of a gzip stream (a ``bytearray`` when ``limit`` is set).

    Raises:
        DecompressedSizeError: the output passes ``limit``.
        ValueError: the stream is damaged where Kafka's reader reads it.
    """
    view = memoryview(data).cast("B")
    if not view:
        raise ValueError("invalid gzip stream: it is empty")
    try:
        start = _header_end(view, 0)
    except _NotAHeaderError as exc:
        raise ValueError(f"invalid gzip stream: not in gzip format ({exc})") from None
    parts: list[bytes] = []
    sink = None if limit is None else bytearray()
    buffered_to = start  # the end of what the reader's buffer holds: its next fill starts there
    while True:
        end = _member(view, start, parts, sink, limit)
        if end > buffered_to:
            fills = -(-(end - buffered_to) // JAVA_INPUT_BUFFER)
            buffered_to = min(len(view), buffered_to + fills * JAVA_INPUT_BUFFER)
        left_in_buffer = buffered_to - end
        beyond = len(view) - max(buffered_to, end + TRAILER.size)
        if beyond <= 0 and left_in_buffer <= LOOK_FURTHER:
            break
        try:
            start = _header_end(view, end + TRAILER.size)
        except _NotAHeaderError:
            break  # GZIPInputStream ignores it, and everything after it
        if left_in_buffer <= start - end:
            buffered_to = start  # the buffer is used up: the next fill starts after the header
    if sink is not None:
        return sink
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _member(
    view: memoryview, start: int, parts: list[bytes], sink: bytearray | None, limit: int | None
) -> int:
    """Inflate the member whose deflate data starts at ``start`` onto ``parts`` (or ``sink``), check its
    trailer; return where its deflate data ends."""
    inflater = zlib.decompressobj(wbits=-zlib.MAX_WBITS)
    crc, size = 0, 0
    pending: Buffer = view[start:]
    try:
        while True:
            step = GZIP_PIECE if limit is None or sink is None else min(GZIP_PIECE, limit - len(sink) + 1)
            piece = inflater.decompress(pending, step if limit is not None else 0)
            crc, size = zlib.crc32(piece, crc), size + len(piece)
            if sink is None:
                parts.append(piece)
            else:
                check_size("gzip", len(sink) + len(piece), limit)
                sink += piece
            pending = inflater.unconsumed_tail
            if inflater.eof or limit is None or (len(piece) < step and not pending):
                break
    except zlib.error as exc:
        raise ValueError(f"invalid gzip stream: {exc}") from exc
    if not inflater.eof:
        raise ValueError("invalid gzip stream: truncated (the member has no end)")
    end = len(view) - len(inflater.unused_data)
    if end + TRAILER.size > len(view):
        raise ValueError("invalid gzip stream: truncated (the member's trailer is cut)")
    expected_crc, expected_size = TRAILER.unpack_from(view, end)
    if expected_crc != crc & _MASK32 or expected_size != size & _MASK32:
        raise ValueError("invalid gzip stream: corrupt trailer (CRC-32 or size does not match the data)")
    return end


def _header_end(view: memoryview, pos: int) -> int:
    """Where the deflate data of the member whose header starts at ``pos`` begins.

    Raises:
        _NotAHeaderError: no header ``GZIPInputStream.readHeader`` takes starts there (or it is cut).
    """
    if pos + _FIXED_HEADER > len(view):
        raise _NotAHeaderError("cut header")
    method, flags = view[pos + len(GZIP_MAGIC)], view[pos + len(GZIP_MAGIC) + 1]
    if view[pos : pos + len(GZIP_MAGIC)] != GZIP_MAGIC:
        raise _NotAHeaderError("bad magic number")
    if method != _DEFLATE:
        raise _NotAHeaderError(f"unsupported compression method {method}")
    at = pos + _FIXED_HEADER
    if flags & _FEXTRA:
        if at + 2 > len(view):
            raise _NotAHeaderError("cut extra field")
        at += 2 + int.from_bytes(view[at : at + 2], "little")
    for flag in (_FNAME, _FCOMMENT):
        if flags & flag:
            zero = bytes(view[at:]).find(b"\x00")
            if zero < 0:
                raise _NotAHeaderError("cut name or comment")
            at += zero + 1
    if flags & _FHCRC:
        if at + 2 > len(view):
            raise _NotAHeaderError("cut header CRC")
        if int.from_bytes(view[at : at + 2], "little") != zlib.crc32(view[pos:at]) & 0xFFFF:
            raise _NotAHeaderError("corrupt header CRC")
        at += 2
    if at > len(view):
        raise _NotAHeaderError("cut extra field")
    return at
