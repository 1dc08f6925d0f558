"""A table's data files: one Parquet file per segment, holding the rows ``read_lake`` gives of it with
read_committed (the segment's offsets from the log start offset to the last stable offset, no control
record, no aborted data), written from the columnar reader's Arrow batches (``reading.segment_read``).

A file's name is its identity: the segment's object (key, size, sha256) and the offsets read of it. A sync
keeps a file whose name the version still wants, writes the ones it lacks and drops the others, so
retention drops whole files, a compaction replaces the files of the segments it rewrote, and a log start
offset or a last stable offset that moves inside a segment replaces that segment's file alone."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafka_segments.reading.segment_read import read_task
from kafka_segments.reading.tasks import SegmentTask
from kafka_segments.storage.base import ObjectStore
from kafka_segments.tables.schema import file_arrow_schema, iceberg_schema

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
class WantedFile:
    """A data file a lake version's partition needs: the rows of ``task``."""

    task: SegmentTask
    name: str

    @property
    def partition(self) -> int:
        return self.task.topic_partition.partition


def wanted_files(tasks: Iterable[SegmentTask]) -> dict[str, WantedFile]:
    """The files of ``tasks`` (one per segment: the tasks are planned unsplit), by name."""
    files = (WantedFile(task, file_name(task)) for task in tasks)
    return {wanted.name: wanted for wanted in files}


def file_name(task: SegmentTask) -> str:
    """``<segment stem>.<start>-<end>.<digest>.parquet``: the digest covers the layout, the segment's key,
    size and sha256, and the offsets read."""
    segment = task.segment
    identity = "\0".join(
        (FILE_LAYOUT, segment.key, str(segment.size), segment.sha256, str(task.start), str(task.end))
    )
    digest = hashlib.sha256(identity.encode()).hexdigest()[:24]
    stem = segment.key.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return f"{stem}.{task.start}-{task.end}.{digest}.parquet"


def data_file_path(table_location: str, wanted: WantedFile) -> str:
    return f"{table_location.rstrip('/')}/data/partition={wanted.partition}/{wanted.name}"


def name_of(file_path: str) -> str:
    """The file name a data file's path ends with (what ``file_name`` gave it)."""
    return file_path.rsplit("/", 1)[-1]


def write_data_file(store: ObjectStore, table: Any, wanted: WantedFile) -> Any | None:
    """Write ``wanted``'s rows to its Parquet file in ``table``'s location (replacing a leftover of a sync
    that did not commit) and return its ``pyiceberg.manifest.DataFile``; ``None`` when the segment has no
    row to give (control records only, aborted data only): no file.

    Raises:
        SegmentObjectMismatchError, CorruptRecordError: as ``reading.read_task``; the FileIO's errors.
    """
    import pyarrow.parquet as pq

    schema = file_arrow_schema()
    path = data_file_path(table.metadata.location, wanted)
    out: Any = None
    writer: Any = None
    try:
        for batch in read_task(store, wanted.task, include_headers=True):
            if batch.num_rows == 0:
                continue
            if writer is None:
                out = table.io.new_output(path).create(overwrite=True)
                writer = pq.ParquetWriter(out, schema, **PARQUET_OPTIONS)
            writer.write_batch(batch.cast(schema))
        if writer is None:
            return None
        writer.close()
        size = out.tell()
    finally:
        if out is not None:
            out.close()
    return _data_file(table, wanted, path=path, metadata=writer.writer.metadata, size=size)


def _data_file(table: Any, wanted: WantedFile, *, path: str, metadata: Any, size: int) -> Any:
    from pyiceberg.io.pyarrow import (
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
    )
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record

    schema = iceberg_schema()
    statistics = data_file_statistics_from_parquet_metadata(
        parquet_metadata=metadata,
        stats_columns=compute_statistics_plan(schema, table.metadata.properties),
        parquet_column_mapping=parquet_path_to_id_mapping(schema),
    )
    return DataFile.from_args(
        content=DataFileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=Record(wanted.partition),
        file_size_in_bytes=size,
        sort_order_id=None,
        spec_id=table.metadata.default_spec_id,
        equality_ids=None,
        key_metadata=None,
        **statistics.to_serialized_dict(),
    )
