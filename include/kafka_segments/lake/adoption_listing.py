"""Adoption's reading of a lake listing: which objects are segments with Kafka's plain names.

The lake's own keys are not reported; a top-level folder that is not a canonical ``<topic>-<partition>``
(``orders-007`` would alias ``orders-7``) is reported once with the reason. In a partition folder
``<20 digits>.log`` is a segment; its indexes and the objects this project wrote are not reported; anything
else (``partition.metadata``, Kafka's ``.deleted`` / ``.cleaned`` / ``.swap`` files, …) is ignored with a
reason. One pass over the listing, reading and changing nothing."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from kafka_segments.errors import InvalidFileNameError, InvalidTopicError
from kafka_segments.lake.adoption_report import Ignored
from kafka_segments.lake.layout import CHECKPOINT_KEYS, INDEX_KINDS, is_meta_key, try_parse_segment_key
from kafka_segments.segment.files import INT64_MAX, FileKind, TransientSuffix, parse_segment_file_name
from kafka_segments.storage.base import ObjectMeta
from kafka_segments.topic_partition import TopicPartition

_KNOWN_PARTITION_FILES = {
    "leader-epoch-checkpoint": "a broker's leader-epoch cache; the lake does not use it",
    "partition.metadata": "a broker's topic-id file; the lake does not use it",
}
_TRANSIENT_REASONS = {
    TransientSuffix.DELETED: "Kafka's transient .deleted file (a segment file scheduled for deletion); "
    "not part of the log",
    TransientSuffix.CLEANED: "Kafka's transient .cleaned file (cleaner output not swapped in); "
    "not part of the log",
    TransientSuffix.SWAP: "Kafka's transient .swap file (an interrupted segment swap); Kafka's loader would "
    "finish the swap, adoption does not: rename it to its plain name or remove it",
}


@dataclass(frozen=True, slots=True)
class PlainSegment:
    """A ``.log`` object with Kafka's plain name."""

    topic_partition: TopicPartition
    base_offset: int
    meta: ObjectMeta

    @property
    def key(self) -> str:
        return self.meta.key


@dataclass(frozen=True, slots=True)
class ClassifiedListing:
    """A listing sorted out for adoption."""

    segments: dict[TopicPartition, list[PlainSegment]]
    """Every plain ``.log`` per partition, by base offset (known ones included)."""
    objects: dict[str, ObjectMeta]
    """Every listed object by key."""
    ignored: tuple[Ignored, ...]
    present_keys: frozenset[str]


def classify_listing(listing: Iterable[ObjectMeta]) -> ClassifiedListing:
    """Sort ``listing`` into plain segments and ignored objects (see the module docstring)."""
    objects: dict[str, ObjectMeta] = {}
    folders: defaultdict[str, list[ObjectMeta]] = defaultdict(list)
    ignored: list[Ignored] = []
    for meta in listing:
        objects[meta.key] = meta
        if is_meta_key(meta.key) or meta.key in CHECKPOINT_KEYS:
            continue
        folder, slash, _ = meta.key.partition("/")
        if slash:
            folders[folder].append(meta)
        else:
            ignored.append(Ignored(meta.key, "an unknown file at the lake root; adoption leaves it alone"))
    segments: dict[TopicPartition, list[PlainSegment]] = {}
    for folder, metas in folders.items():
        topic_partition, problem = _partition_folder(folder)
        if topic_partition is None:
            ignored.append(Ignored(f"{folder}/", f"{problem}; its {len(metas)} object(s) are left alone"))
            continue
        found = _classify_folder(topic_partition, metas, ignored)
        if found:
            segments[topic_partition] = sorted(found, key=lambda segment: segment.base_offset)
    return ClassifiedListing(
        segments=segments,
        objects=objects,
        ignored=tuple(sorted(ignored, key=lambda item: item.key)),
        present_keys=frozenset(objects),
    )


def _partition_folder(folder: str) -> tuple[TopicPartition | None, str]:
    try:
        topic_partition = TopicPartition.from_dir_name(folder)
    except InvalidTopicError as exc:
        return None, f"not a partition folder: {exc}"
    if topic_partition.dir_name != folder:
        return None, (
            f"not a partition folder: {folder!r} is not the canonical spelling {topic_partition.dir_name!r} "
            "of its partition"
        )
    return topic_partition, ""


def _classify_folder(
    topic_partition: TopicPartition, metas: list[ObjectMeta], ignored: list[Ignored]
) -> list[PlainSegment]:
    found: list[PlainSegment] = []
    for meta in metas:
        name = meta.key[len(topic_partition.dir_name) + 1 :]
        if "/" in name:
            ignored.append(Ignored(meta.key, "a nested key inside a partition folder; not a segment file"))
            continue
        parsed = try_parse_segment_key(meta.key)
        if parsed is None:
            ignored.append(Ignored(meta.key, _other_file_reason(name)))
        elif not parsed.is_plain or parsed.kind in INDEX_KINDS:
            continue  # written by this project, or a segment's accelerator
        elif parsed.kind is not FileKind.LOG:
            ignored.append(Ignored(meta.key, "a broker's producer-state snapshot; the lake does not use it"))
        elif parsed.base_offset > INT64_MAX:
            ignored.append(Ignored(meta.key, "the base offset in its name is above 2**63 - 1"))
        else:
            found.append(PlainSegment(topic_partition, parsed.base_offset, meta))
    return found


def _other_file_reason(name: str) -> str:
    known = _KNOWN_PARTITION_FILES.get(name)
    if known is not None:
        return known
    try:
        parsed = parse_segment_file_name(name)
    except InvalidFileNameError:
        return "not a Kafka segment file name; adoption leaves it alone"
    if parsed.suffix is not None:
        return _TRANSIENT_REASONS[parsed.suffix]
    return "a segment file name without Kafka's 20-digit zero-padded offset; adoption leaves it alone"
