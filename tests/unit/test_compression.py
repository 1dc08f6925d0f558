"""Compression framing (``kafka_segments.records.compression``): gzip, xerial snappy, lz4 frames, zstd.

Round trips over generated payloads (block boundaries included), interop with kafka-python's ``kafka.codec``
both ways, golden files, frame properties, the lz4 magic-0 header-checksum quirk, and damaged streams.
"""

from __future__ import annotations

import random
import struct
import warnings
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import lz4.block
import lz4.frame
import pytest
import zstandard
from hypothesis import assume, given
from hypothesis import strategies as st
from kafka_segments.errors import UnsupportedCodecError
from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.compression import compress, decompress
from kafka_segments.records.lz4_frame import xxh32

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
    import kafka.codec

pytestmark = pytest.mark.unit

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "compression"
KIB = 1024
CODEC_MAGICS = [
    (CompressionType.NONE, 0),
    (CompressionType.NONE, 2),
    (CompressionType.GZIP, 0),
    (CompressionType.GZIP, 2),
    (CompressionType.SNAPPY, 1),
    (CompressionType.SNAPPY, 2),
    (CompressionType.LZ4, 0),
    (CompressionType.LZ4, 1),
    (CompressionType.LZ4, 2),
    (CompressionType.ZSTD, 2),
]
BOUNDARY_SIZES = [
    0,
    1,
    15,
    16,
    17,
    32 * KIB - 1,
    32 * KIB,
    32 * KIB + 1,
    64 * KIB - 1,
    64 * KIB,
    64 * KIB + 1,
]
BOUNDARY_SIZES += [3 * 32 * KIB + 7, 200_000]


def synthetic(size: int, seed: int, kind: str) -> bytes:
    """``size`` bytes of random, text-like, zero or mixed (compressible + incompressible) content."""
    rng = random.Random(seed)
    if kind == "random":
        return rng.randbytes(size)
    if kind == "zeros":
        return bytes(size)
    if kind == "text":
        words = [b"kafka", b"segment", b"offset", b"key", b"value", b"\n", b" "]
        out = bytearray()
        while len(out) < size:
            out += rng.choice(words)
        return bytes(out[:size])
    chunks = bytearray()
    while len(chunks) < size:
        chunks += (
            rng.randbytes(rng.randrange(1, 5000)) if rng.random() < 0.5 else bytes(rng.randrange(1, 9000))
        )
    return bytes(chunks[:size])


payloads = st.one_of(
    st.binary(max_size=2048),
    st.builds(
        synthetic,
        st.sampled_from(BOUNDARY_SIZES) | st.integers(0, 300_000),
        st.integers(0, 2**32 - 1),
        st.sampled_from(["random", "zeros", "text", "mixed"]),
    ),
)

FIXED_PAYLOADS = {
    "empty": b"",
    "small": b"hello kafka",
    "text-100k": synthetic(100_000, 1, "text"),
    "random-70k": synthetic(70_000, 2, "random"),
    "mixed-200k": synthetic(200_000, 3, "mixed"),
}


class _XXH32:
    """What kafka-python uses of the ``xxhash`` package (not installed here): ``xxh32(data).digest()``."""

    def __init__(self, data: bytes) -> None:
        self._value = xxh32(data)

    def digest(self) -> bytes:
        return self._value.to_bytes(4, "big")


@pytest.fixture
def kafka_python_xxhash(monkeypatch: pytest.MonkeyPatch) -> None:
    """kafka-python's lz4 v0 helpers need ``xxhash``; give them our (separately verified) XXH32."""
    monkeypatch.setattr(kafka.codec, "xxhash", SimpleNamespace(xxh32=_XXH32))


# Round trips -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("codec", "magic"), CODEC_MAGICS)
@given(data=payloads)
def test_round_trip(codec: CompressionType, magic: int, data: bytes) -> None:
    compressed = compress(codec, data, magic=magic)
    assert isinstance(compressed, bytes)
    assert decompress(codec, compressed, magic=magic) == data


@pytest.mark.parametrize(("codec", "magic"), CODEC_MAGICS)
def test_round_trip_accepts_memoryview_and_bytearray(codec: CompressionType, magic: int) -> None:
    data = FIXED_PAYLOADS["mixed-200k"]
    compressed = compress(codec, memoryview(data)[10:], magic=magic)
    assert decompress(codec, bytearray(compressed), magic=magic) == data[10:]
    assert decompress(codec, memoryview(b"xx" + compressed)[2:], magic=magic) == data[10:]


def test_none_is_the_identity() -> None:
    assert compress(CompressionType.NONE, b"abc") == b"abc"
    assert decompress(CompressionType.NONE, memoryview(b"abc")) == b"abc"


# Interop with kafka-python ---------------------------------------------------------------------------------

ENCODERS: dict[str, tuple[CompressionType, int, Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    "gzip": (CompressionType.GZIP, 2, kafka.codec.gzip_encode, kafka.codec.gzip_decode),
    "snappy-xerial": (
        CompressionType.SNAPPY,
        2,
        lambda data: kafka.codec.snappy_encode(data, xerial_compatible=True),
        kafka.codec.snappy_decode,
    ),
    "lz4": (CompressionType.LZ4, 2, kafka.codec.lz4_encode, kafka.codec.lz4_decode),
    "lz4-v1": (CompressionType.LZ4, 1, kafka.codec.lz4_encode, kafka.codec.lz4_decode),
    "lz4-v0-broken-checksum": (
        CompressionType.LZ4,
        0,
        kafka.codec.lz4_encode_old_kafka,
        kafka.codec.lz4_decode_old_kafka,
    ),
    "zstd": (CompressionType.ZSTD, 2, kafka.codec.zstd_encode, kafka.codec.zstd_decode),
}


@pytest.mark.usefixtures("kafka_python_xxhash")
@pytest.mark.parametrize(
    ("codec_name", "payload_name"),
    [
        (codec_name, payload_name)
        for codec_name in sorted(ENCODERS)
        for payload_name in sorted(FIXED_PAYLOADS)
        # kafka-python needs more than the bare 16-byte xerial header (snappy-java reads it as empty)
        if (codec_name, payload_name) != ("snappy-xerial", "empty")
    ],
)
def test_kafka_python_reads_what_we_write(codec_name: str, payload_name: str) -> None:
    codec, magic, _, their_decode = ENCODERS[codec_name]
    data = FIXED_PAYLOADS[payload_name]
    assert their_decode(compress(codec, data, magic=magic)) == data


@pytest.mark.usefixtures("kafka_python_xxhash")
@pytest.mark.parametrize("codec_name", sorted(ENCODERS))
@pytest.mark.parametrize("payload_name", sorted(FIXED_PAYLOADS))
def test_we_read_what_kafka_python_writes(codec_name: str, payload_name: str) -> None:
    codec, magic, their_encode, _ = ENCODERS[codec_name]
    data = FIXED_PAYLOADS[payload_name]
    assert decompress(codec, their_encode(data), magic=magic) == data


@pytest.mark.parametrize("payload_name", sorted(FIXED_PAYLOADS))
def test_raw_snappy_without_xerial_header_is_accepted(payload_name: str) -> None:
    data = FIXED_PAYLOADS[payload_name]
    raw = kafka.codec.snappy_encode(data, xerial_compatible=False)
    assert not raw.startswith(b"\x82SNAPPY\x00")
    assert decompress(CompressionType.SNAPPY, raw) == data


@pytest.mark.usefixtures("kafka_python_xxhash")
def test_kafka_python_v0_lz4_is_rejected_as_v1() -> None:
    frame = kafka.codec.lz4_encode_old_kafka(b"payload")
    with pytest.raises(ValueError, match="checksum"):
        decompress(CompressionType.LZ4, frame, magic=1)


# XXH32 (the frame descriptor checksum) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "seed", "expected"),
    [
        (b"", 0, 0x02CC5D05),
        (b"a", 0, 0x550D7456),
        (b"abc", 0, 0x32D153FF),
        (b"Nobody inspects the spammish repetition", 0, 0xE2293B2F),
    ],
)
def test_xxh32_known_values(data: bytes, seed: int, expected: int) -> None:
    assert xxh32(data, seed) == expected


@given(
    flags=st.fixed_dictionaries(
        {
            "block_size": st.sampled_from(
                [lz4.frame.BLOCKSIZE_MAX64KB, lz4.frame.BLOCKSIZE_MAX256KB, lz4.frame.BLOCKSIZE_MAX4MB]
            ),
            "block_checksum": st.booleans(),
            "content_checksum": st.booleans(),
            "store_size": st.booleans(),
        }
    ),
    data=st.binary(max_size=64),
)
def test_xxh32_matches_the_header_checksum_liblz4_writes(flags: dict[str, object], data: bytes) -> None:
    frame = lz4.frame.compress(data, block_linked=False, **flags)
    hc_at = 6 + (8 if frame[4] & 0x08 else 0)
    assert (xxh32(frame[4:hc_at]) >> 8) & 0xFF == frame[hc_at]


# Frame properties ------------------------------------------------------------------------------------------


def lz4_blocks(frame: bytes) -> Iterator[tuple[int, bool]]:
    """(stored size, compressed?) of every data block of a frame without checksums or content size."""
    pos = 7
    while True:
        (word,) = struct.unpack_from("<I", frame, pos)
        pos += 4
        if word == 0:
            assert pos == len(frame), "bytes after the end mark"
            return
        size = word & 0x7FFFFFFF
        yield size, not word & 0x80000000
        pos += size


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("payload_name", sorted(FIXED_PAYLOADS))
def test_lz4_frame_is_what_kafka_writes(magic: int, payload_name: str) -> None:
    data = FIXED_PAYLOADS[payload_name]
    frame = compress(CompressionType.LZ4, data, magic=magic)
    assert frame[:4] == b"\x04\x22\x4d\x18"
    assert frame[4] == 0b0110_0000  # version 01, independent blocks, no checksums, no content size
    assert frame[5] == 0x40  # BD: 64 KiB maximum block
    broken = (xxh32(frame[0:6]) >> 8) & 0xFF
    spec = (xxh32(frame[4:6]) >> 8) & 0xFF
    assert frame[6] == (broken if magic == 0 else spec)
    assert broken != spec
    blocks = list(lz4_blocks(frame))
    assert len(blocks) == -(-len(data) // (64 * KIB))
    decoded = b""
    pos = 7
    for size, compressed in blocks:
        body = frame[pos + 4 : pos + 4 + size]
        part = lz4.block.decompress(body, uncompressed_size=64 * KIB) if compressed else body
        assert len(part) <= 64 * KIB
        decoded += part
        pos += 4 + size
    assert decoded == data


def test_lz4_stores_incompressible_blocks_uncompressed() -> None:
    frame = compress(CompressionType.LZ4, synthetic(100_000, 9, "random"))
    assert [compressed for _, compressed in lz4_blocks(frame)] == [False, False]


def test_zstd_frame_has_no_content_size() -> None:
    for data in (b"", b"x", FIXED_PAYLOADS["text-100k"], FIXED_PAYLOADS["mixed-200k"]):
        frame = compress(CompressionType.ZSTD, data)
        params = zstandard.get_frame_parameters(frame)
        assert params.content_size == zstandard.CONTENTSIZE_UNKNOWN
        assert not params.has_checksum
        assert params.dict_id == 0


def test_xerial_snappy_framing() -> None:
    data = FIXED_PAYLOADS["mixed-200k"]
    stream = compress(CompressionType.SNAPPY, data)
    assert stream[:16] == b"\x82SNAPPY\x00" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x01"
    pos = 16
    sizes = []
    while pos < len(stream):
        (length,) = struct.unpack_from(">i", stream, pos)
        block = stream[pos + 4 : pos + 4 + length]
        sizes.append(len(kafka.codec.snappy.decompress(block)))
        pos += 4 + length
    assert pos == len(stream)
    assert sizes == [32 * KIB] * (len(data) // (32 * KIB)) + [len(data) % (32 * KIB)]


def test_xerial_snappy_of_nothing_is_the_bare_header() -> None:
    assert compress(CompressionType.SNAPPY, b"") == b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01"
    assert decompress(CompressionType.SNAPPY, b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01") == b""


def test_gzip_member_has_java_header_and_default_level() -> None:
    data = FIXED_PAYLOADS["text-100k"]
    member = compress(CompressionType.GZIP, data)
    assert member[:10] == bytes.fromhex("1f8b08000000000000ff")  # deflate, no flags, mtime 0, XFL 0, OS 255
    assert member[-8:] == struct.pack("<II", zlib.crc32(data), len(data))
    assert member[10:-8] == zlib.compress(data, 6, wbits=-15)


# Golden files ----------------------------------------------------------------------------------------------

GOLDEN_FILES = {
    "payload.gzip": (CompressionType.GZIP, 2, kafka.codec.gzip_decode),
    "payload.snappy": (CompressionType.SNAPPY, 2, kafka.codec.snappy_decode),
    "payload.lz4": (CompressionType.LZ4, 2, kafka.codec.lz4_decode),
    "payload.v0.lz4": (CompressionType.LZ4, 0, kafka.codec.lz4_decode_old_kafka),
    "payload.zstd": (CompressionType.ZSTD, 2, kafka.codec.zstd_decode),
}


@pytest.mark.usefixtures("kafka_python_xxhash")
@pytest.mark.parametrize("name", sorted(GOLDEN_FILES))
def test_golden_file_decodes_with_us_and_kafka_python(name: str) -> None:
    codec, magic, their_decode = GOLDEN_FILES[name]
    payload = (GOLDEN / "payload.bin").read_bytes()
    golden = (GOLDEN / name).read_bytes()
    assert decompress(codec, golden, magic=magic) == payload
    assert their_decode(golden) == payload


@pytest.mark.parametrize("name", sorted(set(GOLDEN_FILES) - {"payload.gzip"}))
def test_golden_file_is_what_we_write(name: str) -> None:
    codec, magic, _ = GOLDEN_FILES[name]
    payload = (GOLDEN / "payload.bin").read_bytes()
    assert compress(codec, payload, magic=magic) == (GOLDEN / name).read_bytes()


def test_golden_gzip_framing_is_what_we_write() -> None:
    """The deflate body depends on the zlib build; the member's header and trailer must not."""
    payload = (GOLDEN / "payload.bin").read_bytes()
    ours = compress(CompressionType.GZIP, payload)
    golden = (GOLDEN / "payload.gzip").read_bytes()
    assert ours[:10] == golden[:10]
    assert ours[-8:] == golden[-8:]


def test_golden_v0_lz4_carries_the_broken_header_checksum() -> None:
    golden = (GOLDEN / "payload.v0.lz4").read_bytes()
    assert golden[6] == (xxh32(golden[:6]) >> 8) & 0xFF
    with pytest.raises(ValueError, match="checksum"):
        decompress(CompressionType.LZ4, golden, magic=2)


# Reader acceptance -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("store_size", [True, False])
@pytest.mark.parametrize("block_checksum", [True, False])
@pytest.mark.parametrize("content_checksum", [True, False])
@pytest.mark.parametrize("magic", [0, 2])
def test_lz4_reader_accepts_optional_frame_fields(
    store_size: bool, block_checksum: bool, content_checksum: bool, magic: int
) -> None:
    data = FIXED_PAYLOADS["mixed-200k"]
    frame = lz4.frame.compress(
        data,
        block_size=lz4.frame.BLOCKSIZE_MAX256KB,
        block_linked=False,
        store_size=store_size,
        block_checksum=block_checksum,
        content_checksum=content_checksum,
    )
    assert decompress(CompressionType.LZ4, frame, magic=magic) == data


def test_lz4_v0_reader_ignores_the_header_checksum() -> None:
    frame = bytearray(compress(CompressionType.LZ4, b"abc" * 1000, magic=2))
    for hc in (frame[6], (xxh32(frame[:6]) >> 8) & 0xFF, frame[6] ^ 0x55):
        frame[6] = hc
        assert decompress(CompressionType.LZ4, bytes(frame), magic=0) == b"abc" * 1000


@pytest.mark.parametrize("magic", [1, 2])
def test_lz4_v1_v2_reader_verifies_the_header_checksum(magic: int) -> None:
    frame = bytearray(compress(CompressionType.LZ4, b"abc" * 1000))
    frame[6] ^= 0x55
    with pytest.raises(ValueError, match=r"descriptor checksum \(HC byte\) mismatch"):
        decompress(CompressionType.LZ4, bytes(frame), magic=magic)


def test_zstd_reader_accepts_content_size_and_concatenated_frames() -> None:
    a, b = FIXED_PAYLOADS["text-100k"], FIXED_PAYLOADS["small"]
    with_size = zstandard.ZstdCompressor(level=1, write_content_size=True, write_checksum=True).compress(a)
    assert zstandard.get_frame_parameters(with_size).content_size == len(a)
    assert decompress(CompressionType.ZSTD, with_size) == a
    assert decompress(CompressionType.ZSTD, with_size + compress(CompressionType.ZSTD, b)) == a + b


def test_snappy_reader_accepts_concatenated_xerial_streams() -> None:
    a, b = FIXED_PAYLOADS["random-70k"], FIXED_PAYLOADS["small"]
    stream = compress(CompressionType.SNAPPY, a) + compress(CompressionType.SNAPPY, b)
    assert decompress(CompressionType.SNAPPY, stream) == a + b


def test_gzip_reader_accepts_concatenated_members() -> None:
    stream = compress(CompressionType.GZIP, b"first ") + kafka.codec.gzip_encode(b"second")
    assert decompress(CompressionType.GZIP, stream) == b"first second"


# Codec and magic checks ------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", [5, 6, 7, 255])
def test_unknown_codec_is_unsupported(codec: int) -> None:
    with pytest.raises(UnsupportedCodecError, match=f"unknown compression codec id {codec}"):
        compress(codec, b"x")
    with pytest.raises(UnsupportedCodecError, match=f"unknown compression codec id {codec}"):
        decompress(codec, b"x")


@pytest.mark.parametrize("magic", [0, 1])
def test_zstd_needs_magic_2(magic: int) -> None:
    frame = compress(CompressionType.ZSTD, b"x")
    with pytest.raises(UnsupportedCodecError, match="zstd is only valid in record batches of magic 2"):
        compress(CompressionType.ZSTD, b"x", magic=magic)
    with pytest.raises(UnsupportedCodecError, match="zstd is only valid in record batches of magic 2"):
        decompress(CompressionType.ZSTD, frame, magic=magic)


# Damaged streams -------------------------------------------------------------------------------------------

SAMPLE = FIXED_PAYLOADS["mixed-200k"]


def _with(data: bytes, at: int, value: int) -> bytes:
    out = bytearray(data)
    out[at] = value
    return bytes(out)


def _flipped(data: bytes, at: int) -> bytes:
    damaged = bytearray(data)
    damaged[at] ^= 0xFF
    return bytes(damaged)


def _damaged() -> list[tuple[str, CompressionType, int, bytes, str]]:
    gz = compress(CompressionType.GZIP, SAMPLE)
    sn = compress(CompressionType.SNAPPY, SAMPLE)
    l4 = compress(CompressionType.LZ4, SAMPLE)
    zs = compress(CompressionType.ZSTD, SAMPLE)
    linked = lz4.frame.compress(SAMPLE, block_linked=True, block_size=lz4.frame.BLOCKSIZE_MAX64KB)
    checked = lz4.frame.compress(SAMPLE, block_linked=False, block_checksum=True)
    summed = lz4.frame.compress(SAMPLE, block_linked=False, content_checksum=True)
    return [
        ("gzip empty", CompressionType.GZIP, 2, b"", "gzip stream: it is empty"),
        ("gzip truncated", CompressionType.GZIP, 2, gz[:-9], "truncated"),
        ("gzip header only", CompressionType.GZIP, 2, gz[:10], "truncated"),
        ("gzip bad crc", CompressionType.GZIP, 2, _with(gz, len(gz) - 8, gz[-8] ^ 1), "invalid gzip stream"),
        ("gzip bad size", CompressionType.GZIP, 2, _with(gz, len(gz) - 1, gz[-1] ^ 1), "invalid gzip stream"),
        ("gzip not gzip", CompressionType.GZIP, 2, b"definitely not gzip", "invalid gzip stream"),
        (
            "gzip a damaged second member",
            CompressionType.GZIP,
            2,
            gz + gz[:10] + b"\xff" * 20,
            "invalid gzip stream: .*invalid block type",
        ),
        ("gzip bad trailer", CompressionType.GZIP, 2, gz[:-1] + bytes((gz[-1] ^ 1,)), "corrupt trailer"),
        ("snappy empty", CompressionType.SNAPPY, 2, b"", "snappy stream: it is empty"),
        ("snappy truncated block", CompressionType.SNAPPY, 2, sn[:-1], "only"),
        (
            "snappy negative length",
            CompressionType.SNAPPY,
            2,
            sn[:16] + b"\xff\xff\xff\xf0",
            "block length -16",
        ),
        ("snappy zero length", CompressionType.SNAPPY, 2, sn[:16] + b"\x00\x00\x00\x00", "block length 0"),
        ("snappy cut header", CompressionType.SNAPPY, 2, sn + b"\x82SNAP", "cut stream header at byte"),
        (
            "snappy bad block",
            CompressionType.SNAPPY,
            2,
            sn[:16] + b"\x00\x00\x00\x03\xff\xff\xff",
            "snappy data",
        ),
        ("snappy raw garbage", CompressionType.SNAPPY, 2, b"\xff\xff\xff\xff\xff", "invalid snappy data"),
        ("lz4 empty", CompressionType.LZ4, 2, b"", "shorter than a frame header"),
        ("lz4 bad magic", CompressionType.LZ4, 2, b"\x05" + l4[1:], "bad magic number"),
        ("lz4 truncated", CompressionType.LZ4, 2, l4[:-1], "truncated frame"),
        ("lz4 truncated mid block", CompressionType.LZ4, 2, l4[:300], "truncated frame"),
        (
            "lz4 truncated v0",
            CompressionType.LZ4,
            0,
            compress(CompressionType.LZ4, SAMPLE, magic=0)[:500],
            "truncated",
        ),
        ("lz4 bad block checksum", CompressionType.LZ4, 2, _flipped(checked, -5), "block checksum mismatch"),
        ("lz4 no content checksum", CompressionType.LZ4, 2, summed[:-4], "no content checksum"),
        ("lz4 no end mark", CompressionType.LZ4, 2, summed[:-8], "no end mark"),
        ("lz4 dependent blocks", CompressionType.LZ4, 2, linked, "dependent blocks"),
        ("lz4 version 2", CompressionType.LZ4, 2, _with(l4, 4, 0xA0), "unsupported frame version 2"),
        ("lz4 dictionary id", CompressionType.LZ4, 2, _with(l4, 4, 0x61), "reserved or dictionary-id bits"),
        ("lz4 BD reserved bit", CompressionType.LZ4, 2, _with(l4, 5, 0x41), "bad block descriptor"),
        ("lz4 BD size 3", CompressionType.LZ4, 2, _with(l4, 5, 0x30), "bad block descriptor"),
        ("lz4 cut descriptor", CompressionType.LZ4, 2, _with(l4[:8], 4, 0x68), "truncated frame descriptor"),
        (
            "lz4 block too big",
            CompressionType.LZ4,
            2,
            l4[:7] + b"\x01\x00\x01\x80" + bytes(65537),
            "invalid lz4",
        ),
        ("zstd empty", CompressionType.ZSTD, 2, b"", "zstd stream: it is empty"),
        ("zstd truncated", CompressionType.ZSTD, 2, zs[:-1], "truncated frame"),
        ("zstd half", CompressionType.ZSTD, 2, zs[: len(zs) // 2], "truncated frame"),
        ("zstd trailing junk", CompressionType.ZSTD, 2, zs + b"junk", "invalid zstd stream"),
        ("zstd garbage", CompressionType.ZSTD, 2, b"not zstd at all", "invalid zstd stream"),
    ]


@pytest.mark.parametrize(
    ("codec", "magic", "data", "reason"),
    [pytest.param(*case[1:], id=case[0]) for case in _damaged()],
)
def test_damaged_stream_raises_value_error_with_reason(
    codec: CompressionType, magic: int, data: bytes, reason: str
) -> None:
    with pytest.raises(ValueError, match=reason) as info:
        decompress(codec, data, magic=magic)
    assert not isinstance(info.value, UnsupportedCodecError)


def xerial_block_ends(stream: bytes) -> set[int]:
    """Stream lengths that end exactly after a block: the framing has no end mark, so those cuts are valid."""
    ends = {16}
    pos = 16
    while pos < len(stream):
        pos += 4 + struct.unpack_from(">i", stream, pos)[0]
        ends.add(pos)
    return ends


@pytest.mark.parametrize("codec", [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4])
@given(cut=st.integers(1, 10_000), seed=st.integers(0, 2**16))
def test_any_truncation_is_detected(codec: CompressionType, cut: int, seed: int) -> None:
    data = synthetic(50_000, seed, "mixed")
    stream = compress(codec, data)
    kept = len(stream) - min(cut, len(stream) - 1)
    assume(codec != CompressionType.SNAPPY or kept not in xerial_block_ends(stream))
    with pytest.raises(ValueError, match=r"invalid (gzip|snappy|lz4)|truncated"):
        decompress(codec, stream[:kept])


@given(cut=st.integers(1, 10_000), seed=st.integers(0, 2**16))
def test_any_zstd_truncation_is_detected(cut: int, seed: int) -> None:
    stream = compress(CompressionType.ZSTD, synthetic(50_000, seed, "mixed"))
    cut = min(cut, len(stream) - 1)
    with pytest.raises(ValueError, match="invalid zstd stream"):
        decompress(CompressionType.ZSTD, stream[: len(stream) - cut])
