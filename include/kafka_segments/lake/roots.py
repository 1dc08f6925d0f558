"""A version's root: what a committed version says without its segments (its fields, its retired objects and
one summary per partition), with its partitions' states read only when asked for, and only those asked for.

In format 2 (docs/metadata-format-2.md) the root is the object at the version's key and a partition's state
lives in its own pieces: a reader of one topic reads that topic's pieces and no others, and a reader of
sizes and offsets (the lake's list, the lake view's history) reads no piece at all. In format 1 the whole
manifest is one object, so the root holds every state already read and the summaries are computed from them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kafka_segments.errors import ManifestFormatError, ObjectNotFoundError
from kafka_segments.lake.codec import check_partition_order, manifest_from_reader, read_partition
from kafka_segments.lake.format2 import FORMAT_2, RootLine, read_partitions, root_lines
from kafka_segments.lake.json_document import Reader, load_document
from kafka_segments.lake.layout import manifest_key
from kafka_segments.state import (
    MANIFEST_FORMATS,
    Manifest,
    PartitionState,
    PartitionSummary,
    RetiredObject,
    summarize,
)
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition

PartitionFilter = Callable[[TopicPartition], bool]
"""Which partitions a reader wants."""


@dataclass(frozen=True, slots=True)
class RootPartition:
    """One partition as the root names it."""

    topic_partition: TopicPartition
    summary: PartitionSummary
    manifest_key: str | None = None
    """Format 2: the key of its partition manifest (``None`` in format 1)."""
    chunks: int | None = None
    """Format 2: how many chunks that manifest names (``None``: not recorded)."""
    state_sha256: str | None = None
    """Format 2: ``lake.format2.state_sha256`` of its state (``None`` in format 1: computed on demand)."""


@dataclass(frozen=True, slots=True)
class VersionRoot:
    """A committed version without its segments (see the module docstring); ``load`` reads states."""

    store: ObjectStore | None = field(repr=False)
    """Where its pieces are (``None``: a version already read whole, ``root_of``)."""
    header: Manifest = field(repr=False)
    """The version's own fields and retired objects (its ``partitions`` are empty: ``load`` reads them)."""
    partitions: tuple[RootPartition, ...]
    _lines: tuple[RootLine, ...] = field(repr=False)
    """Format 2: where each partition's state is."""
    _states: tuple[PartitionState, ...] | None = field(repr=False)
    """Every state, already read (format 1, or a manifest read whole); ``None``: read from ``_lines``."""

    @property
    def version(self) -> int:
        return self.header.version

    @property
    def run_id(self) -> str:
        return self.header.run_id

    @property
    def committed_at_ms(self) -> int:
        return self.header.committed_at_ms

    @property
    def format_version(self) -> int:
        return self.header.format_version

    @property
    def retired(self) -> tuple[RetiredObject, ...]:
        return self.header.retired

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(sorted({p.topic_partition.topic for p in self.partitions}))

    def topic_partitions(self) -> frozenset[TopicPartition]:
        return frozenset(p.topic_partition for p in self.partitions)

    def load(
        self, wanted: PartitionFilter | None = None, *, referenced: set[str] | None = None
    ) -> tuple[PartitionState, ...]:
        """The states of the partitions ``wanted`` selects (all by default), in the manifest's order; a
        format 2 root reads just their pieces (``referenced`` collects the pieces' keys).

        Raises:
            ManifestFormatError: a piece is not what the root says (its bytes, its partition, its summary).
            ObjectNotFoundError: a piece is gone.
        """
        if self._states is not None:
            return tuple(s for s in self._states if wanted is None or wanted(s.topic_partition))
        if self.store is None:
            raise ValueError("a root without a store holds its states")
        lines = [line for line in self._lines if wanted is None or wanted(line.topic_partition)]
        return read_partitions(self.store, lines, referenced=referenced)

    def line_documents(self) -> dict[TopicPartition, Mapping[str, Any]]:
        """Format 2: each partition's line as the root holds it (a commit carries them unchanged)."""
        return {line.topic_partition: line.document for line in self._lines}

    def manifest(
        self, wanted: PartitionFilter | None = None, *, referenced: set[str] | None = None
    ) -> Manifest:
        """The version with the partitions ``wanted`` selects (all by default). With a filter it is a
        reader's view of those partitions, never a base to build a version on."""
        return _with_partitions(self.header, self.load(wanted, referenced=referenced))


def _with_partitions(header: Manifest, partitions: tuple[PartitionState, ...]) -> Manifest:
    return replace(header, partitions=partitions)


def read_root(store: ObjectStore, version: int) -> VersionRoot:
    """The root of ``version``, in either format.

    Raises:
        ObjectNotFoundError: no such version (never committed, or removed by gc).
        ManifestFormatError: the object is not a valid manifest (``UnsupportedFormatVersionError`` for an
            unknown format version); also when it claims another version than its key.
    """
    return parse_root(store, version, store.get(manifest_key(version)))


def parse_root(store: ObjectStore, version: int, data: bytes) -> VersionRoot:
    """``read_root`` of the bytes ``data`` of version ``version``'s object (e.g. the ones a commit wrote)."""
    key = manifest_key(version)
    reader = load_document(data, location=store.location(key), supported=MANIFEST_FORMATS, kind="manifest")
    if reader.integer("format_version") == FORMAT_2:
        root = _format_2_root(store, reader)
    else:
        root = _format_1_root(store, reader)
    if root.version != version:
        raise ManifestFormatError(
            f"field 'version': the object for version {version} says {root.version}",
            location=store.location(key),
        )
    return root


def try_read_root(store: ObjectStore, version: int) -> VersionRoot | None:
    """The root of ``version``, or ``None`` when it does not exist."""
    try:
        return read_root(store, version)
    except ObjectNotFoundError:
        return None


def root_of(manifest: Manifest, store: ObjectStore | None = None) -> VersionRoot:
    """The root of a version already read whole (its states are held, nothing is read again)."""
    partitions = tuple(RootPartition(s.topic_partition, summarize(s)) for s in manifest.partitions)
    return VersionRoot(store, _with_partitions(manifest, ()), partitions, (), manifest.partitions)


def _format_1_root(store: ObjectStore, reader: Reader) -> VersionRoot:
    partitions = reader.objects("partitions", read_partition)
    return root_of(manifest_from_reader(reader, partitions=partitions), store)


def _format_2_root(store: ObjectStore, reader: Reader) -> VersionRoot:
    lines = root_lines(reader)
    check_partition_order(reader, [line.topic_partition for line in lines])
    header = manifest_from_reader(reader, partitions=())
    partitions = tuple(
        RootPartition(
            line.topic_partition,
            line.summary,
            line.manifest_key,
            line.chunks,
            str(line.document["state_sha256"]),
        )
        for line in lines
    )
    return VersionRoot(store, header, partitions, lines, None)
