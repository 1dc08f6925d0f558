"""Zigzag varints / varlongs as Kafka's ``ByteUtils.writeVarint`` / ``writeVarlong`` write them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.records.varint import (
    VARINT_MAX_BYTES,
    VARLONG_MAX_BYTES,
    VarintError,
    decode_varint,
    encode_varint,
    zigzag_decode,
    zigzag_encode,
)

pytestmark = pytest.mark.unit

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# (value, encoding) at every 7-bit boundary of the zigzag mapping (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...).
VARINT_GOLDEN = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (-2, "03"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
    (-65, "8101"),
    (8191, "fe7f"),
    (-8192, "ff7f"),
    (8192, "808001"),
    (-8193, "818001"),
    (1048575, "feff7f"),
    (-1048576, "ffff7f"),
    (1048576, "80808001"),
    (134217727, "feffff7f"),
    (-134217728, "ffffff7f"),
    (134217728, "8080808001"),
    (INT32_MAX, "feffffff0f"),
    (INT32_MIN, "ffffffff0f"),
]
VARLONG_GOLDEN = [
    (2**31, "8080808010"),
    (INT32_MIN - 1, "8180808010"),
    (2**34 - 1, "feffffff7f"),
    (-(2**34), "ffffffff7f"),
    (2**34, "808080808001"),
    (1_700_000_000_000, "80a0abfef962"),
    (-1_700_000_000_000, "ff9fabfef962"),
    (2**62 - 1, "feffffffffffffff7f"),
    (2**62, "80808080808080808001"),
    (INT64_MAX, "feffffffffffffffff01"),
    (INT64_MIN, "ffffffffffffffffff01"),
]
GOLDEN = VARINT_GOLDEN + VARLONG_GOLDEN


@pytest.mark.parametrize(("value", "encoded"), GOLDEN, ids=[str(v) for v, _ in GOLDEN])
def test_encode_matches_golden_boundary_table(value: int, encoded: str) -> None:
    assert encode_varint(value).hex() == encoded


@pytest.mark.parametrize(("value", "encoded"), GOLDEN, ids=[str(v) for v, _ in GOLDEN])
def test_decode_matches_golden_boundary_table(value: int, encoded: str) -> None:
    raw = bytes.fromhex(encoded)
    buf = b"\xaa\xbb" + raw + b"\xcc"  # surrounded by other bytes: decoding starts at pos, stops at the end
    assert decode_varint(buf, 2) == (value, 2 + len(raw))


@pytest.mark.parametrize(("value", "encoded"), VARINT_GOLDEN, ids=[str(v) for v, _ in VARINT_GOLDEN])
def test_int32_values_fit_a_five_byte_varint(value: int, encoded: str) -> None:
    assert decode_varint(bytes.fromhex(encoded), 0, max_bytes=VARINT_MAX_BYTES) == (value, len(encoded) // 2)


def test_zigzag_maps_small_magnitudes_to_small_codes() -> None:
    assert [zigzag_encode(v) for v in (0, -1, 1, -2, 2, INT64_MAX, INT64_MIN)] == [
        0,
        1,
        2,
        3,
        4,
        2**64 - 2,
        2**64 - 1,
    ]
    assert [zigzag_decode(r) for r in (0, 1, 2, 3, 4, 2**64 - 2, 2**64 - 1)] == [
        0,
        -1,
        1,
        -2,
        2,
        INT64_MAX,
        INT64_MIN,
    ]


@given(st.integers(INT64_MIN, INT64_MAX))
def test_round_trip_over_int64(value: int) -> None:
    encoded = encode_varint(value)
    assert len(encoded) <= VARLONG_MAX_BYTES
    assert decode_varint(encoded, 0) == (value, len(encoded))
    # every byte but the last has its continuation bit set
    assert all(b & 0x80 for b in encoded[:-1])
    assert not encoded[-1] & 0x80


@given(st.integers(INT32_MIN, INT32_MAX))
def test_int32_round_trip_within_five_bytes(value: int) -> None:
    encoded = encode_varint(value)
    assert len(encoded) <= VARINT_MAX_BYTES
    assert decode_varint(encoded, 0, max_bytes=VARINT_MAX_BYTES) == (value, len(encoded))


@given(st.lists(st.integers(INT64_MIN, INT64_MAX), max_size=20))
def test_concatenated_varints_decode_in_sequence(values: list[int]) -> None:
    buf = b"".join(encode_varint(v) for v in values)
    pos = 0
    decoded = []
    for _ in values:
        value, pos = decode_varint(buf, pos)
        decoded.append(value)
    assert decoded == values
    assert pos == len(buf)


@pytest.mark.parametrize("value", [INT64_MAX + 1, INT64_MIN - 1, 2**64, -(2**70)])
def test_encode_refuses_values_outside_int64(value: int) -> None:
    with pytest.raises(VarintError, match="does not fit a varlong"):
        encode_varint(value)


@pytest.mark.parametrize(
    ("encoded", "max_bytes"),
    [
        ("8080808000", 4),  # 5 bytes, limit 4
        ("808080808000", VARINT_MAX_BYTES),  # a 6-byte varint
        ("ffffffffff01", VARINT_MAX_BYTES),
        ("8080808080808080808000", VARLONG_MAX_BYTES),  # an 11-byte varlong
        ("ffffffffffffffffffff01", VARLONG_MAX_BYTES),
    ],
)
def test_too_long_varint_raises(encoded: str, max_bytes: int) -> None:
    with pytest.raises(VarintError, match=f"longer than {max_bytes} bytes"):
        decode_varint(bytes.fromhex(encoded), 0, max_bytes=max_bytes)


def test_longest_legal_encodings_are_accepted_at_their_limit() -> None:
    assert decode_varint(bytes.fromhex("ffffffff0f"), 0, max_bytes=VARINT_MAX_BYTES) == (INT32_MIN, 5)
    assert decode_varint(bytes.fromhex("ffffffffffffffffff01"), 0, max_bytes=VARLONG_MAX_BYTES) == (
        INT64_MIN,
        10,
    )
    with pytest.raises(VarintError, match="longer than 5 bytes"):
        decode_varint(bytes.fromhex("ffffffffffffffffff01"), 0, max_bytes=VARINT_MAX_BYTES)


@pytest.mark.parametrize(
    ("buf", "pos"),
    [
        (b"", 0),
        (b"\x02", 1),  # position at the end
        (b"\x80", 0),
        (bytes.fromhex("ffffffff"), 0),  # INT32_MIN without its last byte
        (bytes.fromhex("00feffffffffffffffff"), 1),  # INT64_MAX without its last byte
    ],
)
def test_truncated_varint_raises(buf: bytes, pos: int) -> None:
    with pytest.raises(VarintError, match="runs past the end of the buffer"):
        decode_varint(buf, pos)


def test_varint_error_is_a_value_error() -> None:
    # callers (record decoding) catch ValueError subclasses to add the location
    assert issubclass(VarintError, ValueError)


@given(st.integers(INT64_MIN, INT64_MAX), st.data())
def test_every_strict_prefix_of_an_encoding_is_truncated(value: int, data: st.DataObject) -> None:
    encoded = encode_varint(value)
    cut = data.draw(st.integers(0, len(encoded) - 1))
    with pytest.raises(VarintError, match="runs past the end"):
        decode_varint(encoded[:cut], 0)


def test_decode_reads_memoryview_and_bytearray() -> None:
    raw = bytes.fromhex("00ff7f")
    assert decode_varint(memoryview(raw), 1) == (-8192, 3)
    assert decode_varint(bytearray(raw), 1) == (-8192, 3)
