"""Which partitions gc must read on a format 2 lake (docs/metadata-format-2.md, "gc"): the others hold
nothing gc may delete, and it can tell from the retained versions' roots and one listing.

A partition needs nothing when every retained version has the same state for it (the same
``state_sha256``: the same live segments; in format 2 the same partition manifest), its listed ``.log``
objects less the head's retired ones are exactly its live segments (``live_sha256``), every object of it
named with a run id shares its name stem with one of those ``.log`` objects or a retired one (a live or
retired segment's index), and its folder of pieces holds exactly the head's partition manifest and as many
chunks as the head's line says. Then no retained version holds a retired object of it live, nothing of it
is an orphan, and no piece of it is unreferenced. Every other partition (and every partition of a listing
that the head does not name) is read as gc always read it.

A partition listed only after its newest segment's name (``starts``: ``lake.tail_listing``, gc's scoped
listing, ``lake.gc_listing``) is tested the same way on what was listed: its ``.log`` objects less the
retired ones against ``tail_sha256``, the objects named with a run id there against those and the retired
stems. gc then lists every partition it examines whole."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from kafka_segments.errors import InvalidTopicError
from kafka_segments.lake.format2 import FORMAT_2, PIECES_PREFIX, state_sha256
from kafka_segments.lake.layout import try_parse_segment_key
from kafka_segments.lake.roots import RootPartition, VersionRoot
from kafka_segments.lake.sweep import key_stem, object_run_id
from kafka_segments.segment.files import FileKind
from kafka_segments.state import live_digest
from kafka_segments.storage.base import ObjectMeta
from kafka_segments.topic_partition import TopicPartition


def partition_of(key: str) -> TopicPartition | None:
    """The partition a segment object or a format 2 piece belongs to (``None``: neither)."""
    if key.startswith(PIECES_PREFIX):
        try:
            return TopicPartition.from_dir_name(key[len(PIECES_PREFIX) :].split("/", 1)[0])
        except InvalidTopicError:
            return None
    name = try_parse_segment_key(key)
    return None if name is None else name.topic_partition


class _Listed:
    """One partition's part of the listing."""

    def __init__(self) -> None:
        self.logs: list[tuple[str, int, str]] = []
        self.named: list[str] = []
        """Segment objects named with a run id."""
        self.pieces: list[str] = []


def examined_partitions(
    roots: Sequence[VersionRoot],
    listing: Iterable[ObjectMeta],
    *,
    starts: Mapping[TopicPartition, str] | None = None,
) -> frozenset[TopicPartition]:
    """The partitions gc reads (see the module docstring); ``roots`` are the retained versions', oldest
    first, the head in format 2 (older ones may be in format 1, as after an upgrade). ``starts``: the
    partitions ``listing`` shows only after a key (their tails)."""
    starts = starts or {}
    head = roots[-1]
    retired = {item.key for item in head.retired}
    listed: dict[TopicPartition, _Listed] = defaultdict(_Listed)
    for meta in listing:
        topic_partition = partition_of(meta.key)
        if topic_partition is None:
            continue
        part = listed[topic_partition]
        if meta.key.startswith(PIECES_PREFIX):
            part.pieces.append(meta.key)
        elif object_run_id(meta.key) is not None:
            part.named.append(meta.key)
        if meta.key.endswith(FileKind.LOG.value) and meta.key not in retired:
            part.logs.append((meta.key, meta.size, meta.etag))
    lines = {p.topic_partition: p for p in head.partitions}
    examined = {tp for tp, part in listed.items() if tp not in lines and (part.named or part.pieces)}
    for root in roots[:-1]:
        examined.update(_differing(root, lines))
    for topic_partition, line in lines.items():
        if topic_partition not in examined and not _settled(
            line, listed.get(topic_partition, _Listed()), retired, tail=topic_partition in starts
        ):
            examined.add(topic_partition)
    return frozenset(examined)


def _differing(root: VersionRoot, head: dict[TopicPartition, RootPartition]) -> set[TopicPartition]:
    """The partitions whose state in ``root`` is not the head's (or that one of them lacks). A format 1
    version, read whole, is compared by its states' sha256."""
    if root.format_version == FORMAT_2:
        mine = {p.topic_partition: p.state_sha256 for p in root.partitions}
    else:
        mine = {state.topic_partition: state_sha256(state) for state in root.load()}
    differing = {tp for tp, sha in mine.items() if tp not in head or head[tp].state_sha256 != sha}
    differing.update(tp for tp in head if tp not in mine)
    return differing


def _settled(line: RootPartition, part: _Listed, retired: set[str], *, tail: bool) -> bool:
    recorded = line.summary.tail_sha256 if tail else line.summary.live_sha256
    if recorded is None or line.chunks is None or line.manifest_key is None:
        return False
    if live_digest(part.logs) != recorded:
        return False
    stems = {key_stem(key) for key, _, _ in part.logs} | {key_stem(key) for key in retired}
    if any(key_stem(key) not in stems for key in part.named):
        return False
    return len(part.pieces) == 1 + line.chunks and line.manifest_key in part.pieces
