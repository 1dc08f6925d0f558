"""What follows a records stream's last gzip member, zstd frame or snappy block, cleaned as Kafka's own
cleaner cleans it (docs/fidelity.md, "What Kafka's readers accept").

Java's streams read past the end of a records stream by rules of their own: the JDK's ``GZIPInputStream``
ignores up to 18 bytes in its buffer and anything that is not a header; zstd-jni ignores an incomplete
frame read with the end of the last one; snappy-java ignores fewer than 4 bytes and passes over a bad
header. A run called all of it damage and quarantined partitions Kafka cleaned. Every row of the unit
tables (``tests/unit/test_codec_tails.py``) that Kafka's readers take is here, in one log per codec, each
in a batch the round rebuilds and in one it keeps whole; one row each that they refuse, the refusal on
both sides.

Runs only when ``KAFKA_ORACLE`` names the kafka-oracle launcher (``clean`` runs Kafka's own ``Cleaner``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fidelity.sides import needs_oracle, side_by_side
from kafka_segments.records import CompressionType
from unit.test_codec_tails import GZIP_TAILS, SNAPPY_TAILS, ZSTD_TAILS

from interop.replaced_streams import NOW, PROPS, log_dir, refusals

pytestmark = [pytest.mark.e2e, needs_oracle]

TABLES = {
    CompressionType.GZIP: GZIP_TAILS,
    CompressionType.ZSTD: ZSTD_TAILS,
    CompressionType.SNAPPY: SNAPPY_TAILS,
}
REFUSED = {
    CompressionType.GZIP: "bytes beyond the reader's 8 KiB buffer are always read as a header",
    CompressionType.ZSTD: "read after it: a truncated source",
    CompressionType.SNAPPY: "a cut header is refused",
}


@pytest.mark.parametrize("codec", list(TABLES), ids=lambda codec: codec.name.lower())
def test_what_kafkas_readers_take_is_cleaned_as_kafka_cleans_it(
    codec: CompressionType, tmp_path: Path
) -> None:
    taken = {rule: make for rule, make, read in TABLES[codec] if read}

    sides = side_by_side(log_dir(tmp_path, codec, taken), tmp_path / "work", now=NOW, props=PROPS)

    assert sides.compaction.get("error") is None
    assert sides.exported_segments == sides.kafka_segments
    batches = sides.kafka_segments[0]["batches"]
    assert [batch["count"] for batch in batches[: 2 * len(taken)]] == [1, 4] * len(taken)


@pytest.mark.parametrize("codec", list(REFUSED), ids=lambda codec: codec.name.lower())
def test_what_kafkas_readers_refuse_is_refused_by_both(codec: CompressionType, tmp_path: Path) -> None:
    (make,) = [make for rule, make, _ in TABLES[codec] if rule == REFUSED[codec]]

    kafka, ours = refusals(tmp_path, log_dir(tmp_path, codec, {"refused": make}))

    assert "Exception" in kafka
    assert "t-0/00000000000000000000.log at byte 0 (offset 0)" in ours
