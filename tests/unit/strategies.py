"""Hypothesis strategies for v2 records, batches and segments, shared by the record-format tests.

Import as ``from unit.strategies import ...`` (``tests/`` is on ``sys.path`` through ``tests/conftest.py``),
which works from every test directory.

A ``BatchSpec`` is everything ``build_batch`` needs plus what a reader must give back: ``spec.build()`` writes
the batch, ``spec.expected_records()`` / ``expected_base_timestamp`` / ``expected_max_timestamp`` say what
reading it must return (LogAppendTime applied, delete horizon in baseTimestamp).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hypothesis import strategies as st
from kafka_segments.records import (
    CompressionType,
    ControlKey,
    EndTransactionMarker,
    Header,
    Record,
    TimestampType,
    build_batch,
)
from kafka_segments.records.control import ControlRecordType

INT16_MAX = 2**15 - 1
INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# Realistic epoch milliseconds (and -1, Kafka's NO_TIMESTAMP): every timestamp delta stays inside an int64.
TIMESTAMP_MIN = -1
TIMESTAMP_MAX = 2**45
TS_BASE = 1_700_000_000_000

ALL_CODECS = tuple(CompressionType)

binary_or_none = st.none() | st.binary(max_size=48)

headers = st.lists(
    st.builds(Header, key=st.text(max_size=12), value=binary_or_none),
    max_size=3,
).map(tuple)

timestamps = st.one_of(
    st.integers(TS_BASE - 10**9, TS_BASE + 10**9),
    st.integers(TIMESTAMP_MIN, TIMESTAMP_MAX),
)


@st.composite
def offset_layouts(
    draw: st.DrawFn, /, *, min_records: int = 1, max_records: int = 8
) -> tuple[int, list[int], int]:
    """``(base_offset, record offsets, last_offset)`` with gaps, as a compacted batch can have them.

    The first record may sit above the base offset and the last offset above the last record (records removed
    by compaction keep the batch's original base offset and lastOffsetDelta).
    """
    count = draw(st.integers(min_records, max_records))
    base = draw(st.integers(0, 2**62))
    gap = st.integers(1, 3) | st.integers(1, 2**20)
    lead = draw(st.just(0) | st.integers(0, 100))
    offsets: list[int] = []
    current = base + lead
    for index in range(count):
        if index:
            current += draw(gap)
        offsets.append(current)
    tail = draw(st.just(0) | st.integers(0, 100))
    last = (offsets[-1] if offsets else base) + tail
    return base, offsets, last


@st.composite
def data_records(draw: st.DrawFn, /, offsets: list[int]) -> list[Record]:
    """Records at ``offsets``: null/empty/binary keys and values, headers, timestamps around the first."""
    return [
        Record(
            offset,
            draw(timestamps),
            draw(binary_or_none),
            draw(binary_or_none),
            draw(headers),
        )
        for offset in offsets
    ]


@st.composite
def control_records(draw: st.DrawFn, /, offsets: list[int]) -> list[Record]:
    """Control records: a 4-byte control key (any type, unknown ones too) and a marker-like value."""
    records = []
    for offset in offsets:
        type_id = draw(st.sampled_from([0, 1, 2, 3, 4, 5, 6]) | st.integers(-(2**15), INT16_MAX))
        version = draw(st.just(0) | st.integers(0, INT16_MAX))
        value = draw(
            st.integers(-(2**31), INT32_MAX).map(
                lambda epoch: EndTransactionMarker(ControlRecordType.COMMIT, epoch).value_bytes()
            )
            | st.binary(max_size=16)
        )
        records.append(Record(offset, draw(timestamps), ControlKey(version, type_id).build(), value))
    return records


@dataclass(frozen=True)
class BatchSpec:
    """The arguments of one ``build_batch`` call."""

    records: tuple[Record, ...]
    base_offset: int
    last_offset: int
    compression: CompressionType = CompressionType.NONE
    timestamp_type: TimestampType = TimestampType.CREATE_TIME
    log_append_time: int | None = None
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    is_transactional: bool = False
    is_control: bool = False
    partition_leader_epoch: int = -1
    delete_horizon_ms: int | None = None

    def build(self) -> bytes:
        return build_batch(
            self.records,
            base_offset=self.base_offset,
            last_offset=self.last_offset,
            compression=self.compression,
            timestamp_type=self.timestamp_type,
            log_append_time=self.log_append_time,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            base_sequence=self.base_sequence,
            is_transactional=self.is_transactional,
            is_control=self.is_control,
            partition_leader_epoch=self.partition_leader_epoch,
            delete_horizon_ms=self.delete_horizon_ms,
        )

    @property
    def is_log_append_time(self) -> bool:
        return self.timestamp_type == TimestampType.LOG_APPEND_TIME

    def expected_records(self) -> list[Record]:
        """What a reader returns: every record as written, with the log-append time for LogAppendTime."""
        if self.is_log_append_time:
            assert self.log_append_time is not None
            return [replace(record, timestamp=self.log_append_time) for record in self.records]
        return list(self.records)

    @property
    def expected_base_timestamp(self) -> int:
        if self.delete_horizon_ms is not None:
            return self.delete_horizon_ms
        return self.records[0].timestamp if self.records else -1

    @property
    def expected_max_timestamp(self) -> int:
        if self.is_log_append_time:
            assert self.log_append_time is not None
            return self.log_append_time
        return max((record.timestamp for record in self.records), default=-1)

    def shifted(self, to_base_offset: int) -> BatchSpec:
        """The same batch moved so that it starts at ``to_base_offset``."""
        delta = to_base_offset - self.base_offset
        return replace(
            self,
            records=tuple(replace(record, offset=record.offset + delta) for record in self.records),
            base_offset=self.base_offset + delta,
            last_offset=self.last_offset + delta,
        )


@st.composite
def batch_specs(
    draw: st.DrawFn,
    /,
    *,
    codecs: tuple[CompressionType, ...] = ALL_CODECS,
    min_records: int = 1,
    max_records: int = 8,
    control: bool | None = None,
    log_append_time: bool | None = None,
    delete_horizon: bool | None = None,
) -> BatchSpec:
    """Any v2 batch shape: ``control`` / ``log_append_time`` / ``delete_horizon`` force a flag on or off."""
    base, offsets, last = draw(offset_layouts(min_records=min_records, max_records=max_records))
    is_control = draw(st.booleans()) if control is None else control
    records = draw(control_records(offsets) if is_control else data_records(offsets))
    use_lat = draw(st.booleans()) if log_append_time is None else log_append_time
    use_horizon = draw(st.booleans()) if delete_horizon is None else delete_horizon
    if draw(st.booleans()):
        producer_id = draw(st.integers(0, INT64_MAX))
        producer_epoch = draw(st.integers(0, INT16_MAX))
        base_sequence = -1 if is_control else draw(st.integers(0, INT32_MAX))
        is_transactional = draw(st.booleans())
    else:
        producer_id, producer_epoch, base_sequence, is_transactional = -1, -1, -1, False
    return BatchSpec(
        records=tuple(records),
        base_offset=base,
        last_offset=last,
        compression=draw(st.sampled_from(codecs)),
        timestamp_type=TimestampType.LOG_APPEND_TIME if use_lat else TimestampType.CREATE_TIME,
        log_append_time=draw(timestamps) if use_lat else None,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        is_transactional=is_transactional,
        is_control=is_control,
        partition_leader_epoch=draw(st.just(-1) | st.integers(0, INT32_MAX)),
        delete_horizon_ms=draw(timestamps) if use_horizon else None,
    )


@st.composite
def segment_specs(
    draw: st.DrawFn, /, *, min_batches: int = 1, max_batches: int = 6, **batch_kwargs: object
) -> list[BatchSpec]:
    """Batches with increasing, possibly gapped offsets, as one ``.log`` segment holds them."""
    count = draw(st.integers(min_batches, max_batches))
    specs: list[BatchSpec] = []
    next_offset = draw(st.integers(0, 2**40))
    for _ in range(count):
        spec = draw(batch_specs(**batch_kwargs))  # type: ignore[arg-type]
        spec = spec.shifted(next_offset + draw(st.just(0) | st.integers(0, 1000)))
        specs.append(spec)
        next_offset = spec.last_offset + 1
    return specs


def segment_bytes(specs: list[BatchSpec]) -> bytes:
    return b"".join(spec.build() for spec in specs)
