"""Reading the lake's committed state: which manifest, a segment's bytes (checked), the visible records.

Readers follow a manifest, never a listing: a segment is the first ``size`` bytes of the object its entry
names, hashing to the recorded ``sha256``; anything else is a ``SegmentObjectMismatchError``. Visibility is
Kafka's fetch rule: offsets at or above the log start offset (records below it in a straddling batch are
skipped, as a consumer drops them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_segments.errors import (
    LakeError,
    ManifestVersionNotFoundError,
    NoCommittedStateError,
    ObjectNotFoundError,
    PartitionNotFoundError,
    SegmentObjectMismatchError,
)
from kafka_segments.lake.history import manifest_versions
from kafka_segments.lake.roots import VersionRoot, read_root
from kafka_segments.lake.scan import sha256_hex
from kafka_segments.records.batch import BatchHeader
from kafka_segments.records.log import Entry, iter_batches
from kafka_segments.records.record import Record
from kafka_segments.state import Manifest, PartitionState, SegmentEntry
from kafka_segments.storage.base import MappingStore, ObjectStore, Progress, WritableBuffer
from kafka_segments.storage.buffers import check_fits, read_into, writable_view
from kafka_segments.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_segments.storage.local_mapping import MappedObject

NO_STATE_HINT = "no committed state yet — run `kafka-segments adopt`"


@dataclass(frozen=True, slots=True)
class VisibleBatch:
    """One batch a consumer of the committed log would receive, with the segment it lives in.

    ``entry.header.position`` is the batch's byte position in ``segment``'s ``.log``."""

    segment: SegmentEntry
    entry: Entry
    log_start_offset: int

    @property
    def header(self) -> BatchHeader:
        return self.entry.header

    @property
    def records(self) -> tuple[Record, ...]:
        """The batch's records at or above the log start offset (control records included).

        Raises:
            CorruptRecordError: the batch's records cannot be decoded.
        """
        return tuple(record for record in self.entry.records if record.offset >= self.log_start_offset)


def resolve_manifest(store: ObjectStore, version: int | None = None) -> Manifest:
    """Manifest ``version``, or the head when ``version`` is ``None`` (``resolve_root``, every partition
    read).

    Raises:
        NoCommittedStateError, ManifestVersionNotFoundError, ManifestFormatError, ObjectStoreError: see
            ``resolve_root``.
    """
    root = resolve_root(store, version)
    try:
        return root.manifest()
    except ObjectNotFoundError:  # a piece removed by a concurrent gc after the root was read
        raise _missing_version(store, root.version, manifest_versions(store)) from None


def load_states(
    store: ObjectStore, root: VersionRoot, wanted: Callable[[TopicPartition], bool] | None = None
) -> tuple[PartitionState, ...]:
    """``root.load(wanted)``, a piece removed by a concurrent gc after the root was read being the version's
    absence (``ManifestVersionNotFoundError``), as ``resolve_manifest`` says it."""
    try:
        return root.load(wanted)
    except ObjectNotFoundError:
        raise _missing_version(store, root.version, manifest_versions(store)) from None


def resolve_root(store: ObjectStore, version: int | None = None) -> VersionRoot:
    """The root of version ``version``, or of the head when ``version`` is ``None``: a reader that wants some
    partitions loads just those (``VersionRoot.load``).

    Raises:
        NoCommittedStateError: the lake has no manifest at all.
        ManifestVersionNotFoundError: ``version`` was never committed or was removed by gc (the message
            lists the versions that exist).
        ManifestFormatError: the manifest object is not valid.
        ObjectStoreError: the store could not be read.
    """
    versions = manifest_versions(store)
    if not versions:
        raise NoCommittedStateError(NO_STATE_HINT, location=store.describe())
    wanted = versions[-1] if version is None else version
    if wanted not in versions:
        raise _missing_version(store, wanted, versions)
    try:
        return read_root(store, wanted)
    except ObjectNotFoundError:  # removed by a concurrent gc after the listing
        raise _missing_version(store, wanted, manifest_versions(store)) from None


def _missing_version(store: ObjectStore, version: int, versions: Sequence[int]) -> LakeError:
    available = f"available versions: {format_ranges(versions)}" if versions else NO_STATE_HINT
    if versions and version > versions[-1]:
        problem = f"manifest version {version} was never committed (the head is version {versions[-1]})"
    else:
        problem = f"manifest version {version} does not exist (never committed, or removed by gc)"
    return ManifestVersionNotFoundError(f"{problem}; {available}", location=store.describe())


def format_ranges(numbers: Sequence[int]) -> str:
    """Numbers (versions, partitions) as ascending ranges: ``[1, 3, 4, 5, 9]`` -> ``"1, 3-5, 9"``."""
    ranges: list[list[int]] = []
    for number in sorted(numbers):
        if ranges and number == ranges[-1][1] + 1:
            ranges[-1][1] = number
        else:
            ranges.append([number, number])
    return ", ".join(str(low) if low == high else f"{low}-{high}" for low, high in ranges)


def partition_state(store: ObjectStore, root: VersionRoot, topic_partition: TopicPartition) -> PartitionState:
    """The committed state of one partition (its pieces only, in format 2).

    Raises:
        PartitionNotFoundError: the version has no such topic or partition (the message lists what it has).
    """
    if topic_partition in root.topic_partitions():
        (state,) = root.load(lambda tp: tp == topic_partition)
        return state
    topic = topic_partition.topic
    partitions = [p.topic_partition.partition for p in root.partitions if p.topic_partition.topic == topic]
    if partitions:
        known = f"topic {topic_partition.topic!r} has partitions {format_ranges(partitions)}"
    else:
        known = f"topics: {', '.join(root.topics) or '(none)'}"
    raise PartitionNotFoundError(
        f"partition {topic_partition} is not in manifest version {root.version} ({known})",
        location=store.describe(),
    )


def read_segment(store: ObjectStore, entry: SegmentEntry) -> bytes:
    """The bytes the manifest describes for ``entry``: the object's first ``entry.size`` bytes, checked.

    Raises:
        SegmentObjectMismatchError: the object is missing, shorter than ``entry.size``, of another size
            under the recorded etag, or its first ``entry.size`` bytes do not hash to ``entry.sha256``; the
            error names the object (and both sizes when they differ).
        ObjectStoreError: the store could not be read (e.g. ``TransientStoreError``).
    """
    location = store.location(entry.key)
    try:
        data = store.get_range(entry.key, start=0, end=entry.size)
    except ObjectNotFoundError:
        raise _missing(entry, location) from None
    digest = sha256_hex(data) if len(data) >= entry.size else ""
    if len(data) >= entry.size and digest != entry.sha256:
        _check_version_size(store, entry, location)
    _check_bytes(entry, len(data), digest, location)
    return data


def _check_version_size(store: ObjectStore, entry: SegmentEntry, location: str) -> None:
    """``SegmentObjectMismatchError`` naming both sizes when the object is still the version the manifest
    records (its etag) but of another size: the manifest's ``size`` is wrong, not the object (a regrown
    adopted object has another etag, and its first ``size`` bytes are then what the entry describes)."""
    try:
        meta = store.head(entry.key)
    except ObjectNotFoundError:
        raise _missing(entry, location) from None
    if meta.etag == entry.etag and meta.size != entry.size:
        raise _other_size(entry, meta.size, location)


def read_segment_version_into(
    store: ObjectStore, entry: SegmentEntry, out: WritableBuffer, *, progress: Progress | None = None
) -> memoryview:
    """The object version ``entry`` names (``If-Match`` its etag) into ``out[:entry.size]``, *not hashed*.

    For a caller that checks every batch's CRC-32C as it uses the bytes (the compaction round): a sha256
    of the bytes costs as much as decoding them. A regrown or replaced object is a
    ``PreconditionFailedError``; the caller then falls back to ``read_segment``, which reads and checks
    the prefix the manifest lists.

    Raises:
        PreconditionFailedError: the object is no longer the version the manifest recorded.
        SegmentObjectMismatchError: the object is missing, or has another size under the same etag.
        BufferTooSmallError: ``out`` is shorter than the object.
        ObjectStoreError: as ``read_segment``.
    """
    location = store.location(entry.key)
    view = writable_view(out, location=location)
    check_fits(entry.size, len(view), location=location)
    try:
        size = read_into(
            store, entry.key, view, verify_checksum=False, progress=progress, if_match=entry.etag
        )
    except ObjectNotFoundError:
        raise _missing(entry, location) from None
    if size != entry.size:
        raise _other_size(entry, size, location)
    return view[:size]


def map_segment_version(store: ObjectStore, entry: SegmentEntry) -> MappedObject | None:
    """``read_segment_version_into`` without the copy: the object version ``entry`` names, mapped, where the
    store maps its objects (a local lake: ``MappingStore``), else ``None``. The caller checks every batch's
    CRC-32C as it uses the bytes, then ``store.mapped_unchanged``; on any failure it reads the segment with
    ``read_segment``.

    Raises:
        PreconditionFailedError: the object is no longer the version the manifest recorded.
        SegmentObjectMismatchError: the object is missing, or has another size under the same etag.
        ObjectStoreError: as ``read_segment``.
    """
    if not isinstance(store, MappingStore):
        return None
    location = store.location(entry.key)
    try:
        mapped = store.get_mapped(entry.key, if_match=entry.etag)
    except ObjectNotFoundError:
        raise _missing(entry, location) from None
    if mapped.size != entry.size:
        raise _other_size(entry, mapped.size, location)
    return mapped


def _other_size(entry: SegmentEntry, size: int, location: str) -> SegmentObjectMismatchError:
    return SegmentObjectMismatchError(
        f"segment object {entry.key!r} has {size} bytes under etag {entry.etag}, the manifest records "
        f"{entry.size}",
        location=location,
    )


def _missing(entry: SegmentEntry, location: str) -> SegmentObjectMismatchError:
    return SegmentObjectMismatchError(
        f"segment object {entry.key!r} is missing (the manifest lists it with {entry.size} bytes, "
        f"offsets {_offsets(entry)})",
        location=location,
    )


def _check_bytes(entry: SegmentEntry, size: int, digest: str, location: str) -> None:
    """``SegmentObjectMismatchError`` unless the object's first ``size`` bytes are the entry's."""
    if size < entry.size:
        raise SegmentObjectMismatchError(
            f"segment object {entry.key!r} has {size} bytes, the manifest records {entry.size}",
            location=location,
        )
    if digest != entry.sha256:
        raise SegmentObjectMismatchError(
            f"segment object {entry.key!r} changed: the sha256 of its first {entry.size} bytes is {digest}, "
            f"the manifest records {entry.sha256}",
            location=location,
        )


def _offsets(entry: SegmentEntry) -> str:
    return "none (empty)" if entry.last_offset is None else f"{entry.base_offset}..{entry.last_offset}"


def visible_segments(state: PartitionState) -> tuple[SegmentEntry, ...]:
    """The live segments holding at least one offset at or above the log start offset."""
    return tuple(
        segment
        for segment in state.segments
        if segment.last_offset is not None and segment.last_offset >= state.log_start_offset
    )


def iter_visible_batches(store: ObjectStore, state: PartitionState) -> Iterator[VisibleBatch]:
    """Every batch of the partition whose last offset is at or above the log start offset, in offset order.

    Segments entirely below the log start offset are not read. Each segment is read and checked with
    ``read_segment`` and its batches with their CRCs.

    Raises:
        SegmentObjectMismatchError: a segment object does not match the manifest.
        CorruptRecordError: a batch is damaged (naming the object, byte position and offset).
    """
    log_start = state.log_start_offset
    for segment in visible_segments(state):
        data = read_segment(store, segment)
        for entry in iter_batches(data, segment=store.location(segment.key)):
            if entry.header.last_offset >= log_start:
                yield VisibleBatch(segment=segment, entry=entry, log_start_offset=log_start)


def pinned_range(store: ObjectStore, segment: SegmentEntry, *, start: int, end: int) -> bytes:
    """Bytes ``[start, end)`` of the object version ``segment`` names (its etag).

    Raises:
        PreconditionFailedError: the object is no longer that version.
        ObjectNotFoundError: it is gone.
        SegmentObjectMismatchError: that version is shorter than the manifest's ``size`` (the range ends
            early where the manifest says it has bytes: its ``size`` is not the object's).
    """
    data = store.get_range(segment.key, start=start, end=end, if_match=segment.etag)
    if len(data) < min(end, segment.size) - start:
        raise _other_size(segment, store.head(segment.key).size, store.location(segment.key))
    return data
