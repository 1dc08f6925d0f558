"""What one lake version changes in a topic's table: the partitions whose state differs from the version the
table shows (a format 2 root's ``state_sha256`` per line, so unchanged partitions are never read; in format
1 the same digest of each state), and in those partitions the files to write and the files to drop."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafka_segments.lake.format2 import state_sha256
from kafka_segments.lake.roots import VersionRoot
from kafka_segments.reading.options import ReadOptions, View, parse_options
from kafka_segments.reading.ranges import resolve_ranges
from kafka_segments.reading.tasks import segment_tasks
from kafka_segments.reading.timetravel import check_objects_exist
from kafka_segments.storage.base import ObjectStore
from kafka_segments.tables.files import WantedFile, latest_files, wanted_files

PartitionFiles = dict[int, dict[str, Any]]
"""The table's current data files: partition → file name → ``pyiceberg.manifest.DataFile``."""


@dataclass(frozen=True, slots=True)
class VersionChange:
    """What a version changes in a topic's table."""

    partitions: tuple[int, ...]
    to_write: tuple[WantedFile, ...]
    to_drop: tuple[Any, ...]
    """``DataFile`` s of the table no longer wanted."""


def partition_digests(root: VersionRoot, topic: str) -> dict[int, str]:
    """Each of ``topic``'s partitions in ``root``: the digest of its state (read from the root's lines in
    format 2; format 1 roots hold their states already)."""
    digests = {
        line.topic_partition.partition: line.state_sha256
        for line in root.partitions
        if line.topic_partition.topic == topic and line.state_sha256 is not None
    }
    if len(digests) == sum(1 for line in root.partitions if line.topic_partition.topic == topic):
        return digests
    return {state.topic_partition.partition: state_sha256(state) for state in root.load(_of_topic(topic))}


def changed_partitions(
    digests: Mapping[int, str], previous: Mapping[int, str], files: PartitionFiles
) -> tuple[int, ...]:
    """Partitions whose digest differs from ``previous`` (the version the table shows; empty when unknown),
    and partitions the table has files of that the version no longer has."""
    candidates = set(digests) | set(previous) | {p for p, held in files.items() if held}
    return tuple(sorted(p for p in candidates if p not in digests or digests[p] != previous.get(p)))


def version_change(
    store: ObjectStore,
    root: VersionRoot,
    topic: str,
    partitions: tuple[int, ...],
    files: PartitionFiles,
    *,
    view: View = View.ALL,
) -> VersionChange:
    """The files to write and to drop so that ``partitions`` of the table hold what ``read_lake`` gives of
    them at ``root``'s version with read_committed (and ``view``: the log, or the compacted view).

    Raises:
        VersionGoneError: a segment object of the version is gone (gc deleted it after a later commit).
    """
    wanted_set = set(partitions)
    states = root.load(lambda tp: tp.topic == topic and tp.partition in wanted_set)
    check_objects_exist(store, root.version, states)
    ranges = resolve_ranges(store, states, read_committed(topic, view=view))
    tasks = segment_tasks(ranges, drop_aborted=True)
    wanted = latest_files(tasks) if view is View.LATEST else wanted_files(tasks)
    to_write: list[WantedFile] = []
    to_drop: list[Any] = []
    for partition in partitions:
        held = files.get(partition, {})
        want = {name: w for name, w in wanted.items() if w.partition == partition}
        to_write.extend(w for name, w in want.items() if name not in held)
        to_drop.extend(data_file for name, data_file in held.items() if name not in want)
    return VersionChange(partitions, tuple(to_write), tuple(to_drop))


def read_committed(topic: str, *, view: View = View.ALL) -> ReadOptions:
    """The read a table holds: the whole committed log of ``topic`` as read_committed gives it (with
    ``view=latest``: its compacted view)."""
    return parse_options({"subscribe": topic, "kafka.isolation.level": "read_committed", "view": view.value})


def _of_topic(topic: str) -> Any:
    return lambda tp: tp.topic == topic
