"""Batches whose CRC is valid but whose records or producer fields no producer writes, cleaned (or refused)
as Kafka's own cleaner does (docs/fidelity.md, "What Kafka's readers accept").

Found with the oracle (522 hostile batches in every shape; docs/fidelity.md): Kafka reads any negative key,
value or header value length as null; ignores a batch without a producer id (any id below 0) in its producer
state; counts an empty control batch as no marker ("the entire transaction has been cleaned from the log");
cannot load a log with a producer's control batch that is no COMMIT or ABORT marker, or with a producer's
plain batch inside its open transaction; and cannot rebuild a transactional batch without a producer id. A
run refused the first three, let the empty control batch end the transaction (and removed records Kafka
keeps), and cleaned the last three.

Runs only when ``KAFKA_ORACLE`` names the kafka-oracle launcher (``clean`` runs Kafka's own ``Cleaner``).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from fidelity.sides import needs_oracle, side_by_side
from kafka_segments.records import CompressionType, Record, build_batch
from kafka_segments.records.compression import compress
from kafka_segments.records.varint import encode_varint
from unit.test_legacy import message, sealed, wrapper

from interop.replaced_streams import NOW, PROPS, T0, batch, refusals, with_stream, write_log

pytestmark = [pytest.mark.e2e, needs_oracle]

NONE, GZIP = CompressionType.NONE, CompressionType.GZIP
GZIP_ID = int(GZIP)


def _record(offset_delta: int, key_length: int, key: bytes, value_length: int, header_value: int) -> bytes:
    """A record with the lengths given as written (negative or not), and one header ``h`` whose value length
    is ``header_value`` (its value ``x`` when not negative)."""
    header = encode_varint(1) + b"h" + encode_varint(header_value) + b"x" * max(header_value, 0)
    body = (
        b"\x00"  # attributes
        + encode_varint(offset_delta)  # timestamp delta: one ms per record
        + encode_varint(offset_delta)
        + encode_varint(key_length)
        + key
        + encode_varint(value_length)
        + (b"v" * value_length if value_length >= 0 else b"")
        + encode_varint(1)
        + header
    )
    return encode_varint(len(body)) + body


def _negative_lengths(offset: int, codec: CompressionType, keys: list[bytes]) -> bytes:
    """Four records: a key of length -2, one of -100 (both null), a value of length -2, a header value of
    length -2; the other keys ``keys``."""
    records = [
        _record(0, -2, b"", 1, 0),
        _record(1, -100, b"", 1, 0),
        _record(2, len(keys[0]), keys[0], -2, 0),
        _record(3, len(keys[1]), keys[1], 1, -2),
    ]
    stream = b"".join(records)
    template = batch(offset, [b"a", b"b", b"c", b"d"], codec)
    return with_stream(template, codec, lambda _: stream if codec == NONE else compress(codec, stream))


def _txn(offset: int, keys: list[bytes], producer_id: int, *, control: bool = False) -> bytes:
    records = [Record(offset + i, T0 + offset, key, b"v") for i, key in enumerate(keys)]
    return build_batch(
        records,
        producer_id=producer_id,
        producer_epoch=0,
        base_sequence=0,
        is_transactional=True,
        is_control=control,
        base_offset=offset,
        last_offset=offset + max(len(keys) - 1, 0),
        max_timestamp=T0 + offset,
    )


def test_negative_lengths_and_batches_of_no_producer_are_cleaned_as_kafka_cleans_them(tmp_path: Path) -> None:
    batches = [
        _negative_lengths(0, NONE, [b"again", b"own-0"]),
        _negative_lengths(4, GZIP, [b"own-1", b"again"]),
        _txn(8, [b"own-2", b"own-5"], producer_id=-1),  # kept whole: Kafka cannot rebuild it
        _txn(10, [b"again", b"own-4"], producer_id=-5),  # rebuilt: -5 has an id to Kafka's builder
        batch(12, [b"again"], NONE),
    ]
    source = write_log(tmp_path, batches)

    sides = side_by_side(source, tmp_path / "work", now=NOW, props=PROPS)

    assert sides.compaction.get("error") is None
    assert sides.exported_segments == sides.kafka_segments
    assert sides.kafka["stats"]["messages_written"] > 0


def test_an_empty_control_batch_ends_no_transaction(tmp_path: Path) -> None:
    """Producer 77's transaction stays open: the last stable offset holds the round at offset 0 on both
    sides (a run once took the empty batch for a marker, cleaned past it and removed records Kafka keeps)."""
    batches = [
        _txn(0, [b"a", b"b"], producer_id=77),
        _txn(2, [], producer_id=77, control=True),
        batch(3, [b"a", b"b", b"a"], NONE),
        batch(6, [b"a", b"b"], NONE),
    ]
    source = write_log(tmp_path, batches)

    sides = side_by_side(source, tmp_path / "work", now=NOW, props=PROPS)

    assert sides.exported_segments == sides.kafka_segments
    assert sides.kafka_segments[0]["size"] == (source / "t-0" / "00000000000000000000.log").stat().st_size


def _not_a_marker(offset: int) -> bytes:
    """A control batch of producer 77 whose record is a LEADER_CHANGE control record, not a marker."""
    record = Record(offset, T0 + offset, b"\x00\x00\x00\x02", b"\x00\x00\x00\x00\x00\x00")
    return build_batch(
        [record], producer_id=77, producer_epoch=0, base_sequence=-1, is_transactional=True, is_control=True
    )


REFUSED = {
    "a producer's control batch that is no marker (Kafka cannot load the log)": (
        [_txn(0, [b"a"], producer_id=77), _not_a_marker(1), batch(2, [b"a"], NONE)],
        "holds no transaction marker",
    ),
    "a plain batch of a producer inside its open transaction (Kafka cannot load the log)": (
        [
            _txn(0, [b"a"], producer_id=42),
            build_batch([Record(1, T0, b"b", b"v")], producer_id=42, producer_epoch=0, base_sequence=1),
            batch(2, [b"a"], NONE),
        ],
        "a non-transactional batch of producer 42",
    ),
    "a transactional batch without a producer id, rebuilt (Kafka's cleaner cannot write it)": (
        [_txn(0, [b"a", b"b"], producer_id=-1, control=False), batch(2, [b"a"], NONE)],
        "transactional without a valid producer id",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED), ids=["not-a-marker", "plain-in-transaction", "no-producer"])
def test_what_kafka_cannot_load_or_rebuild_is_refused_by_both(case: str, tmp_path: Path) -> None:
    batches, reason = REFUSED[case]
    source = write_log(tmp_path, batches)

    kafka, ours = refusals(tmp_path, source)

    assert "Exception" in kafka
    assert reason in ours


# Legacy messages (magic 0 and 1): Kafka's cleaner reads them field by field and writes what it keeps as v2.


def _legacy(offset: int, key: bytes, *, magic: int = 1) -> bytes:
    return message(magic, offset, key, b"v%d" % offset, timestamp=T0 + offset)


def test_legacy_messages_kafkas_readers_take_are_cleaned_as_kafka_cleans_them(tmp_path: Path) -> None:
    """A key length of -2 (null), bytes after a value, bytes and a cut message after a wrapper's inner set,
    an inner magic 2 (read in v1's layout), attribute bit 4 (no transactions before magic 2): a run
    refused the first five and refused to rebuild the last as a transactional batch without a producer."""
    inner = _legacy(0, b"again") + _legacy(1, b"own-1")
    magic_2 = _legacy(6, b"again")[:16] + b"\x02" + _legacy(6, b"again")[17:]  # the magic byte: 2
    batches = [
        sealed(_legacy(0, b"")[:26] + struct.pack(">i", -2) + struct.pack(">i", 2) + b"v0"),
        sealed(_legacy(1, b"own-2", magic=0) + b"??"),
        wrapper(1, 3, GZIP_ID, inner + b"\x00" * 5),
        wrapper(1, 5, GZIP_ID, _legacy(0, b"own-3") + _legacy(1, b"again") + _legacy(2, b"x")[:-3]),
        wrapper(0, 7, GZIP_ID, magic_2 + _legacy(7, b"x")),
        message(1, 8, b"again", b"v", attributes=0x10, timestamp=T0 + 8),
        _legacy(9, b"again"),
    ]
    source = write_log(tmp_path, batches)

    sides = side_by_side(source, tmp_path / "work", now=NOW, props=PROPS)

    assert sides.compaction.get("error") is None
    assert sides.exported_segments == sides.kafka_segments


def test_a_negative_timestamp_kafkas_builder_refuses_is_refused_by_both(tmp_path: Path) -> None:
    batches = [message(1, 0, b"kept", b"v", timestamp=-5), _legacy(1, b"again"), _legacy(2, b"again")]

    kafka, ours = refusals(tmp_path, write_log(tmp_path, batches))

    assert "Invalid negative timestamp -5" in kafka
    assert "negative timestamp -5" in ours
