"""Decoding a segment while it is being read: ``decode_record_columns`` in steps, as the bytes arrive.

``StreamDecoder`` is fed the bytes read so far (``ObjectStore.get_into(progress=...)``) and decodes the
complete batches among them; ``finish`` returns columns **equal to** ``decode_record_columns`` over the
whole segment. Whenever steps cannot be joined exactly (a legacy entry, damage, an arena too small, mixed
compression) it gives up on steps and ``finish`` decodes the whole segment, so errors carry the segment's
positions. Nothing fed is trusted until ``get_into`` has returned and ``finish`` is called."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt

from kafka_segments.errors import CorruptRecordError
from kafka_segments.records.fast import decode_kernels as _k
from kafka_segments.records.fast.columns import RECORD_COLUMNS, TABLE_FIELDS, U8, HeaderTable, RecordColumns
from kafka_segments.records.fast.decode import decode_record_columns, segment_records_budget
from kafka_segments.records.fast.scan import as_read_only_array
from kafka_segments.records.fast.steps import RecordSteps

if TYPE_CHECKING:
    from typing_extensions import Buffer

__all__ = ["DEFAULT_STEP_BYTES", "ArenaUse", "StepCallback", "StreamDecoder"]

StepCallback = Callable[[RecordColumns, int], None]
"""Called with a step's record columns and the index of its first record in the segment. The columns are
the decoder's own and valid during the call only: ``finish`` shifts their positions in place to join them."""

DEFAULT_STEP_BYTES = 4 << 20
"""Bytes of complete batches a step decodes at least (fewer, larger steps cost less Python per byte)."""

_POSITION_COLUMNS = ("key_start", "value_start", "record_start")
"""Record columns holding positions in the records buffer (shifted by where a step's records start)."""


class ArenaUse(enum.Enum):
    """How a ``StreamDecoder``'s compressed steps use its arena."""

    KEEP = "keep"
    """Each step's records after the last one's: ``finish`` joins them, records and all."""
    REUSE = "reuse"
    """Each step's records over the last one's, at the arena's start (or in the segment, a step of
    uncompressed batches): unless every step was in the segment, ``finish`` returns columns without record
    bytes, their positions the steps' own, and ``record_steps`` says where they are
    (``steps.RecordSteps``)."""


class StreamDecoder:
    """Decodes the batches of ``buffer[:size]`` in steps as the buffer fills (see the module docstring)."""

    def __init__(
        self,
        buffer: U8,
        *,
        segment: str = "<memory>",
        arena: U8 | None = None,
        step_bytes: int = DEFAULT_STEP_BYTES,
        on_step: StepCallback | None = None,
        verify_crc: bool = False,
        max_batch_bytes: int | None = None,
        arena_use: ArenaUse = ArenaUse.KEEP,
    ) -> None:
        """``buffer``: the uint8 array the segment is being read into (from position 0); ``arena``: as
        ``decode_record_columns`` (required for compressed segments to be decoded in steps); ``on_step``:
        called after each step with its columns (positions in the step's own ``buffer``) and the index of its
        first record in the segment, to work on records while they are in the cache. Steps are only final
        if ``steps`` still counts them after ``finish``. ``verify_crc``: every step checks its batches'
        CRC-32C, and ``finish`` verifies by default. ``max_batch_bytes``: as ``decode_record_columns``.
        ``arena_use``: how compressed steps use ``arena`` (``ArenaUse``)."""
        self._buffer = buffer
        self._segment = segment
        self._arena = arena
        self._step = step_bytes
        self._decoded_to = 0  # segment bytes decoded by the steps so far
        self._arena_used = 0
        self._in_place: bool | None = None  # whether the steps decode in place (no compressed batch)
        self._steps: list[RecordColumns] = []
        self._starts: list[int] = []  # where each step's bytes start in the segment
        self._step_count = 0  # steps that decoded batches (their columns are let go by ``finish``)
        self._gave_up = False
        self._records = 0
        self._on_step = on_step
        self._verify_crc = verify_crc
        self._max_batch_bytes = max_batch_bytes
        self._keep_records = arena_use is ArenaUse.KEEP
        self._record_steps: RecordSteps | None = None

    @property
    def steps(self) -> int:
        """How many steps have decoded batches (0 once the decoder has given up)."""
        return 0 if self._gave_up else self._step_count

    @property
    def record_steps(self) -> RecordSteps | None:
        """Where the records of the columns ``finish`` returned are (``ArenaUse.REUSE`` and steps not all
        in the segment), else ``None``: their ``buffer`` holds them."""
        return self._record_steps

    def feed(self, available: int) -> None:
        """``buffer[:available]`` has arrived: decode its complete batches if enough are waiting."""
        if not self._gave_up and available - self._decoded_to >= self._step:
            self._decode_step(available)

    def finish(self, size: int, *, verify_crc: bool | None = None) -> RecordColumns:
        """The record columns of ``buffer[:size]`` (the whole segment, now read and verified by the store).

        ``verify_crc`` (default: the decoder's own): check every batch's CRC-32C; steps that did not check
        theirs are then given up and the whole segment is decoded again.

        Raises:
            CorruptRecordError, UnsupportedCodecError: as ``decode_record_columns`` over the whole segment.
        """
        verify = self._verify_crc if verify_crc is None else verify_crc
        self._record_steps = None
        steps_usable = self._verify_crc or not verify
        whole = self._buffer[:size]
        if steps_usable and not self._gave_up and self._decoded_to < size:
            self._decode_step(size)
        if not steps_usable or self._gave_up or self._decoded_to != size or not self._steps:
            self._step_count = 0
            self._release()
            data = _bytes_view(whole)
            return decode_record_columns(
                data,
                segment=self._segment,
                verify_crc=verify,
                arena=self._arena,
                max_batch_bytes=self._max_batch_bytes,
                max_total_bytes=segment_records_budget(len(self._buffer), self._max_batch_bytes),
            )
        joined = self._joined(whole)
        self._release()
        return joined

    def _release(self) -> None:
        """Let go of the steps' columns and of ``on_step`` (often a method of the decoder's owner: a
        reference cycle that would keep every step's columns alive until the garbage collector runs, and
        make the next segment's columns land on fresh, page-faulting memory)."""
        self._steps = []
        self._starts = []
        self._on_step = None

    def _decode_step(self, available: int) -> None:
        start = self._decoded_to
        view = self._buffer[start:available]
        _, stop, status = _k.walk_entries(view)
        if status == _k.SCAN_LEGACY:
            self._gave_up = True
            return
        if stop == 0:
            return  # not one complete batch yet (or damage at the start: finish decodes the whole)
        chunk = self._buffer[start : start + int(stop)]
        arena = None if self._arena is None else self._arena[self._arena_used if self._keep_records else 0 :]
        try:
            columns = decode_record_columns(
                _bytes_view(chunk),
                segment=self._segment,
                verify_crc=self._verify_crc,
                arena=arena,
                max_batch_bytes=self._max_batch_bytes,
                max_total_bytes=segment_records_budget(len(self._buffer), self._max_batch_bytes),
            )
        except CorruptRecordError:
            self._gave_up = True
            return
        if not self._fits(columns, chunk, arena):
            self._gave_up = True
            return
        self._steps.append(columns)
        self._step_count += 1
        self._starts.append(start)
        self._decoded_to = start + int(stop)
        if self._on_step is not None:
            self._on_step(columns, self._records)
        self._records += len(columns)

    def _fits(self, columns: RecordColumns, chunk: U8, arena: U8 | None) -> bool:
        """Whether the step's records sit where the joined columns expect them: in the segment itself, or in
        the arena right after the previous step's records (and every step alike); with ``REUSE``, in the
        segment or at the arena's start, each step on its own."""
        in_place = _address(columns.buffer) == _address(chunk) and len(columns.buffer) == len(chunk)
        in_arena = arena is not None and _address(columns.buffer) == _address(arena)
        if not self._keep_records:
            self._in_place = in_place and self._in_place is not False  # every step so far
            return in_place or in_arena
        if self._in_place is None:
            self._in_place = in_place
        if in_place and self._in_place:
            return True
        if in_arena and not self._in_place:
            self._arena_used += len(columns.buffer)
            return True
        return False

    def _joined(self, whole: U8) -> RecordColumns:
        steps, starts = self._steps, self._starts
        if self._in_place:
            buffer = as_read_only_array(_bytes_view(whole))
            shifts = starts  # a step's positions are relative to its own bytes
        else:  # the steps' records laid end to end: in the arena, or (REUSE) nowhere
            sizes = [len(step.buffer) for step in steps]
            shifts = np.cumsum([0, *sizes[:-1]]).tolist()
            if not self._keep_records:
                buffer = _NO_RECORDS
                self._record_steps = self._steps_of(sizes)
            elif self._arena is not None:
                buffer = as_read_only_array(_bytes_view(self._arena[: self._arena_used]))
            else:  # _fits accepts no arena step without an arena
                raise RuntimeError("compressed steps without an arena")
        batch_shifts = np.cumsum([0] + [len(step.batches) for step in steps[:-1]]).tolist()
        shifts_of = {**dict.fromkeys(_POSITION_COLUMNS, shifts), "batch_index": batch_shifts}
        columns: dict[str, npt.NDArray[Any]] = {}
        for name, dtype in RECORD_COLUMNS:
            parts = [getattr(step, name) for step in steps]
            moves = shifts_of.get(name)
            if moves is not None:
                for part, shift in zip(parts, moves, strict=True):
                    np.add(part, shift, out=part)  # in place: the steps' own columns, let go after the join
            columns[name] = np.concatenate(parts).astype(dtype, copy=False)
        table = HeaderTable(*(_table_column(steps, starts, field) for field in TABLE_FIELDS))
        is_control = np.concatenate([step.is_control for step in steps])
        return RecordColumns(buffer=buffer, **columns, is_control=is_control, batches=table)

    def _steps_of(self, sizes: list[int]) -> RecordSteps:
        counts = np.cumsum([0] + [len(step.batches) for step in self._steps])
        rows = np.cumsum([0] + [len(step) for step in self._steps])
        starts = np.array(self._starts, dtype=np.int64)
        ends = np.append(starts[1:], self._decoded_to)
        records = np.array(sizes, dtype=np.int64)
        return RecordSteps(starts, ends, counts, rows, records, self._max_batch_bytes)


_NO_RECORDS = np.empty(0, dtype=np.uint8)
_NO_RECORDS.flags.writeable = False


def _table_column(steps: list[RecordColumns], starts: list[int], field: str) -> npt.NDArray[Any]:
    parts = [getattr(step.batches, field) for step in steps]
    if field == "position":
        parts = [part + start for part, start in zip(parts, starts, strict=True)]
    joined: npt.NDArray[Any] = np.concatenate(parts)
    return joined


def _bytes_view(array: U8) -> memoryview:
    return memoryview(cast("Buffer", array))  # numpy's stubs declare the buffer protocol from Python 3.12 on


def _address(array: U8) -> int:
    address: int = array.__array_interface__["data"][0]
    return address
