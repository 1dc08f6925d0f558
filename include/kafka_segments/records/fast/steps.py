"""Where the records of a segment decoded in steps, and not kept, are found again (``RecordSteps``).

A ``StreamDecoder`` that does not keep records (``ArenaUse.REUSE``) decompresses each step into the start
of its arena, over the previous step's records, so a segment of any size touches one step's worth of fresh
memory instead of all its records inflated (a 1 GiB LZ4 segment: ~1 GB of page faults, the dearest part of
a round on a virtual machine). Its joined columns hold no record bytes (an empty ``buffer``), and their
positions are the steps' own laid end to end (a step of uncompressed batches decodes in the segment: its
records are spans of its bytes), so nothing reads them. ``RecordSteps`` records which bytes of the segment
each step decoded, so a later pass decodes one step again (``inflate``): the same bytes in, the same
columns out. Kafka's cleaner, too, decompresses every batch a second time in its cleaning pass
(``buildOffsetMap``, then ``cleanSegments``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from kafka_segments.errors import CorruptRecordError
from kafka_segments.records.fast.columns import U8, RecordColumns
from kafka_segments.records.fast.decode import decode_record_columns, segment_records_budget

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = ["RecordSteps"]

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True, eq=False)
class RecordSteps:
    """The steps of a segment decoded without keeping its records: step ``k`` decoded the segment's bytes
    ``byte_start[k]:byte_end[k]``, which hold its batches ``batch_start[k]:batch_start[k + 1]`` and its
    records (rows) ``row_start[k]:row_start[k + 1]``, taking ``record_bytes[k]`` bytes inflated."""

    byte_start: I64
    byte_end: I64
    batch_start: I64
    row_start: I64
    record_bytes: I64
    max_batch_bytes: int | None

    def __len__(self) -> int:
        return len(self.byte_start)

    @property
    def largest(self) -> int:
        """The most bytes one step's records take inflated (the arena ``inflate`` needs)."""
        return int(self.record_bytes.max()) if len(self.record_bytes) else 0

    def of_batches(self, batches: I64) -> I64:
        """The step of each of ``batches`` (indexes into the segment's batch table)."""
        found: I64 = np.searchsorted(self.batch_start, batches, side="right") - 1
        return found

    def inflate(self, data: Buffer, step: int, *, arena: U8 | None, segment: str) -> RecordColumns:
        """The columns of step ``step`` decoded again from ``data`` (the whole segment): positions within
        the step's own records, batch indexes from 0 (add ``batch_start[step]``, ``row_start[step]``).
        ``arena``: where to inflate (reused step after step; its records are valid until the next call).

        Raises:
            CorruptRecordError: the bytes no longer decode to the step's batches and records (the segment
                changed since it was decoded), or as ``decode_record_columns`` with the first pass's limits.
        """
        start, end = int(self.byte_start[step]), int(self.byte_end[step])
        whole = memoryview(data)
        columns = decode_record_columns(
            whole[start:end],
            segment=segment,
            verify_crc=False,
            arena=arena,
            max_batch_bytes=self.max_batch_bytes,
            max_total_bytes=segment_records_budget(len(whole), self.max_batch_bytes),  # as the first pass
        )
        batches = int(self.batch_start[step + 1] - self.batch_start[step])
        rows = int(self.row_start[step + 1] - self.row_start[step])
        found = (len(columns.batches), len(columns), len(columns.buffer))
        first = (batches, rows, int(self.record_bytes[step]))
        if found != first:
            raise CorruptRecordError(
                f"decoded again, its bytes {start}..{end} hold {found[0]} batches and {found[1]} records "
                f"of {found[2]} bytes, not the {first[0]}, {first[1]} and {first[2]} first decoded "
                "(changed while read)",
                segment=segment,
                position=start,
            )
        return columns
