"""``read_lake`` against kafka-python over ``export`` of the same version, option by option: the shared rich
lake (every codec, transactions that abort, span segments and stay open, tombstones, a log start offset
inside a batch, a partition without segments) plus a legacy (v0/v1) partition, at two versions."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from kafka_segments.errors import ManifestVersionNotFoundError
from kafka_segments.reading import DataLossError, ReadOptionError, VersionGoneError, arrow_schema, read_lake
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock
from lake.read_helpers import PAYMENTS_0, PartitionSpec, Seg, commit_lake, commit_states, rich_specs
from s3_fixtures import new_s3_store

from reading.reference import RefPartition, consumed, offset_for_time, reference

pytestmark = pytest.mark.lake

DATA = Path(__file__).resolve().parents[1] / "data"
LEGACY_0 = TopicPartition("legacy", 0)
ORDERS_0 = TopicPartition("orders", 0)
Rows = list[tuple[object, ...]]


@dataclasses.dataclass(frozen=True)
class Lake:
    store: ObjectStore
    versions: dict[int, dict[TopicPartition, RefPartition]]
    committed_at: dict[int, int]


def _build(store: ObjectStore, out: Path) -> Lake:
    clock = FakeClock()
    specs = dict(rich_specs())
    specs[LEGACY_0] = PartitionSpec([Seg((DATA / "legacy" / "mixed.log").read_bytes(), 997, adopted=True)])
    first = commit_lake(store, specs, clock=clock, operation="adopt")
    clock.advance(60_000)
    orders = first.partition(ORDERS_0)
    assert orders is not None
    assert len(orders.segments) > 1
    trimmed = dataclasses.replace(
        orders, segments=orders.segments[1:], log_start_offset=orders.segments[1].base_offset
    )
    states = [trimmed if s.topic_partition == ORDERS_0 else s for s in first.partitions]
    second = commit_states(store, states, clock=clock)
    return Lake(
        store,
        {v: reference(store, out / f"v{v}", version=v) for v in (first.version, second.version)},
        {first.version: first.committed_at_ms, second.version: second.committed_at_ms},
    )


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    root = tmp_path_factory.mktemp("reading")
    return _build(LocalStore(root / "lake"), root)


def _read(store: ObjectStore, options: Mapping[str, str], *, headers: bool = False) -> Rows:
    schema = arrow_schema(include_headers=options.get("includeHeaders") == "true")
    table = pa.Table.from_batches(list(read_lake(store, options)), schema=schema)
    rows = []
    for row in table.to_pylist():
        stamp = row["timestamp"]
        millis = round(stamp.timestamp() * 1000)
        base = (
            row["key"],
            row["value"],
            row["topic"],
            row["partition"],
            row["offset"],
            millis,
            row["timestampType"],
        )
        rows.append((*base, tuple((h["key"], h["value"]) for h in row["headers"])) if headers else base)
    return rows


def _expected(parts: Mapping[TopicPartition, RefPartition], *, headers: bool = False, **kw: Any) -> Rows:
    return [r.row(headers=headers) for tp in sorted(parts) for r in consumed(parts[tp], **kw)]


ALL_TOPICS = {"subscribe": "orders,payments,legacy"}


def test_every_record_of_the_head(lake: Lake) -> None:
    head = lake.versions[max(lake.versions)]
    assert _read(lake.store, {**ALL_TOPICS, "includeHeaders": "true"}, headers=True) == _expected(
        head, headers=True
    )
    assert _read(lake.store, {**ALL_TOPICS, "includeHeaders": "false"}) == _expected(head)


def test_the_same_read_over_s3(lake: Lake, s3_server: Any, tmp_path: Path) -> None:
    s3 = _build(new_s3_store(s3_server), tmp_path)
    assert _read(s3.store, ALL_TOPICS) == _read(lake.store, ALL_TOPICS)


def test_read_committed_drops_exactly_the_aborted_records_and_stops_at_the_last_stable_offset(
    lake: Lake,
) -> None:
    head = lake.versions[max(lake.versions)]
    committed = _read(lake.store, {**ALL_TOPICS, "kafka.isolation.level": "read_committed"})
    uncommitted = _read(lake.store, ALL_TOPICS)
    assert committed == _expected(head, committed=True)
    aborted = [r.row() for p in head.values() for r in p.records if r.aborted and not r.control]
    beyond = [
        r.row() for p in head.values() for r in p.records if r.offset >= p.last_stable and not r.control
    ]
    assert aborted
    assert beyond
    assert sorted(set(uncommitted) - set(committed), key=repr) == sorted(set(aborted) | set(beyond), key=repr)


def test_subscribe_pattern_and_assign_choose_partitions(lake: Lake) -> None:
    head = lake.versions[max(lake.versions)]
    payments = {tp: p for tp, p in head.items() if tp.topic == "payments"}
    assert _read(lake.store, {"subscribePattern": "pay.*"}) == _expected(payments)
    assert _read(lake.store, {"subscribePattern": "pay"}) == []
    assert _read(lake.store, {"assign": json.dumps({"payments": [0]})}) == _expected(
        {PAYMENTS_0: head[PAYMENTS_0]}
    )


def test_offsets_per_partition(lake: Lake) -> None:
    part = lake.versions[max(lake.versions)][PAYMENTS_0]
    options = {
        "assign": '{"payments":[0]}',
        "startingOffsets": '{"payments":{"0":4}}',
        "endingOffsets": '{"payments":{"0":9}}',
    }
    assert _read(lake.store, options) == [r.row() for r in consumed(part, start=4, end=9)]
    options |= {"startingOffsets": '{"payments":{"0":-2}}', "endingOffsets": '{"payments":{"0":-1}}'}
    assert _read(lake.store, options) == [r.row() for r in consumed(part)]


def test_timestamps_resolve_as_list_offsets(lake: Lake) -> None:
    head = lake.versions[max(lake.versions)]
    part = head[ORDERS_0]
    middle = part.records[len(part.records) // 2].timestamp
    later = part.records[3 * len(part.records) // 4].timestamp
    start = offset_for_time(part, middle)
    end = offset_for_time(part, later)
    assert start is not None
    assert end is not None
    assert start < end
    options = {"assign": '{"orders":[0]}', "startingTimestamp": str(middle), "endingTimestamp": str(later)}
    assert _read(lake.store, options) == [r.row() for r in consumed(part, start=start, end=end)]
    by_partition = {
        "assign": '{"orders":[0]}',
        "startingOffsetsByTimestamp": json.dumps({"orders": {"0": middle}}),
    }
    assert _read(lake.store, by_partition) == [r.row() for r in consumed(part, start=start)]


def test_a_timestamp_no_record_reaches(lake: Lake) -> None:
    options = {"assign": '{"orders":[0]}', "startingTimestamp": str(2**62)}
    with pytest.raises(ReadOptionError, match="no record at or after timestamp"):
        _read(lake.store, options)
    assert _read(lake.store, {**options, "startingOffsetsByTimestampStrategy": "latest"}) == []
    assert _read(lake.store, {"assign": '{"orders":[0]}', "endingTimestamp": str(2**62)}) == _read(
        lake.store, {"assign": '{"orders":[0]}'}
    )


def test_fail_on_data_loss(lake: Lake) -> None:
    part = lake.versions[max(lake.versions)][PAYMENTS_0]
    options = {"assign": '{"payments":[0]}', "startingOffsets": '{"payments":{"0":0}}'}
    with pytest.raises(DataLossError, match="starting offset 0 is below the log start offset 3"):
        _read(lake.store, options)
    assert _read(lake.store, {**options, "failOnDataLoss": "false"}) == [r.row() for r in consumed(part)]
    assert all(row[4] >= part.log_start for row in _read(lake.store, ALL_TOPICS) if row[2] == "payments")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "option 'subscribe': is missing"),
        ({"subscribe": "a", "assign": '{"a":[0]}'}, "give exactly one of"),
        ({"assign": "[1]"}, "option 'assign': expected a JSON object"),
        ({"subscribe": "orders", "startingOffsets": "latest"}, "'latest' is not allowed for a batch read"),
        ({"subscribe": "orders", "endingOffsets": '{"orders":{"0":-2}}'}, "-2 (earliest) is not allowed"),
        ({"subscribe": "orders", "startingOffsets": '{"orders":{"0":1}}'}, "missing: orders-1"),
        (
            {"subscribe": "orders", "kafka.isolation.level": "x"},
            "neither read_committed nor read_uncommitted",
        ),
        ({"subscribe": "orders", "failOnDataLoss": "yes"}, "option 'failOnDataLoss'"),
        ({"subscribe": "orders", "versionAsOf": "v1"}, "option 'versionAsOf'"),
        ({"subscribe": "orders", "view": "compacted"}, "option 'view'"),
        ({"subscribe": "orders", "startingTimestamp": "soon"}, "option 'startingTimestamp'"),
        ({"subscribe": "orders", "endingTimestamp": "9" * 30}, "option 'endingTimestamp': '999"),
        ({"subscribe": "orders", "timestampAsOf": "10000-01-01T00:00:00Z"}, "option 'timestampAsOf'"),
        ({"assign": '{"a b":[0]}'}, "option 'assign': Topic name \"a b\" is illegal"),
    ],
)
def test_bad_options_are_one_named_error(lake: Lake, options: dict[str, str], message: str) -> None:
    with pytest.raises(ReadOptionError) as caught:
        _read(lake.store, options)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_version_as_of_reads_that_commit(lake: Lake) -> None:
    first, second = sorted(lake.versions)
    assert _read(lake.store, {**ALL_TOPICS, "versionAsOf": str(first)}) == _expected(lake.versions[first])
    assert _read(lake.store, {**ALL_TOPICS, "versionAsOf": str(second)}) == _expected(lake.versions[second])
    assert _expected(lake.versions[first]) != _expected(lake.versions[second])
    at = {**ALL_TOPICS, "timestampAsOf": str(lake.committed_at[second] - 1)}
    assert _read(lake.store, at) == _expected(lake.versions[first])
    with pytest.raises(ManifestVersionNotFoundError, match="no retained manifest was committed at or before"):
        _read(lake.store, {**ALL_TOPICS, "timestampAsOf": "1000"})


def test_a_version_whose_objects_are_gone_names_them(tmp_path: Path) -> None:
    built = _build(LocalStore(tmp_path / "lake"), tmp_path)
    first = min(built.versions)
    orders = [key for key in (m.key for m in built.store.list("orders-0/")) if key.endswith(".log")]
    built.store.delete(orders[0])
    with pytest.raises(VersionGoneError, match=f"version {first} can no longer be read") as caught:
        _read(built.store, {**ALL_TOPICS, "versionAsOf": str(first)})
    assert orders[0] in str(caught.value)
