"""Reading ``.log`` segments (``records/log.py``): entries, headers, records, and precise damage reports.

Every damage test expects the specific error class and its location attributes (segment, byte position of the
damaged entry, its offset when readable), as Kafka's ``ByteBufferLogInputStream`` / segment recovery see it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import CorruptRecordError, InvalidCrcError, TruncatedSegmentError
from kafka_segments.records import (
    CompressionType,
    ControlRecordType,
    EndTransactionMarker,
    Header,
    Record,
    RecordBatch,
    TimestampType,
    build_batch,
    build_end_transaction_marker,
    empty_batch_header,
    iter_batches,
    iter_records,
    read_entry,
    scan_headers,
    scan_valid_prefix,
)
from kafka_segments.records.crc import crc32c
from unit.strategies import BatchSpec, segment_bytes, segment_specs

pytestmark = pytest.mark.unit

TS = 1_700_000_000_000
NAME = "00000000000000000100.log"
GOLDEN_DIR = Path(__file__).resolve().parents[1] / "data" / "v2"


def _batches() -> list[bytes]:
    return [
        build_batch([Record(100, TS, b"a", b"1"), Record(101, TS + 1, None, b"")], partition_leader_epoch=0),
        build_batch(
            [Record(102, TS + 2, b"b", b"gz" * 30), Record(104, TS + 4, b"c", None)],
            compression=CompressionType.GZIP,
            producer_id=5,
            producer_epoch=0,
            base_sequence=0,
        ),
        build_batch(
            [Record(105, TS + 5, b"d", b"x", (Header("h", None),)), Record(106, TS + 6, b"e", b"y")],
            producer_id=6,
            producer_epoch=1,
            base_sequence=10,
            is_transactional=True,
        ),
        build_end_transaction_marker(
            EndTransactionMarker(ControlRecordType.ABORT, 2),
            offset=107,
            timestamp=TS + 7,
            producer_id=6,
            producer_epoch=1,
        ),
        build_batch(
            [Record(110, TS + 10, b"f", b"z" * 40)],
            base_offset=108,
            compression=CompressionType.ZSTD,
            timestamp_type=TimestampType.LOG_APPEND_TIME,
            log_append_time=TS + 99,
        ),
    ]


BATCHES = _batches()
SEGMENT = b"".join(BATCHES)
POSITIONS = [sum(len(b) for b in BATCHES[:i]) for i in range(len(BATCHES))]
BASE_OFFSETS = [100, 102, 105, 107, 108]
ALL_RECORDS = [r for b in BATCHES for r in RecordBatch.from_bytes(b).records]
DAMAGED = 2  # the batch the damage table breaks (base offset 105)


def reseal_at(buf: bytearray, position: int) -> bytearray:
    """Recompute the CRC of the v2 batch at ``position`` (a damage that should pass the CRC check)."""
    (size,) = struct.unpack_from(">i", buf, position + 8)
    end = position + 12 + size
    buf[position + 17 : position + 21] = crc32c(bytes(buf[position + 21 : end])).to_bytes(4, "big")
    return buf


def at_damaged(edit: Callable[[bytearray, int], None], *, reseal: bool = False) -> Callable[[], bytes]:
    def make() -> bytes:
        buf = bytearray(SEGMENT)
        edit(buf, POSITIONS[DAMAGED])
        if reseal:
            reseal_at(buf, POSITIONS[DAMAGED])
        return bytes(buf)

    return make


def _flip(offset: int, mask: int = 0xFF) -> Callable[[bytearray, int], None]:
    def edit(buf: bytearray, pos: int) -> None:
        buf[pos + offset] ^= mask

    return edit


def _set(offset: int, fmt: str, value: int) -> Callable[[bytearray, int], None]:
    def edit(buf: bytearray, pos: int) -> None:
        struct.pack_into(fmt, buf, pos + offset, value)

    return edit


def _truncate(keep: int) -> Callable[[bytearray, int], None]:
    def edit(buf: bytearray, pos: int) -> None:
        del buf[pos + keep :]

    return edit


@dataclass(frozen=True)
class Damage:
    make: Callable[[], bytes]
    error: type[CorruptRecordError]
    match: str
    position: int
    offset: int | None
    batches_before: int


P = POSITIONS[DAMAGED]
BATCH_SIZE = len(BATCHES[DAMAGED])
END = len(SEGMENT)

DAMAGE = {
    "crc-byte-flipped": Damage(at_damaged(_flip(18)), InvalidCrcError, "CRC mismatch", P, 105, DAMAGED),
    "attributes-byte-flipped": Damage(
        at_damaged(_flip(22, 0x01)), InvalidCrcError, "CRC mismatch", P, 105, DAMAGED
    ),
    "record-byte-flipped": Damage(
        at_damaged(_flip(63, 0x40)), InvalidCrcError, "CRC mismatch", P, 105, DAMAGED
    ),
    "truncated-mid-batch": Damage(
        at_damaged(_truncate(40)),
        TruncatedSegmentError,
        f"entry declares {BATCH_SIZE} bytes but only 40 remain",
        P,
        105,
        DAMAGED,
    ),
    "truncated-before-magic": Damage(
        at_damaged(_truncate(10)),
        TruncatedSegmentError,
        r"segment ends inside an entry header \(10 bytes left, 17 needed\)",
        P,
        105,
        DAMAGED,
    ),
    "truncated-inside-offset": Damage(
        at_damaged(_truncate(5)), TruncatedSegmentError, r"\(5 bytes left, 17 needed\)", P, None, DAMAGED
    ),
    "length-below-any-entry": Damage(
        at_damaged(_set(8, ">i", 13)), CorruptRecordError, "impossible entry size 13", P, 105, DAMAGED
    ),
    "length-negative": Damage(
        at_damaged(_set(8, ">i", -5)), CorruptRecordError, "impossible entry size -5", P, 105, DAMAGED
    ),
    "length-below-a-v2-header": Damage(
        at_damaged(_set(8, ">i", 48)), CorruptRecordError, "impossible batch length 48", P, 105, DAMAGED
    ),
    "length-too-large": Damage(
        at_damaged(_set(8, ">i", 10_000)),
        TruncatedSegmentError,
        f"entry declares 10012 bytes but only {END - P} remain",
        P,
        105,
        DAMAGED,
    ),
    "magic-3": Damage(
        at_damaged(_set(16, ">b", 3)), CorruptRecordError, "unknown magic byte 3", P, 105, DAMAGED
    ),
    "magic-minus-1": Damage(
        at_damaged(_set(16, ">b", -1)), CorruptRecordError, "unknown magic byte 255", P, 105, DAMAGED
    ),
    "negative-last-offset-delta": Damage(
        at_damaged(_set(23, ">i", -1), reseal=True),
        CorruptRecordError,
        "invalid batch header",
        P,
        105,
        DAMAGED,
    ),
    "negative-records-count": Damage(
        at_damaged(_set(57, ">i", -2), reseal=True), CorruptRecordError, "recordsCount -2", P, 105, DAMAGED
    ),
    "few-bytes-after-the-last-batch": Damage(
        lambda: SEGMENT + b"\x00\x00\x00",
        TruncatedSegmentError,
        r"\(3 bytes left, 17 needed\)",
        END,
        None,
        len(BATCHES),
    ),
    "zeros-after-the-last-batch": Damage(
        lambda: SEGMENT + bytes(64), CorruptRecordError, "impossible entry size 0", END, 0, len(BATCHES)
    ),
}
CASES = [pytest.param(damage, id=name) for name, damage in DAMAGE.items()]


def drain(items: Iterator[int], seen: list[int]) -> None:
    """Collect what an iterator yields before it raises."""
    for item in items:
        seen.append(item)


def assert_located(exc: CorruptRecordError, damage: Damage) -> None:
    assert type(exc) is damage.error
    assert (exc.segment, exc.position, exc.offset) == (NAME, damage.position, damage.offset)
    assert str(exc).startswith(f"{NAME} at byte {damage.position}")


# --- clean segments ---


def test_iter_batches_yields_every_batch_at_its_position() -> None:
    batches = list(iter_batches(SEGMENT, segment=NAME))
    assert [type(b) for b in batches] == [RecordBatch] * len(BATCHES)
    assert [b.header.position for b in batches] == POSITIONS
    assert [b.header.base_offset for b in batches] == BASE_OFFSETS
    assert [bytes(b.raw) for b in batches] == BATCHES
    assert all(b.segment == NAME for b in batches)


def test_scan_headers_matches_the_batches_without_decoding_records() -> None:
    headers = list(scan_headers(SEGMENT, segment=NAME))
    assert headers == [
        RecordBatch.from_bytes(b, position=p).header for b, p in zip(BATCHES, POSITIONS, strict=True)
    ]
    assert headers == list(scan_headers(SEGMENT, verify_crc=True))
    assert [h.last_offset for h in headers] == [101, 104, 106, 107, 110]
    assert headers[-1].position + headers[-1].size_in_bytes == len(SEGMENT)


def test_scan_headers_never_touches_record_bytes() -> None:
    # records that cannot be decoded (but with a valid CRC) do not stop a header scan
    buf = bytearray(SEGMENT)
    buf[P + 61] = 0x7E  # first record's length: 63, more than the batch holds
    data = bytes(reseal_at(buf, P))
    assert [h.base_offset for h in scan_headers(data, verify_crc=True)] == BASE_OFFSETS
    with pytest.raises(CorruptRecordError, match="record 0 declares 63 bytes"):
        list(iter_records(data))


def test_iter_records_gives_every_record_in_order() -> None:
    records = list(iter_records(SEGMENT, segment=NAME))
    assert records == ALL_RECORDS
    assert [r.offset for r in records] == [100, 101, 102, 104, 105, 106, 107, 110]
    assert records[-1].timestamp == TS + 99  # LogAppendTime applied
    assert records[3].value is None


def test_read_entry_at_every_position() -> None:
    for position, raw in zip(POSITIONS, BATCHES, strict=True):
        entry = read_entry(SEGMENT, position, segment=NAME)
        assert isinstance(entry, RecordBatch)
        assert bytes(entry.raw) == raw
        assert entry.header.position == position


def test_read_entry_does_not_check_the_crc() -> None:
    data = DAMAGE["crc-byte-flipped"].make()
    entry = read_entry(data, P, segment=NAME)
    assert entry.header.base_offset == 105
    with pytest.raises(InvalidCrcError) as info:
        entry.verify_crc()
    assert (info.value.position, info.value.offset) == (P, 105)


def test_read_entry_at_the_end_is_truncated() -> None:
    with pytest.raises(TruncatedSegmentError, match=r"\(0 bytes left, 17 needed\)") as info:
        read_entry(SEGMENT, END, segment=NAME)
    assert (info.value.position, info.value.offset) == (END, None)


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview], ids=["bytes", "bytearray", "memoryview"])
def test_reads_any_buffer(wrap: Callable[[bytes], bytes]) -> None:
    data = wrap(SEGMENT)
    assert list(iter_records(data)) == ALL_RECORDS
    assert scan_valid_prefix(data).valid_bytes == END


def test_empty_segment() -> None:
    assert list(iter_batches(b"")) == []
    assert list(scan_headers(b"")) == []
    scan = scan_valid_prefix(b"")
    assert (scan.batches, scan.valid_bytes, scan.damage, scan.is_clean) == ((), 0, None, True)


def test_scan_valid_prefix_of_a_clean_segment() -> None:
    scan = scan_valid_prefix(SEGMENT, segment=NAME)
    assert scan.is_clean
    assert scan.damage is None
    assert scan.valid_bytes == END
    assert [h.base_offset for h in scan.batches] == BASE_OFFSETS


def test_default_segment_name_is_memory() -> None:
    with pytest.raises(InvalidCrcError, match=r"^<memory> at byte \d+ \(offset 105\)"):
        list(iter_batches(DAMAGE["crc-byte-flipped"].make()))


# --- damage ---


@pytest.mark.parametrize("damage", CASES)
def test_iter_batches_reports_damage_precisely(damage: Damage) -> None:
    data = damage.make()
    seen: list[int] = []
    with pytest.raises(damage.error, match=damage.match) as info:
        drain((b.header.base_offset for b in iter_batches(data, segment=NAME)), seen)
    assert_located(info.value, damage)
    assert seen == BASE_OFFSETS[: damage.batches_before]


@pytest.mark.parametrize("damage", CASES)
def test_scan_valid_prefix_stops_at_damage(damage: Damage) -> None:
    scan = scan_valid_prefix(damage.make(), segment=NAME)
    assert not scan.is_clean
    assert scan.damage is not None
    assert_located(scan.damage, damage)
    assert [h.base_offset for h in scan.batches] == BASE_OFFSETS[: damage.batches_before]
    assert scan.valid_bytes == damage.position


@pytest.mark.parametrize("damage", CASES)
def test_iter_records_reports_the_same_damage(damage: Damage) -> None:
    with pytest.raises(damage.error, match=damage.match) as info:
        list(iter_records(damage.make(), segment=NAME))
    assert_located(info.value, damage)


@pytest.mark.parametrize(
    "name", ["crc-byte-flipped", "attributes-byte-flipped", "record-byte-flipped"], ids=lambda n: n
)
def test_crc_damage_is_ignored_when_not_verifying(name: str) -> None:
    data = DAMAGE[name].make()
    assert [b.header.base_offset for b in iter_batches(data, verify_crc=False)] == BASE_OFFSETS
    assert [h.base_offset for h in scan_headers(data)] == BASE_OFFSETS
    assert scan_valid_prefix(data, verify_crc=False).is_clean


# record-level damage: the batch frame and CRC are fine, its records are not
RECORD_DAMAGE = {
    "record-length-lies": (
        at_damaged(_flip(61, 0x02), reseal=True),  # first record's length 0x16 (11) -> 0x14 (10)
        "record 0: expected to read 10 bytes but read 11",
    ),
    "records-count-too-high": (
        at_damaged(_set(57, ">i", 3), reseal=True),
        r"record 2: varint at \d+ runs past",
    ),
    "records-count-too-low": (
        at_damaged(_set(57, ">i", 1), reseal=True),
        "unconsumed bytes after all 1 records were read",
    ),
}


def _append_garbage() -> bytes:
    buf = bytearray(SEGMENT[: P + BATCH_SIZE]) + b"junk!" + SEGMENT[P + BATCH_SIZE :]
    struct.pack_into(">i", buf, P + 8, BATCH_SIZE - 12 + 5)
    return bytes(reseal_at(buf, P))


RECORD_DAMAGE["unconsumed-bytes-after-the-records"] = (
    _append_garbage,
    "5 unconsumed bytes after all 2 records",
)


@pytest.mark.parametrize(("make", "match"), list(RECORD_DAMAGE.values()), ids=list(RECORD_DAMAGE))
def test_record_damage_is_reported_at_its_batch(make: Callable[[], bytes], match: str) -> None:
    data = make()
    # the frame is intact: every batch is found and every CRC passes
    assert scan_valid_prefix(data, segment=NAME).is_clean
    assert [b.header.base_offset for b in iter_batches(data)] == BASE_OFFSETS
    seen: list[int] = []
    with pytest.raises(CorruptRecordError, match=match) as info:
        drain((r.offset for r in iter_records(data, segment=NAME)), seen)
    assert type(info.value) is CorruptRecordError
    assert (info.value.segment, info.value.position, info.value.offset) == (NAME, P, 105)
    assert seen == [100, 101, 102, 104]


def test_record_damage_in_a_compressed_batch() -> None:
    # the gzip batch (index 1) with a damaged stream: the batch is named, the earlier batch was read
    buf = bytearray(SEGMENT)
    buf[POSITIONS[1] + 61 + 12] ^= 0xFF  # inside the deflate data
    data = bytes(reseal_at(buf, POSITIONS[1]))
    seen: list[int] = []
    with pytest.raises(CorruptRecordError) as info:
        drain((r.offset for r in iter_records(data, segment=NAME)), seen)
    assert (info.value.position, info.value.offset) == (POSITIONS[1], 102)
    assert seen == [100, 101]


# --- the golden segment ---


def test_golden_mixed_segment() -> None:
    data = (GOLDEN_DIR / "ours-mixed-segment.log").read_bytes()
    scan = scan_valid_prefix(data, segment="ours-mixed-segment.log")
    assert scan.is_clean
    assert scan.valid_bytes == len(data)
    summary = [
        (h.base_offset, h.last_offset, h.records_count, h.attributes, h.partition_leader_epoch)
        for h in scan.batches
    ]
    assert summary == [
        (0, 2, 3, 0x00, 0),  # plain
        (3, 5, 3, 0x01, 0),  # gzip, idempotent
        (6, 7, 2, 0x10, 1),  # transactional
        (8, 8, 1, 0x30, 1),  # COMMIT marker
        (9, 11, 0, 0x10, 1),  # empty batch header of a transactional batch
        (12, 15, 2, 0x40, 1),  # rebuilt with a delete horizon
        (16, 17, 2, 0x0C, 3),  # zstd, LogAppendTime
        (18, 18, 1, 0x02, -1),  # snappy
        (19, 19, 1, 0x03, -1),  # lz4
    ]
    batches = list(iter_batches(data))
    records = [r for b in batches for r in b.records]
    assert [r.offset for r in records] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 13, 14, 16, 17, 18, 19]
    assert records[0] == Record(0, TS, b"k0", b"v0", (Header("h", b"1"),))
    assert records[1] == Record(1, TS - 1, None, b"")
    assert records[2].headers == (Header("n", None),)
    assert EndTransactionMarker.parse(records[8]) == EndTransactionMarker(ControlRecordType.COMMIT, 4)
    empty = batches[4].header
    assert (empty.base_timestamp, empty.max_timestamp, empty.producer_id, empty.base_sequence) == (
        -1,
        TS + 11,
        13,
        0,
    )
    horizon = batches[5].header
    assert horizon.delete_horizon_ms == TS + 86_400_000
    assert [(r.timestamp, r.value) for r in batches[5].records] == [(TS + 13, b"2"), (TS + 14, None)]
    assert {r.timestamp for r in batches[6].records} == {TS + 500}
    assert records[-2:] == [Record(18, TS + 18, b"s", b"snappy"), Record(19, TS + 19, b"l", b"lz4")]


# --- properties ---


@given(segment_specs())
def test_any_segment_round_trips(specs: list[BatchSpec]) -> None:
    data = segment_bytes(specs)
    headers = list(scan_headers(data, verify_crc=True))
    assert [h.base_offset for h in headers] == [s.base_offset for s in specs]
    assert [h.last_offset for h in headers] == [s.last_offset for s in specs]
    assert list(iter_records(data)) == [r for s in specs for r in s.expected_records()]
    scan = scan_valid_prefix(data)
    assert scan.is_clean
    assert scan.valid_bytes == len(data)


@given(segment_specs(min_batches=2, codecs=(CompressionType.NONE, CompressionType.LZ4)), st.data())
def test_truncation_anywhere_keeps_exactly_the_whole_batches(
    specs: list[BatchSpec], data: st.DataObject
) -> None:
    full = segment_bytes(specs)
    ends = []
    total = 0
    for spec in specs:
        total += len(spec.build())
        ends.append(total)
    cut = data.draw(st.integers(0, len(full) - 1))
    scan = scan_valid_prefix(full[:cut], segment=NAME)
    whole = [end for end in ends if end <= cut]
    assert len(scan.batches) == len(whole)
    assert scan.valid_bytes == (whole[-1] if whole else 0)
    if cut in ends or cut == 0:
        assert scan.is_clean
    else:
        assert isinstance(scan.damage, TruncatedSegmentError)
        assert scan.damage.position == scan.valid_bytes


@given(segment_specs(min_batches=2, codecs=(CompressionType.NONE,)), st.data())
def test_any_flipped_covered_byte_is_damage_at_its_batch(specs: list[BatchSpec], data: st.DataObject) -> None:
    batches = [spec.build() for spec in specs]
    index = data.draw(st.integers(0, len(batches) - 1))
    position = sum(len(b) for b in batches[:index])
    byte = data.draw(st.integers(21, len(batches[index]) - 1))
    buf = bytearray(b"".join(batches))
    buf[position + byte] ^= data.draw(st.integers(1, 255))
    scan = scan_valid_prefix(bytes(buf), segment=NAME)
    # the CRC is checked before the header's sanity, so damage under the CRC is always reported as such
    assert type(scan.damage) is InvalidCrcError
    assert (scan.damage.position, scan.damage.offset) == (position, specs[index].base_offset)
    assert len(scan.batches) == index
    assert scan.valid_bytes == position


def test_an_empty_batch_header_in_a_segment_has_no_records() -> None:
    source = RecordBatch.from_bytes(BATCHES[2])
    data = BATCHES[0] + empty_batch_header(source.header) + BATCHES[3]
    assert [r.offset for r in iter_records(data)] == [100, 101, 107]
    assert [h.records_count for h in scan_headers(data)] == [2, 0, 1]


@pytest.mark.parametrize(
    ("edit", "what"),
    [
        (_set(21, ">h", 5), "compression codec id 5"),
        (_set(21, ">h", 7), "compression codec id 7"),
        (_set(23, ">i", -1), "lastOffsetDelta -1"),
        (_set(57, ">i", -2), "recordsCount -2"),
    ],
    ids=["codec-5", "codec-7", "negative-last-offset-delta", "negative-records-count"],
)
@pytest.mark.parametrize("verify_crc", [True, False])
def test_impossible_header_values_are_corrupt_on_every_path(
    edit: Callable[[bytearray, int], None], what: str, verify_crc: bool
) -> None:
    # resealed, so only the header's own sanity check can catch it - on the header-only path too
    damaged = at_damaged(edit, reseal=True)()
    for read in (scan_headers, iter_batches):
        with pytest.raises(CorruptRecordError, match=f"invalid batch header.*{what}") as caught:
            list(read(damaged, segment=NAME, verify_crc=verify_crc))
        assert type(caught.value) is CorruptRecordError
        assert (caught.value.position, caught.value.offset) == (POSITIONS[DAMAGED], BASE_OFFSETS[DAMAGED])
    scan = scan_valid_prefix(damaged, segment=NAME, verify_crc=verify_crc)
    assert scan.valid_bytes == POSITIONS[DAMAGED]
