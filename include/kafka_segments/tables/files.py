"""A table's data files: one Parquet file per segment, holding the rows ``read_lake`` gives of it with
read_committed (the segment's offsets from the log start offset to the last stable offset, no control
record, no aborted data), written from the columnar reader's Arrow batches (``reading.segment_read``).

A file's name is its identity: the segment's object (key, size, sha256) and the offsets read of it. A sync
keeps a file whose name the version still wants, writes the ones it lacks and drops the others, so
retention drops whole files, a compaction replaces the files of the segments it rewrote, and a log start
offset or a last stable offset that moves inside a segment replaces that segment's file alone."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kafka_segments.reading.reader import read_latest
from kafka_segments.reading.segment_read import read_task
from kafka_segments.reading.tasks import SegmentTask
from kafka_segments.storage.base import ObjectStore
from kafka_segments.tables.json_values import (
    JSON_COLUMN,
    JsonValues,
    decode,
    evolve,
    struct_column,
    table_fields,
)
from kafka_segments.tables.schema import file_arrow_schema

FILE_LAYOUT = "1"
"""Part of every file's identity: a change of what a file holds (its columns, how rows are chosen) changes
it, so a sync after an upgrade rewrites the files instead of keeping files of the old layout."""
PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "use_dictionary": ["topic", "partition", "timestampType"],
    "write_statistics": ["topic", "partition", "offset", "timestamp", "timestampType"],
}
"""Keys and values are neither dictionary-encoded nor given min/max statistics (rarely repeated, and no
query prunes on them): about 20% less CPU per file than pyarrow's defaults; offsets and timestamps keep
theirs, so Iceberg's planning prunes files by them."""


@dataclass(frozen=True, slots=True)
class WrittenFile:
    """A data file written (``pyiceberg.manifest.DataFile``) and its ``value_json`` type conflicts."""

    data_file: Any
    json_conflicts: int = 0


@dataclass(frozen=True, slots=True)
class WantedFile:
    """A data file a lake version's partition needs: the rows of ``tasks`` (one segment's), or with
    ``latest`` the compacted view of them (a whole partition's)."""

    tasks: tuple[SegmentTask, ...]
    name: str
    latest: bool = False

    @property
    def partition(self) -> int:
        return self.tasks[0].topic_partition.partition


def wanted_files(tasks: Iterable[SegmentTask]) -> dict[str, WantedFile]:
    """The files of ``tasks`` (one per segment: the tasks are planned unsplit), by name."""
    files = (WantedFile((task,), file_name(task)) for task in tasks)
    return {wanted.name: wanted for wanted in files}


def latest_files(tasks: Iterable[SegmentTask]) -> dict[str, WantedFile]:
    """One file per partition of ``tasks``: its compacted view (``view=latest``), named by all its
    segments' identities, so that it is rebuilt when and only when one of them changes."""
    by_partition: dict[int, list[SegmentTask]] = {}
    for task in tasks:
        by_partition.setdefault(task.topic_partition.partition, []).append(task)
    files = (WantedFile(tuple(group), latest_name(group), latest=True) for group in by_partition.values())
    return {wanted.name: wanted for wanted in files}


def file_name(task: SegmentTask) -> str:
    """``<segment stem>.<start>-<end>.<digest>.parquet``: the digest covers the layout, the segment's key,
    size and sha256, and the offsets read."""
    segment = task.segment
    stem = segment.key.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return f"{stem}.{task.start}-{task.end}.{_digest([task])}.parquet"


def latest_name(tasks: Iterable[SegmentTask]) -> str:
    """``latest.<digest>.parquet``: the digest covers every segment's identity, as ``file_name``'s."""
    return f"latest.{_digest(tasks, kind='latest')}.parquet"


def _digest(tasks: Iterable[SegmentTask], *, kind: str = "log") -> str:
    parts = [FILE_LAYOUT, kind]
    for task in tasks:
        segment = task.segment
        parts.extend((segment.key, str(segment.size), segment.sha256, str(task.start), str(task.end)))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def data_file_path(table_location: str, wanted: WantedFile) -> str:
    return f"{table_location.rstrip('/')}/data/partition={wanted.partition}/{wanted.name}"


def name_of(file_path: str) -> str:
    """The file name a data file's path ends with (what ``file_name`` gave it)."""
    return file_path.rsplit("/", 1)[-1]


def write_data_file(
    store: ObjectStore, table: Any, wanted: WantedFile, json_values: JsonValues | None = None
) -> WrittenFile | None:
    """Write ``wanted``'s rows to its Parquet file in ``table``'s location (replacing a leftover of a sync
    that did not commit) and return it; ``None`` when the segment has no row to give (control records
    only, aborted data only): no file. With ``json_values`` the file has ``value_json`` too: the segment's
    rows are decoded first, and the fields they bring that the table lacks are added to its schema
    (``tables.json_values``) before the file is written with it.

    Raises:
        SegmentObjectMismatchError, CorruptRecordError: as ``reading.read_task``; the FileIO's errors.
    """
    import pyarrow.parquet as pq

    batches: Iterable[Any] = (batch for batch in _batches(store, wanted) if batch.num_rows)
    conflicts = 0
    if json_values is not None:
        batches, conflicts = _with_json(table, list(batches), json_values)
    schema = file_arrow_schema(table.schema())
    path = data_file_path(table.metadata.location, wanted)
    out: Any = None
    writer: Any = None
    try:
        for batch in batches:
            if writer is None:
                out = table.io.new_output(path).create(overwrite=True)
                writer = pq.ParquetWriter(out, schema, **_parquet_options(schema))
            writer.write_batch(_conformed(batch, schema))
        if writer is None:
            return None
        writer.close()
        size = out.tell()
    finally:
        if out is not None:
            out.close()
    data_file = _data_file(table, wanted, path=path, metadata=writer.writer.metadata, size=size)
    return WrittenFile(data_file, conflicts)


def _parquet_options(schema: Any) -> dict[str, Any]:
    """``PARQUET_OPTIONS``, with statistics for ``value_json``'s fields when the file has it (they are
    measured: pyiceberg's planning prunes by them)."""
    if JSON_COLUMN not in schema.names:
        return PARQUET_OPTIONS
    fields = [f"{JSON_COLUMN}.{field.name}" for field in schema.field(JSON_COLUMN).type]
    return {**PARQUET_OPTIONS, "write_statistics": [*PARQUET_OPTIONS["write_statistics"], *fields]}


def _with_json(table: Any, batches: list[Any], json_values: JsonValues) -> tuple[list[Any], int]:
    """``batches`` with their ``value_json`` column (after the table's schema got the fields they bring,
    unless the fields are given), and the type conflicts."""
    wanted = dict(json_values.fields)
    known = wanted or table_fields(table)
    decoded = [decode(batch.column("value"), known) for batch in batches]
    if not wanted:
        for each in decoded:
            wanted = {**each.seen, **wanted}
    evolve(table, wanted)
    fields = table_fields(table)
    if not fields:
        return batches, 0
    out, conflicts = [], 0
    for batch, each in zip(batches, decoded, strict=True):
        column, count = struct_column(each, fields)
        out.append(batch.append_column(JSON_COLUMN, column))
        conflicts += count
    return out, conflicts


def _conformed(batch: Any, schema: Any) -> Any:
    """``batch`` cast to the file's ``schema``, with a null ``value_json`` when it has none (the table has
    the column but this topic's setting is off)."""
    import pyarrow as pa

    if JSON_COLUMN in schema.names and JSON_COLUMN not in batch.schema.names:
        field = schema.field(JSON_COLUMN)
        batch = batch.append_column(JSON_COLUMN, pa.nulls(batch.num_rows, type=field.type))
    return batch.cast(schema)


def _batches(store: ObjectStore, wanted: WantedFile) -> Iterator[Any]:
    if wanted.latest:
        return read_latest(store, list(wanted.tasks), include_headers=True)
    return (batch for task in wanted.tasks for batch in read_task(store, task, include_headers=True))


def _data_file(table: Any, wanted: WantedFile, *, path: str, metadata: Any, size: int) -> Any:
    from pyiceberg.io.pyarrow import (
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
    )
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    schema = table.schema()
    statistics = data_file_statistics_from_parquet_metadata(
        parquet_metadata=metadata,
        stats_columns=compute_statistics_plan(schema, table.metadata.properties),
        parquet_column_mapping=parquet_path_to_id_mapping(schema),
    )
    data_file = DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=Record(wanted.partition),
        file_size_in_bytes=size,
        sort_order_id=None,
        equality_ids=None,
        key_metadata=None,
        **statistics.to_serialized_dict(),
    )
    # not a field of the file's entry: a commit that drops the file (a later version, in the same sync)
    # reads it, and ``from_args`` ignores it
    data_file.spec_id = table.metadata.default_spec_id
    return data_file
