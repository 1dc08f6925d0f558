"""Writing a segment (``.log`` + ``.index`` + ``.timeindex`` + ``.txnindex``) from encoded batches.

The ``.log`` is the batches' bytes, concatenated. The indexes follow ``LogSegment.append`` (per batch: an
entry when more than ``index.interval.bytes`` were appended since the last, never for the first batch) and
``onBecomeInactiveSegment`` (the closing time entry). When Kafka would roll (an index full, ``segment.bytes``
exceeded, a relative offset out of range) the writer raises ``SegmentFullError`` unchanged;
``write_segments`` rolls automatically (``segment.ms`` is not modelled)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kafka_segments.errors import CorruptRecordError, SegmentFullError, SegmentWriteError
from kafka_segments.records.log import Buffer, Entry, read_entry
from kafka_segments.segment import offset_index, time_index
from kafka_segments.segment.files import FileKind, segment_file_name
from kafka_segments.segment.offset_index import OffsetIndex, OffsetPosition
from kafka_segments.segment.time_index import NO_TIMESTAMP, TimeIndex, TimestampOffset
from kafka_segments.segment.transactions import AbortedTxnTracker
from kafka_segments.segment.txn_index import AbortedTxn, build_txn_index

DEFAULT_INDEX_INTERVAL_BYTES = 4096
DEFAULT_SEGMENT_INDEX_BYTES = 10 * 1024 * 1024
INT32_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class SegmentFiles:
    """A closed segment: the bytes of each file and what Kafka knows about it.

    An empty ``txn_index`` means Kafka would not create the ``.txnindex`` file. With no timestamp at all,
    ``largest_timestamp`` is -1 and ``offset_of_largest_timestamp`` the base offset (Kafka's defaults)."""

    base_offset: int
    log: bytes = field(repr=False)
    offset_index: bytes = field(repr=False)
    time_index: bytes = field(repr=False)
    txn_index: bytes = field(repr=False)
    batch_count: int
    record_count: int
    next_offset: int
    largest_timestamp: int
    offset_of_largest_timestamp: int
    aborted_txns: tuple[AbortedTxn, ...] = ()
    ongoing_txns: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    """Transactions still open after the last batch (producer id -> first offset), for the next segment."""

    @property
    def size(self) -> int:
        return len(self.log)

    @property
    def last_offset(self) -> int | None:
        """The last batch's last offset, ``None`` for an empty segment."""
        return self.next_offset - 1 if self.batch_count else None

    def by_kind(self) -> dict[FileKind, bytes]:
        """File kind -> bytes (no ``.txnindex`` without an entry, as Kafka creates it only then)."""
        files = {
            FileKind.LOG: self.log,
            FileKind.INDEX: self.offset_index,
            FileKind.TIME_INDEX: self.time_index,
        }
        if self.txn_index:
            files[FileKind.TXN_INDEX] = self.txn_index
        return files

    def files(self) -> dict[str, bytes]:
        """File name -> bytes, as Kafka lays them out (no ``.txnindex`` without an entry)."""
        return {segment_file_name(self.base_offset, kind): data for kind, data in self.by_kind().items()}


class SegmentWriter:
    """Appends encoded batches to one segment and builds its indexes as a Kafka broker does."""

    def __init__(
        self,
        *,
        base_offset: int,
        index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
        segment_index_bytes: int | None = DEFAULT_SEGMENT_INDEX_BYTES,
        segment_bytes: int | None = None,
        ongoing_txns: Mapping[int, int] | None = None,
        segment: str = "<memory>",
        verify_crc: bool = True,
    ) -> None:
        """
        Args:
            base_offset: the segment's base offset (its file name).
            index_interval_bytes: ``index.interval.bytes`` (>= 0).
            segment_index_bytes: ``segment.index.bytes`` (>= 12), the index size limit; ``None``: no limit.
            segment_bytes: ``segment.bytes``; ``None``: no limit.
            ongoing_txns: transactions open when the segment starts (producer id -> first offset).
            segment: names the segment in errors.
            verify_crc: check each batch's checksum on ``append``.
        """
        _check_options(base_offset, index_interval_bytes, segment_index_bytes, segment_bytes)
        self._base_offset = base_offset
        self._index_interval_bytes = index_interval_bytes
        self._segment_index_bytes = segment_index_bytes
        self._segment_bytes = segment_bytes
        self._segment = segment
        self._verify_crc = verify_crc
        self._log = bytearray()
        self._offset_entries: list[OffsetPosition] = []
        self._time_entries: list[TimestampOffset] = []
        self._bytes_since_last_index_entry = 0
        self._max_timestamp = TimestampOffset(NO_TIMESTAMP, base_offset)
        self._last_offset: int | None = None
        self._batch_count = 0
        self._record_count = 0
        self._txns = AbortedTxnTracker(ongoing=ongoing_txns)
        self._aborted: list[AbortedTxn] = []
        self._closed: SegmentFiles | None = None

    @property
    def base_offset(self) -> int:
        return self._base_offset

    @property
    def size(self) -> int:
        return len(self._log)

    @property
    def next_offset(self) -> int:
        return self._last_offset + 1 if self._last_offset is not None else self._base_offset

    @property
    def is_full(self) -> bool:
        """An index is full: Kafka would roll before the next append."""
        return self._full_reason(0) is not None

    def append(self, batch: Buffer) -> None:
        """Append one encoded entry (normally a v2 batch), copied verbatim.

        Raises:
            SegmentFullError: Kafka would roll first (the writer is unchanged).
            SegmentWriteError: the bytes are not exactly one valid entry, its offsets are below the base
                offset or not above the previous batch, or the writer is closed.
        """
        entry = self._parse(batch)
        try:
            self.append_entry(entry, batch)
        except CorruptRecordError as exc:
            raise SegmentWriteError(f"{self._segment}: batch {self._batch_count}: {exc.reason}") from exc

    def close(self) -> SegmentFiles:
        """Add the closing time-index entry, trim the indexes and return the files (idempotent)."""
        if self._closed is None:
            self._maybe_append_time_entry()
            self._closed = self._files()
        return self._closed

    def _parse(self, batch: Buffer) -> Entry:
        number, position = self._batch_count, len(self._log)
        try:
            entry = read_entry(batch, 0, segment=self._segment)
            if entry.header.size_in_bytes != len(batch):
                raise SegmentWriteError(
                    f"{self._segment}: batch {number} holds {len(batch)} bytes but its entry declares "
                    f"{entry.header.size_in_bytes}; pass one batch per item"
                )
            if self._verify_crc:
                entry.verify_crc()
        except CorruptRecordError as exc:
            raise SegmentWriteError(
                f"{self._segment}: batch {number} (at byte {position}) is not a valid entry: {exc.reason}"
            ) from exc
        return entry

    def append_entry(self, entry: Entry, raw: Buffer) -> None:
        """Append an already parsed entry (e.g. from ``iter_batches``, checksum not re-checked) and its bytes.

        Raises:
            SegmentFullError, SegmentWriteError: as ``append``.
            CorruptRecordError: a control batch whose marker key is invalid (nothing is appended).
        """
        header = entry.header
        self._check_can_append(header.base_offset, header.last_offset, len(raw))
        aborted = self._txns.observe(entry)  # may raise CorruptRecordError before any state changes
        position = len(self._log)
        self._log += raw
        if header.max_timestamp > self._max_timestamp.timestamp:
            self._max_timestamp = TimestampOffset(header.max_timestamp, header.last_offset)
        if self._bytes_since_last_index_entry > self._index_interval_bytes:
            self._offset_entries.append(OffsetPosition(header.last_offset, position))
            self._maybe_append_time_entry()
            self._bytes_since_last_index_entry = 0
        self._bytes_since_last_index_entry += len(raw)
        self._last_offset = header.last_offset
        self._batch_count += 1
        self._record_count += header.records_count
        if aborted is not None:
            self._aborted.append(aborted)

    def _check_can_append(self, base: int, last: int, size: int) -> None:
        where = f"{self._segment}: batch {self._batch_count} (offsets {base}..{last})"
        if self._closed is not None:
            raise SegmentWriteError(f"{where}: the segment is closed")
        if base < self._base_offset:
            raise SegmentWriteError(f"{where}: below the segment base offset {self._base_offset}")
        if self._last_offset is not None and base <= self._last_offset:
            raise SegmentWriteError(
                f"{where}: not above the previous batch's last offset {self._last_offset}"
            )
        if last - self._base_offset > INT32_MAX:
            raise SegmentFullError(
                f"{where}: offset {last} overflows the int32 relative offset "
                f"of base offset {self._base_offset}"
            )
        reason = self._full_reason(size)
        if reason is not None:
            raise SegmentFullError(f"{where}: {reason}")

    def _full_reason(self, size: int) -> str | None:
        if not self._log:
            return None  # rolling an empty segment replaces it with an equal one: the batch goes in anyway
        limit = self._segment_index_bytes
        if limit is not None and len(self._offset_entries) >= offset_index.max_entries(limit):
            return (
                f"the offset index is full ({len(self._offset_entries)} entries, segment.index.bytes={limit})"
            )
        if limit is not None and time_index.is_full(len(self._time_entries), limit):
            return f"the time index is full ({len(self._time_entries)} entries, segment.index.bytes={limit})"
        if self._segment_bytes is not None and len(self._log) > self._segment_bytes - size:
            return f"{len(self._log)} + {size} bytes exceed segment.bytes={self._segment_bytes}"
        return None

    def _maybe_append_time_entry(self) -> None:
        last = self._time_entries[-1].timestamp if self._time_entries else NO_TIMESTAMP
        if self._max_timestamp.timestamp > last:
            self._time_entries.append(self._max_timestamp)

    def _files(self) -> SegmentFiles:
        base = self._base_offset
        return SegmentFiles(
            base_offset=base,
            log=bytes(self._log),
            offset_index=OffsetIndex(base, tuple(self._offset_entries)).to_bytes(),
            time_index=TimeIndex(base, tuple(self._time_entries)).to_bytes(),
            txn_index=build_txn_index(self._aborted, base_offset=base),
            batch_count=self._batch_count,
            record_count=self._record_count,
            next_offset=self.next_offset,
            largest_timestamp=self._max_timestamp.timestamp,
            offset_of_largest_timestamp=self._max_timestamp.offset,
            aborted_txns=tuple(self._aborted),
            ongoing_txns=self._txns.ongoing,
        )


def write_segment(
    batches: Iterable[Buffer],
    *,
    base_offset: int | None = None,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    segment_index_bytes: int | None = DEFAULT_SEGMENT_INDEX_BYTES,
    segment_bytes: int | None = None,
    ongoing_txns: Mapping[int, int] | None = None,
    segment: str = "<memory>",
    verify_crc: bool = True,
) -> SegmentFiles:
    """One segment holding all ``batches`` (``base_offset`` defaults to the first batch's base offset).

    Raises:
        SegmentFullError: a batch does not fit (Kafka would roll; see ``write_segments``).
        SegmentWriteError: invalid batches or offsets; no batches and no ``base_offset``.
    """
    items = iter(batches)
    first = next(items, None)
    if base_offset is None:
        if first is None:
            raise SegmentWriteError(f"{segment}: an empty segment needs an explicit base_offset")
        base_offset = _base_offset_of(first, segment)
    writer = SegmentWriter(
        base_offset=base_offset,
        index_interval_bytes=index_interval_bytes,
        segment_index_bytes=segment_index_bytes,
        segment_bytes=segment_bytes,
        ongoing_txns=ongoing_txns,
        segment=segment,
        verify_crc=verify_crc,
    )
    if first is not None:
        writer.append(first)
    for batch in items:
        writer.append(batch)
    return writer.close()


def write_segments(
    batches: Iterable[Buffer],
    *,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    segment_index_bytes: int | None = DEFAULT_SEGMENT_INDEX_BYTES,
    segment_bytes: int | None = None,
    ongoing_txns: Mapping[int, int] | None = None,
    verify_crc: bool = True,
) -> list[SegmentFiles]:
    """Segments holding ``batches``, rolling a new one (based at the batch's base offset) whenever Kafka
    would; open transactions carry over from one segment to the next."""
    segments: list[SegmentFiles] = []
    writer: SegmentWriter | None = None
    for batch in batches:
        if writer is not None:
            try:
                writer.append(batch)
                continue
            except SegmentFullError:
                segments.append(writer.close())
                ongoing_txns = segments[-1].ongoing_txns
        writer = SegmentWriter(
            base_offset=_base_offset_of(batch, "<memory>"),
            segment_index_bytes=segment_index_bytes,
            segment_bytes=segment_bytes,
            ongoing_txns=ongoing_txns,
            index_interval_bytes=index_interval_bytes,
            verify_crc=verify_crc,
        )
        writer.append(batch)
    if writer is not None:
        segments.append(writer.close())
    return segments


def _base_offset_of(batch: Buffer, segment: str) -> int:
    try:
        return read_entry(batch, 0, segment=segment).header.base_offset
    except CorruptRecordError as exc:
        raise SegmentWriteError(f"{segment}: the first batch is not a valid entry: {exc.reason}") from exc


def _check_options(
    base_offset: int, index_interval_bytes: int, segment_index_bytes: int | None, segment_bytes: int | None
) -> None:
    if base_offset < 0:
        raise ValueError(f"base_offset must be >= 0, not {base_offset}")
    if index_interval_bytes < 0:
        raise ValueError(
            f"index_interval_bytes (index.interval.bytes) must be >= 0, not {index_interval_bytes}"
        )
    if segment_index_bytes is not None and segment_index_bytes < time_index.ENTRY_SIZE:
        raise ValueError(
            f"segment_index_bytes must hold at least one time-index entry ({time_index.ENTRY_SIZE} bytes), "
            f"not {segment_index_bytes}"
        )
    if segment_bytes is not None and segment_bytes <= 0:
        raise ValueError(f"segment_bytes must be > 0, not {segment_bytes}")
