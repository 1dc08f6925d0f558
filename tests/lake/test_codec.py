"""The manifest's JSON codec: round trips, a golden document that must keep parsing, and strict refusals that
name the field."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import ManifestFormatError, UnsupportedFormatVersionError
from kafka_segments.lake.codec import manifest_from_json, manifest_to_json
from kafka_segments.lake.history import read_manifest
from kafka_segments.lake.json_document import dump_json
from kafka_segments.lake.layout import manifest_key, segment_key
from kafka_segments.segment.files import FileKind
from kafka_segments.state import (
    MANIFEST_FORMAT_VERSION,
    Manifest,
    OpenTransaction,
    PartitionState,
    RetiredObject,
    SegmentEntry,
    SegmentOrigin,
)
from kafka_segments.storage import LocalStore
from kafka_segments.topic_partition import TopicPartition

pytestmark = pytest.mark.unit

LOCATION = "s3://lake/_kafka_segments/manifests/00000000000000000002.json"
INT64_MAX = 2**63 - 1

# ------------------------------------------------------------------------------------------------- strategies

topics = st.from_regex(r"[a-zA-Z0-9._-]{1,24}", fullmatch=True).filter(lambda t: t not in {".", ".."})
topic_partitions = st.builds(TopicPartition, topics, st.integers(0, 2**31 - 1))
run_ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,30}", fullmatch=True)
timestamps = st.integers(-1, 2**45) | st.integers(-(2**63), INT64_MAX)
counts = st.integers(0, 2**31)
free_text = st.text(min_size=1, max_size=20)


@st.composite
def segment_entries(draw: st.DrawFn, topic_partition: TopicPartition, base_offset: int) -> SegmentEntry:
    origin = draw(st.sampled_from(SegmentOrigin))
    run_id = draw(run_ids)
    written = origin is SegmentOrigin.WRITTEN
    return SegmentEntry(
        key=segment_key(topic_partition, base_offset, FileKind.LOG, run_id=run_id if written else None),
        base_offset=base_offset,
        last_offset=draw(st.none() | st.integers(base_offset, base_offset + 10_000)),
        size=draw(st.integers(0, 2**40)),
        sha256=draw(st.text("0123456789abcdef", min_size=64, max_size=64)),
        etag=draw(st.text(max_size=40)),
        record_count=draw(counts),
        batch_count=draw(counts),
        max_timestamp_ms=draw(timestamps),
        first_batch_max_timestamp_ms=draw(timestamps),
        last_modified_ms=draw(timestamps),
        origin=origin,
        run_id=run_id,
    )


@st.composite
def partition_states(draw: st.DrawFn, topic_partition: TopicPartition) -> PartitionState:
    """Segments in offset order, never overlapping, with strictly increasing base offsets; log start <= log
    end; the last segment ends at or below the log end."""
    segments: list[SegmentEntry] = []
    next_base = draw(st.integers(0, 2**40))
    for _ in range(draw(st.integers(0, 4))):
        segment = draw(segment_entries(topic_partition, next_base + draw(st.integers(0, 1000))))
        segments.append(segment)
        next_base = max(segment.next_offset, segment.base_offset + 1)
    floor = segments[-1].next_offset if segments else 0
    log_end = draw(st.integers(floor, floor + 1000) if segments else st.integers(0, INT64_MAX))
    return PartitionState(
        topic_partition=topic_partition,
        log_start_offset=draw(st.integers(0, log_end)),
        log_end_offset=log_end,
        segments=tuple(segments),
        cleaner_checkpoint=draw(st.none() | st.integers(0, INT64_MAX)),
        open_transactions=tuple(
            draw(
                st.lists(
                    st.builds(
                        OpenTransaction,
                        st.integers(0, INT64_MAX),
                        st.integers(-1, 2**15 - 1),
                        st.integers(0, INT64_MAX),
                    ),
                    max_size=2,
                )
            )
        ),
        run_id=draw(run_ids),
    )


def _retired(
    topic_partition: TopicPartition,
    base_offset: int,
    run_id: str | None,
    *,
    retired_in_version: int,
    retired_at_ms: int,
    delete_delay_ms: int,
    reason: str,
) -> RetiredObject:
    return RetiredObject(
        key=segment_key(topic_partition, base_offset, run_id=run_id),
        topic_partition=topic_partition,
        retired_in_version=retired_in_version,
        retired_at_ms=retired_at_ms,
        delete_delay_ms=delete_delay_ms,
        reason=reason,
    )


@st.composite
def manifests(draw: st.DrawFn) -> Manifest:
    version = draw(st.integers(1, 2**40))
    chosen = sorted(draw(st.sets(topic_partitions, max_size=4)))
    retired = st.builds(
        _retired,
        topic_partitions,
        st.integers(0, INT64_MAX),
        st.none() | run_ids,
        retired_in_version=st.integers(1, version),
        retired_at_ms=timestamps,
        delete_delay_ms=st.integers(0, INT64_MAX),
        reason=free_text,
    )
    return Manifest(
        version=version,
        parent_version=None if version == 1 else version - 1,
        run_id=draw(run_ids),
        operation=draw(free_text),
        committed_at_ms=draw(timestamps),
        now_ms=draw(timestamps),
        partitions=tuple(draw(partition_states(tp)) for tp in chosen),
        retired=tuple(draw(st.lists(retired, max_size=3))),
    )


@given(manifests())
def test_manifest_json_round_trip(manifest: Manifest) -> None:
    data = manifest_to_json(manifest)
    parsed = manifest_from_json(data, location=LOCATION)
    assert parsed == manifest
    assert manifest_to_json(parsed) == data  # deterministic bytes
    assert json.loads(data)["format_version"] == MANIFEST_FORMAT_VERSION


# ----------------------------------------------------------------------------------------------------- golden

R1 = "20251121T044000Z-0a1b2c3d"
R2 = "20251121T050000Z-4e5f6071"

GOLDEN_V1 = """{
  "format_version": 1, "version": 2, "parent_version": 1, "run_id": "20251121T050000Z-4e5f6071",
  "operation": "run", "committed_at_ms": 1763700003000, "now_ms": 1763700000000,
  "partitions": [
    {"topic": "orders", "partition": 0, "log_start_offset": 10, "log_end_offset": 100,
     "cleaner_checkpoint": 50, "run_id": "20251121T050000Z-4e5f6071",
     "open_transactions": [{"producer_id": 7, "producer_epoch": 0, "first_offset": 95}],
     "segments": [
       {"key": "orders-0/00000000000000000000.log", "base_offset": 0, "last_offset": 99, "size": 4096,
        "sha256": "abababababababababababababababababababababababababababababababab",
        "etag": "\\"9a0364b9e99bb480dd25e1f0284c8555\\"", "record_count": 100, "batch_count": 10,
        "max_timestamp_ms": 1763700000900, "first_batch_max_timestamp_ms": 1763700000090,
        "last_modified_ms": 1763700001000, "origin": "adopted", "run_id": "20251121T044000Z-0a1b2c3d"},
       {"key": "orders-0/00000000000000000100-20251121T050000Z-4e5f6071.log", "base_offset": 100,
        "last_offset": null, "size": 0,
        "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "etag": "", "record_count": 0, "batch_count": 0,
        "max_timestamp_ms": -1, "first_batch_max_timestamp_ms": -1,
        "last_modified_ms": 1763700002000, "origin": "written", "run_id": "20251121T050000Z-4e5f6071"}]},
    {"topic": "orders", "partition": 1, "log_start_offset": 42, "log_end_offset": 42,
     "cleaner_checkpoint": null, "run_id": "20251121T044000Z-0a1b2c3d", "open_transactions": [],
     "segments": []}],
  "retired": [
    {"key": "orders-1/00000000000000000000.log", "topic": "orders", "partition": 1,
     "retired_in_version": 2, "retired_at_ms": 1763700003000, "delete_delay_ms": 60000,
     "reason": "retention.ms"}]
}"""

GOLDEN_V1_MANIFEST = Manifest(
    version=2,
    parent_version=1,
    run_id=R2,
    operation="run",
    committed_at_ms=1_763_700_003_000,
    now_ms=1_763_700_000_000,
    partitions=(
        PartitionState(
            TopicPartition("orders", 0),
            log_start_offset=10,
            log_end_offset=100,
            segments=(
                SegmentEntry(
                    key="orders-0/00000000000000000000.log",
                    base_offset=0,
                    last_offset=99,
                    size=4096,
                    sha256="ab" * 32,
                    etag='"9a0364b9e99bb480dd25e1f0284c8555"',
                    record_count=100,
                    batch_count=10,
                    max_timestamp_ms=1_763_700_000_900,
                    first_batch_max_timestamp_ms=1_763_700_000_090,
                    last_modified_ms=1_763_700_001_000,
                    origin=SegmentOrigin.ADOPTED,
                    run_id=R1,
                ),
                SegmentEntry(
                    key=f"orders-0/00000000000000000100-{R2}.log",
                    base_offset=100,
                    last_offset=None,
                    size=0,
                    sha256="e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                    etag="",
                    record_count=0,
                    batch_count=0,
                    max_timestamp_ms=-1,
                    first_batch_max_timestamp_ms=-1,
                    last_modified_ms=1_763_700_002_000,
                    origin=SegmentOrigin.WRITTEN,
                    run_id=R2,
                ),
            ),
            cleaner_checkpoint=50,
            open_transactions=(OpenTransaction(producer_id=7, producer_epoch=0, first_offset=95),),
            run_id=R2,
        ),
        PartitionState(TopicPartition("orders", 1), 42, 42, (), run_id=R1),
    ),
    retired=(
        RetiredObject(
            key="orders-1/00000000000000000000.log",
            topic_partition=TopicPartition("orders", 1),
            retired_in_version=2,
            retired_at_ms=1_763_700_003_000,
            delete_delay_ms=60_000,
            reason="retention.ms",
        ),
    ),
)


def test_golden_format_version_1_document_keeps_parsing() -> None:
    assert manifest_from_json(GOLDEN_V1.encode(), location=LOCATION) == GOLDEN_V1_MANIFEST


def test_writer_keeps_the_golden_field_order() -> None:
    assert manifest_to_json(GOLDEN_V1_MANIFEST) == dump_json(json.loads(GOLDEN_V1))


def test_unknown_extra_fields_are_ignored() -> None:
    document = json.loads(GOLDEN_V1)
    document["written_by"] = "kafka-segments 9.9"
    document["partitions"][0]["leader_epoch"] = 12
    document["partitions"][0]["segments"][0]["checksum_algorithm"] = {"name": "sha256"}
    document["retired"][0]["note"] = None
    assert manifest_from_json(dump_json(document), location=LOCATION) == GOLDEN_V1_MANIFEST


def test_an_open_transaction_keeps_where_its_last_batch_ends() -> None:
    """``last_offset`` (added later, optional): written when known and read back, below ``first_offset``
    too (a log start offset inside the transaction clamps that); absent from older manifests, which read as
    unknown (``None``); negative, it is refused."""
    txn = OpenTransaction(producer_id=7, producer_epoch=0, first_offset=95, last_offset=97)
    first, *others = GOLDEN_V1_MANIFEST.partitions
    manifest = replace(GOLDEN_V1_MANIFEST, partitions=(replace(first, open_transactions=(txn,)), *others))
    document = json.loads(manifest_to_json(manifest))
    assert document["partitions"][0]["open_transactions"] == [
        {"producer_id": 7, "producer_epoch": 0, "first_offset": 95, "last_offset": 97}
    ]
    (read,) = (
        manifest_from_json(manifest_to_json(manifest), location=LOCATION).partitions[0].open_transactions
    )
    assert read.last_offset == 97
    (old,) = manifest_from_json(GOLDEN_V1.encode(), location=LOCATION).partitions[0].open_transactions
    assert old.last_offset is None
    document["partitions"][0]["open_transactions"][0]["last_offset"] = 94
    (clamped,) = manifest_from_json(dump_json(document), location=LOCATION).partitions[0].open_transactions
    assert (clamped.first_offset, clamped.last_offset) == (95, 94)
    document["partitions"][0]["open_transactions"][0]["last_offset"] = -1
    with pytest.raises(ManifestFormatError, match="last_offset"):
        manifest_from_json(dump_json(document), location=LOCATION)


# --------------------------------------------------------------------------------------------------- refusals


def _golden() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(GOLDEN_V1)
    return document


def _segment(document: dict[str, Any], index: int = 0) -> dict[str, Any]:
    segment: dict[str, Any] = document["partitions"][0]["segments"][index]
    return segment


def _set(path: str, value: object) -> Callable[[dict[str, Any]], None]:
    """A mutation setting the field at ``path`` (``a.0.b``) of the golden document."""

    def mutate(document: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = document
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def _delete(path: str) -> Callable[[dict[str, Any]], None]:
    def mutate(document: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = document
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[last]

    return mutate


def _swap_partitions(document: dict[str, Any]) -> None:
    document["partitions"].reverse()


def _duplicate_partition(document: dict[str, Any]) -> None:
    document["partitions"][1] = copy.deepcopy(document["partitions"][0])


def _overlapping_segments(document: dict[str, Any]) -> None:
    second = _segment(document, 1)
    second["key"] = "orders-0/00000000000000000099.log"
    second["base_offset"] = 99


def _same_base_offset_twice(document: dict[str, Any]) -> None:
    first, second = _segment(document, 0), _segment(document, 1)
    first.update(key="orders-0/00000000000000000005.log", base_offset=5, last_offset=None)
    second.update(key="orders-0/00000000000000000005.log", base_offset=5, last_offset=9)


SEG = r"partitions\[0\]\.segments\[0\]"
REFUSALS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "missing field": (_delete("partitions.0.log_end_offset"), r"'partitions\[0\]\.log_end_offset': missing"),
    "missing top-level field": (_delete("now_ms"), r"'now_ms': missing"),
    "bool where int": (_set("partitions.0.segments.0.size", True), rf"'{SEG}\.size'.*integer, found True"),
    "string where int": (_set("version", "2"), r"'version': expected an integer, found '2'"),
    "float where int": (_set("committed_at_ms", 1.5), r"'committed_at_ms': expected an integer"),
    "list where object": (_set("partitions.0", []), r"partitions\[0\]: expected a JSON object"),
    "object where list": (_set("retired", {}), r"'retired': expected a list, found dict"),
    "empty run id": (_set("run_id", ""), r"'run_id': expected a non-empty string"),
    "negative base offset": (_set("partitions.0.segments.0.base_offset", -1), rf"'{SEG}\.base_offset'.*>= 0"),
    "negative log start offset": (_set("partitions.0.log_start_offset", -5), r"log_start_offset'.*>= 0"),
    "negative partition": (_set("partitions.0.partition", -1), r"'partitions\[0\]\.partition'.*>= 0"),
    "last offset below base offset": (
        _set("partitions.0.segments.1.last_offset", 99),
        r"segments\[1\]\.last_offset'.*>= 100",
    ),
    "log start above log end": (
        _set("partitions.1.log_start_offset", 43),
        r"'partitions\[1\]\.log_start_offset': 43 is above log_end_offset 42",
    ),
    "log end below the last segment": (
        _set("partitions.0.log_end_offset", 99),
        r"'partitions\[0\]\.log_end_offset': 99 is below the last segment",
    ),
    "overlapping segments": (_overlapping_segments, r"segments\[1\]': base offset 99 overlaps"),
    "same base offset twice": (_same_base_offset_twice, r"segments\[1\]': base offset 5 overlaps"),
    "unsorted partitions": (_swap_partitions, r"'partitions': not sorted by topic and partition"),
    "duplicate partitions": (_duplicate_partition, r"'partitions': orders-0 is listed twice"),
    "key outside the partition folder": (
        _set("partitions.0.segments.0.key", "orders-1/00000000000000000000.log"),
        rf"'{SEG}': key 'orders-1/.*' is not in the partition folder 'orders-0/'",
    ),
    "key in a sub-folder": (
        _set("partitions.0.segments.0.key", "orders-0/x/00000000000000000000.log"),
        r"is not in the partition folder",
    ),
    "key escaping the folder": (
        _set("partitions.0.segments.0.key", "orders-0/../other-0/00000000000000000000.log"),
        r"is not in the partition folder",
    ),
    "key that is not a segment name": (
        _set("partitions.0.segments.0.key", "orders-0/.."),
        rf"'{SEG}': key 'orders-0/\.\.' is not a segment \.log name",
    ),
    "key of an index": (
        _set("partitions.0.segments.0.key", "orders-0/00000000000000000000.index"),
        r"is not a segment \.log name",
    ),
    "key naming another base offset": (
        _set("partitions.0.segments.0.key", "orders-0/00000000000000000001.log"),
        r"names base offset 1, not 0",
    ),
    "retired key of another partition": (
        _set("retired.0.key", "orders-0/00000000000000000000.log"),
        r"'retired\[0\]\.key': 'orders-0/0+\.log' is not a segment \.log key of partition orders-1",
    ),
    "retired key that is not a segment": (
        _set("retired.0.key", "_kafka_segments/manifests/00000000000000000001.json"),
        r"'retired\[0\]\.key': .* is not a segment \.log key",
    ),
    "retired index key": (
        _set("retired.0.key", "orders-1/00000000000000000000.timeindex"),
        r"'retired\[0\]\.key'",
    ),
    "illegal topic name": (_set("partitions.0.topic", "orders/../x"), r"'partitions\[0\]\.topic'.*illegal"),
    "illegal topic in retired": (_set("retired.0.topic", ".."), r"'retired\[0\]\.topic'"),
    "unknown origin": (_set("partitions.0.segments.0.origin", "copied"), r"origin'.*unknown origin 'copied'"),
    "parent of version 1": (
        _set("version", 1),
        r"'parent_version': version 1 must have parent None, found 1",
    ),
    "no parent of version 2": (
        _set("parent_version", None),
        r"'parent_version': version 2 must have parent 1",
    ),
    "parent skipping a version": (
        _set("version", 3),
        r"'parent_version': version 3 must have parent 2, found 1",
    ),
    "zero parent": (_set("parent_version", 0), r"'parent_version'.*>= 1"),
    "format_version as a string": (_set("format_version", "1"), r"'format_version': expected an integer"),
    "format_version missing": (_delete("format_version"), r"'format_version': missing"),
}


@pytest.mark.parametrize(("mutate", "match"), REFUSALS.values(), ids=REFUSALS.keys())
def test_invalid_manifest_is_refused_naming_the_field(
    mutate: Callable[[dict[str, Any]], None], match: str
) -> None:
    document = _golden()
    mutate(document)
    with pytest.raises(ManifestFormatError, match=match) as caught:
        manifest_from_json(dump_json(document), location=LOCATION)
    assert type(caught.value) is ManifestFormatError
    assert caught.value.location == LOCATION


@pytest.mark.parametrize(
    ("data", "match"),
    [
        pytest.param(b"{", r"manifest is not valid JSON \(line 1 column 2", id="not JSON"),
        pytest.param(b"", r"manifest is not valid JSON", id="empty"),
        pytest.param(b'{"format_version": 1, "x": "\xff"}', r"is not UTF-8 \(byte 28\)", id="not UTF-8"),
        pytest.param(b"[1, 2]", r"document: expected a JSON object", id="a list"),
        pytest.param(b"null", r"document: expected a JSON object", id="null"),
        pytest.param(b'"manifest"', r"document: expected a JSON object", id="a string"),
    ],
)
def test_undecodable_manifest_is_refused(data: bytes, match: str) -> None:
    with pytest.raises(ManifestFormatError, match=match) as caught:
        manifest_from_json(data, location=LOCATION)
    assert str(caught.value).startswith(LOCATION)


@pytest.mark.parametrize("version", [0, 2, 99, -1])
def test_unknown_format_version_is_unsupported(version: int) -> None:
    document = _golden()
    document["format_version"] = version
    match = f"format_version {version}; this build reads format_version 1"
    with pytest.raises(UnsupportedFormatVersionError, match=match):
        manifest_from_json(dump_json(document), location=LOCATION)


def test_format_version_is_checked_before_any_other_field() -> None:
    """A document of a later format may look entirely different: only its version is read."""
    with pytest.raises(UnsupportedFormatVersionError, match="format_version 2"):
        manifest_from_json(b'{"format_version": 2, "snapshots": "elsewhere"}', location=LOCATION)


def test_manifest_object_claiming_another_version_is_refused(tmp_path: Any) -> None:
    store = LocalStore(tmp_path / "lake")
    store.put(manifest_key(3), GOLDEN_V1.encode())
    with pytest.raises(ManifestFormatError, match="the object for version 3 says 2"):
        read_manifest(store, 3)


# ---------------------------------------------------------------------------------------------------- fuzzing

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)


def _paths(node: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every field path of a JSON document (object keys and list indexes)."""
    children: list[tuple[str | int, Any]] = []
    if isinstance(node, dict):
        children = list(node.items())
    elif isinstance(node, list):
        children = list(enumerate(node))
    found = []
    for name, child in children:
        found.append((*prefix, name))
        found.extend(_paths(child, (*prefix, name)))
    return found


GOLDEN_PATHS = _paths(json.loads(GOLDEN_V1))


@given(st.sampled_from(GOLDEN_PATHS), json_values)
def test_any_field_replaced_by_any_value_parses_or_is_a_format_error(
    path: tuple[str | int, ...], value: object
) -> None:
    document = _golden()
    node: Any = document
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    try:
        manifest = manifest_from_json(dump_json(document), location=LOCATION)
    except ManifestFormatError:
        return
    assert manifest_from_json(manifest_to_json(manifest), location=LOCATION) == manifest


@given(st.binary(max_size=64))
def test_arbitrary_bytes_are_a_format_error(data: bytes) -> None:
    with pytest.raises(ManifestFormatError):
        manifest_from_json(data, location=LOCATION)
