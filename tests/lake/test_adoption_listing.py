"""Adoption rule 1 (what a listing holds) and the adopt report, on both backends."""

from __future__ import annotations

import json

import pytest
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.adoption_listing import classify_listing
from kafka_segments.lake.history import read_head
from kafka_segments.storage import ObjectStore
from kafka_segments.storage.base import ObjectMeta
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment, upload_segment

from lake.adoption_helpers import flip_byte

pytestmark = pytest.mark.lake

TP = TopicPartition("orders", 0)


def test_rule1_listing_classification_reports_only_what_it_leaves_alone(
    store: ObjectStore, clock: FakeClock
) -> None:
    adopted = upload_segment(store, TP, make_segment(0))  # + .index and .timeindex: never reported
    others = {
        "orders-0/00000000000000000006-20251121T044000Z-0a1b2c3d.log": b"",  # written by this project
        "orders-0/00000000000000000006-20251121T044000Z-0a1b2c3d.index": b"",
        "_kafka_segments/runs/elsewhere/notes.txt": b"x",  # the lake's own
        "orders-0/leader-epoch-checkpoint": b"0\n0\n",
        "orders-0/partition.metadata": b"version: 0\n",
        "orders-0/00000000000000000000.snapshot": b"",
        "orders-0/00000000000000000006.log.deleted": b"",
        "orders-0/00000000000000000006.log.cleaned": b"",
        "orders-0/00000000000000000006.log.swap": b"",
        "orders-0/6.log": b"",
        "orders-0/nested/00000000000000000000.log": b"",
        "orders-0/notes.txt": b"",
        "bad!topic-0/00000000000000000000.log": b"",
        "spark-output/part-0000.parquet": b"",
        "spark-output/part-0001.parquet": b"",
        "orders-007/00000000000000000000.log": b"",
        "meta.properties": b"",
    }
    for key, data in others.items():
        store.put(key, data)
    before = {meta.key: meta.etag for meta in store.list()}

    report = adopt(store, now_ms=clock(), clock=clock)

    assert [entry.key for entry in report.result.adopted] == [adopted]
    reasons = {item.key: item.reason for item in report.result.ignored}
    assert sorted(reasons) == sorted(
        [
            "bad!topic-0/",
            "meta.properties",
            "orders-0/00000000000000000000.snapshot",
            "orders-0/00000000000000000006.log.cleaned",
            "orders-0/00000000000000000006.log.deleted",
            "orders-0/00000000000000000006.log.swap",
            "orders-0/6.log",
            "orders-0/leader-epoch-checkpoint",
            "orders-0/nested/00000000000000000000.log",
            "orders-0/notes.txt",
            "orders-0/partition.metadata",
            "orders-007/",
            "spark-output/",
        ]
    )
    assert "contains a character other than ASCII alphanumerics" in reasons["bad!topic-0/"]
    assert "does not end in a decimal partition number" in reasons["spark-output/"]
    assert "2 object(s)" in reasons["spark-output/"]
    assert "canonical spelling 'orders-7'" in reasons["orders-007/"]
    assert "transient .deleted" in reasons["orders-0/00000000000000000006.log.deleted"]
    assert "nested key" in reasons["orders-0/nested/00000000000000000000.log"]
    assert "lake root" in reasons["meta.properties"]
    after = {meta.key: meta.etag for meta in store.list()}
    assert {
        key: etag for key, etag in after.items() if key in before
    } == before  # nothing deleted or rewritten


def test_rule1_classification_of_a_listing_needs_no_store() -> None:
    def meta(key: str) -> ObjectMeta:
        return ObjectMeta(key, 0, "e", 0)

    keys = [
        "log-start-offset-checkpoint",
        "cleaner-offset-checkpoint",
        "_kafka_segments/manifests/00000000000000000001.json",
        "t.a-b-3/00000000000000000010.log",
        "t.a-b-3/00000000000000000002.log",
        "t.a-b-3/00000000000000000002.txnindex",
    ]

    classified = classify_listing(meta(key) for key in keys)

    (tp,) = classified.segments
    assert tp == TopicPartition("t.a-b", 3)
    assert [seg.base_offset for seg in classified.segments[tp]] == [2, 10]
    assert classified.ignored == ()
    assert classified.present_keys == frozenset(keys)


def test_adopt_report_as_json_and_text(store: ObjectStore, clock: FakeClock) -> None:
    upload_segment(store, TP, make_segment(0))
    bad = make_segment(0)
    store.put("orders-1/00000000000000000000.log", flip_byte(bad.log, 45))
    store.put("README", b"hello")

    report = adopt(store, now_ms=clock(), clock=clock)

    document = report.to_dict()
    assert json.loads(json.dumps(document)) == document
    assert document["committed_version"] == 1
    assert [item["key"] for item in document["adopted"]] == ["orders-0/00000000000000000000.log"]
    (quarantine,) = document["quarantined"]
    assert (quarantine["topic"], quarantine["partition"], quarantine["position"]) == ("orders", 1, 0)
    assert quarantine["error"] == "InvalidCrcError"
    assert [p["log_end_offset"] for p in document["partitions"]] == [6]
    text = report.to_text()
    assert "committed version 1" in text
    assert "orders-0: 1 adopted, 0 regrown; log start 0, log end 6" in text
    assert "+ orders-0/00000000000000000000.log: offsets [0, 5], 6 record(s) in 3 batch(es)" in text
    assert "orders-1: QUARANTINED, not adopted" in text
    assert "! orders-1/00000000000000000000.log at byte 0: InvalidCrcError" in text
    assert "- README: an unknown file at the lake root" in text
    head = read_head(store)
    assert head is not None
    assert [state.topic_partition for state in head.partitions] == [TP]


def test_adoption_asks_for_no_index_the_listing_does_not_show(store: ObjectStore, clock: FakeClock) -> None:
    """A ``.log`` uploaded without its indexes: adoption reads the ``.log`` and asks for no index (on S3
    each would be a request answered 404, two per segment); a segment with its indexes gets them read (its
    ``.timeindex`` pinned; its ``.index`` has no entry, so it pins nothing)."""
    from counting_store import counting_store
    from kafka_segments.lake.layout import index_keys

    bare = upload_segment(store, TP, make_segment(0), with_indexes=False)
    other = TopicPartition("orders", 1)
    full = upload_segment(store, other, make_segment(0))
    counted = counting_store(store)
    adopt(counted, now_ms=clock(), clock=clock)

    asked = {call.key for call in counted.calls if call.kind in {"get", "get_range", "head"}}
    assert asked.isdisjoint(index_keys(bare))
    assert set(index_keys(full)[:2]) <= asked  # the .index and .timeindex beside the other one
    head = read_head(store)
    assert head is not None
    entry = head.partition_map()[other].segments[0]
    assert entry.time_index_sha256 is not None
