"""The demo lake, checked with the library before any orchestrator touches it: what it holds, how the
``lake`` offsets source reads its ``__consumer_offsets``, and what retention does to it at the demo's
``now`` (a deletion for every reason the demo shows), a day later (nothing) and at past dates with the
pinned offsets history (what a backfill does)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from kafka_segments.config import Config, load_config
from kafka_segments.coordinator.writer import partition_for_group
from kafka_segments.demo import (
    AUDIT_EMPTY_FOR_MS,
    CLICKSTREAM_SEGMENT_AGES_H,
    DAY_MS,
    HOUR_MS,
    MINUTE_MS,
    build_demo_lake,
    consumer_offsets_snapshot,
    demo_objects,
    pin_demo_offsets,
)
from kafka_segments.lake.history import head_version
from kafka_segments.offsets.sources import take_snapshot
from kafka_segments.pipeline.offsets_input import OffsetsChoice
from kafka_segments.pipeline.report import run_to_dict
from kafka_segments.pipeline.retention_run import RunOptions, run_retention
from kafka_segments.records.control import ControlKey, ControlRecordType
from kafka_segments.records.log import iter_batches
from kafka_segments.retention.expiry import offset_expiry
from kafka_segments.state import OffsetSnapshot
from kafka_segments.storage import LocalStore

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
NOW = 1_763_683_200_000  # 2025-11-21T00:00:00Z
WEEK_MS = 7 * DAY_MS
SEGMENT_NAME = re.compile(r"^([a-z_]+)-(\d+)/(\d{20})\.(log|index|timeindex|txnindex)$")


@pytest.fixture(scope="module")
def config() -> Config:
    return load_config(ROOT / "config" / "demo.yaml")


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    lake = LocalStore(str(tmp_path / "lake"))
    build_demo_lake(lake, now_ms=NOW)
    return lake


def retention(store: LocalStore, config: Config, now_ms: int, choice: OffsetsChoice) -> dict[str, Any]:
    return run_to_dict(run_retention(store, config, RunOptions(now_ms=now_ms, offsets=choice, gc=False)))


def deleted(report: dict[str, Any]) -> dict[str, dict[str, int]]:
    """``topic-partition`` → segments deleted by each pass (partitions that lost nothing left out)."""
    return {
        f"{p['topic']}-{p['partition']}": {reason: item["segments"] for reason, item in p["deleted"].items()}
        for p in report["plan"]["partitions"]
        if p["deleted"]
    }


def log_starts(report: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {
        f"{p['topic']}-{p['partition']}": (p["log_start_offset"]["before"], p["log_start_offset"]["after"])
        for p in report["plan"]["partitions"]
    }


# ---------------------------------------------------------------------------------------------- contents


def test_the_demo_is_deterministic_for_a_given_now() -> None:
    assert demo_objects(NOW) == demo_objects(NOW)
    assert demo_objects(NOW) != demo_objects(NOW + MINUTE_MS)


def test_the_demo_is_a_kafka_log_directory_with_a_log_start_offset_checkpoint() -> None:
    objects = demo_objects(NOW)
    partitions: dict[str, list[int]] = {}
    for key in objects:
        if key == "log-start-offset-checkpoint":
            continue
        match = SEGMENT_NAME.match(key)
        assert match is not None, key
        if match.group(4) == "log":
            partitions.setdefault(f"{match.group(1)}-{match.group(2)}", []).append(int(match.group(3)))
    offsets_partitions = {
        f"__consumer_offsets-{partition_for_group(g)}" for g in ("billing", "analytics", "audit")
    }
    assert set(partitions) == {
        "customers-0",
        "customers-1",
        "clickstream-0",
        "clickstream-1",
        "clickstream-2",
    } | (offsets_partitions)
    assert offsets_partitions == {"__consumer_offsets-9", "__consumer_offsets-10", "__consumer_offsets-5"}
    for partition in ("clickstream-0", "clickstream-1", "clickstream-2"):
        assert sorted(partitions[partition]) == [0, 40, 80, 120, 160, 200]
    assert objects["log-start-offset-checkpoint"] == b"0\n1\nclickstream 2 50\n"


def test_clickstream_segments_span_the_days_their_ages_say() -> None:
    objects = demo_objects(NOW)
    for index, (oldest_h, newest_h) in enumerate(CLICKSTREAM_SEGMENT_AGES_H):
        log = objects[f"clickstream-1/{40 * index:020d}.log"]
        stamps = [record.timestamp for batch in iter_batches(log) for record in batch.records]
        assert len(stamps) == 40
        assert (min(stamps), max(stamps)) == (NOW - oldest_h * HOUR_MS, NOW - newest_h * HOUR_MS)


def test_customers_has_updates_tombstones_and_a_committed_and_an_aborted_transaction() -> None:
    objects = demo_objects(NOW)
    batches = [
        batch
        for key in sorted(objects)
        if key.startswith("customers-0/") and key.endswith(".log")
        for batch in iter_batches(objects[key])
    ]
    records = [record for batch in batches if not batch.header.is_control for record in batch.records]
    keys = [record.key for record in records]
    assert len(set(keys)) < len(keys)  # keyed updates: something for compaction to remove
    assert any(record.value is None for record in records)
    markers = [ControlKey.parse(batch.records[0].key).type for batch in batches if batch.header.is_control]
    assert markers == [ControlRecordType.COMMIT, ControlRecordType.ABORT]
    assert any(key.startswith("customers-0/") and key.endswith(".txnindex") for key in objects)


# ------------------------------------------------------------------------------------------ offsets source


def test_the_lake_source_replays_the_groups_as_the_coordinator_loads_them(store: LocalStore) -> None:
    snapshot = take_snapshot(store, source="lake")
    groups = {group.group_id: group for group in snapshot.groups}
    assert set(groups) == {"billing", "analytics", "audit"}
    assert snapshot.errors == ()

    def offsets(group: str) -> list[int]:
        return [o.offset for o in sorted(groups[group].offsets, key=lambda o: o.partition)]

    # billing's last transaction aborted (offsets 239) and is dropped; the commit after it stands
    assert (groups["billing"].state, offsets("billing")) == ("Stable", [235, 236, 238])
    assert not any(o.pending_transaction for o in groups["billing"].offsets)
    assert (groups["analytics"].state, offsets("analytics")) == ("Stable", [170, 25, 130])
    assert groups["analytics"].subscribed_topics == ("clickstream",)
    audit = groups["audit"]
    assert (audit.state, audit.protocol_type, offsets("audit")) == ("Empty", "consumer", [12, 8, 20])
    assert audit.state_timestamp_ms == NOW - AUDIT_EMPTY_FOR_MS


def test_an_empty_classic_groups_offsets_expire_a_week_after_it_went_empty() -> None:
    """KIP-211: base = currentStateTimestamp for an Empty group with a protocol type; expired at ``>=``."""
    audit = consumer_offsets_snapshot(NOW, at_ms=NOW).group("audit")
    assert audit is not None
    emptied = NOW - AUDIT_EMPTY_FOR_MS
    offset = audit.offsets[0]
    assert offset_expiry(audit, offset, now_ms=emptied + WEEK_MS, retention_ms=WEEK_MS).expired
    assert not offset_expiry(audit, offset, now_ms=emptied + WEEK_MS - 1, retention_ms=WEEK_MS).expired


def test_offsets_as_of_an_earlier_time_hold_only_what_was_written_by_then() -> None:
    earlier = consumer_offsets_snapshot(NOW, at_ms=NOW - 2 * DAY_MS)
    assert [o.offset for o in _group(earlier, "billing").offsets] == [150, 150, 150]
    assert [o.offset for o in _group(earlier, "analytics").offsets] == [90, 25, 80]
    # between the aborted transaction's offsets and its ABORT marker: pending, the previous commit stands
    mid = consumer_offsets_snapshot(NOW, at_ms=NOW - 3 * MINUTE_MS + 10)
    billing = _group(mid, "billing")
    assert [o.offset for o in billing.offsets] == [150, 150, 150]
    assert all(o.pending_transaction for o in billing.offsets)


def _group(snapshot: OffsetSnapshot, group_id: str) -> Any:
    group = snapshot.group(group_id)
    assert group is not None
    return group


# ---------------------------------------------------------------------------------------------- retention


def test_retention_at_now_deletes_by_log_start_offset_consumed_and_retention_ms(
    store: LocalStore, config: Config
) -> None:
    report = retention(store, config, NOW, OffsetsChoice(source="lake"))
    assert report["outcome"] == "committed"
    assert deleted(report) == {
        "clickstream-0": {"consumed": 4},  # M = 170 (analytics); billing is at 235; audit expired
        "clickstream-1": {
            "retention.ms": 2
        },  # analytics stuck at 25: nothing consumed, 8.5 and 7.25 days old
        "clickstream-2": {"log-start-offset": 1, "consumed": 2},  # deleteRecords to 50, then M = 130
    }
    starts = log_starts(report)
    assert starts["clickstream-0"] == (0, 160)
    assert starts["clickstream-1"] == (0, 80)
    assert starts["clickstream-2"] == (50, 120)
    partition_1 = next(
        p for p in report["plan"]["partitions"] if p["topic"] == "clickstream" and p["partition"] == 1
    )
    assert partition_1["holder"]["group_id"] == "analytics"
    assert partition_1["unread_loss"] == [{"group_id": "analytics", "committed_offset": 25, "records": 55}]
    counting = {g["group_id"] for g in partition_1["consumed"]["groups"]}
    assert counting == {"billing", "analytics"}  # audit's offsets expired (KIP-211)


def test_a_second_run_up_to_a_day_later_has_nothing_left_to_do(store: LocalStore, config: Config) -> None:
    retention(store, config, NOW, OffsetsChoice(source="lake"))
    version = head_version(store)
    for later in (NOW, NOW + 2 * MINUTE_MS, NOW + DAY_MS - HOUR_MS):
        report = retention(store, config, later, OffsetsChoice(source="lake"))
        assert report["outcome"] == "nothing to change", later
        assert deleted(report) == {}
    assert head_version(store) == version


def test_compacted_topics_lose_nothing_to_deletion_retention(store: LocalStore, config: Config) -> None:
    """cleanup.policy=compact runs only the log start offset pass (UnifiedLog.deleteOldSegments)."""
    report = retention(store, config, NOW + 30 * DAY_MS, OffsetsChoice(source="lake"))
    assert {p.split("-")[0] for p in deleted(report)} == {"clickstream"}


def test_backfill_dates_use_the_pin_of_their_date_or_the_newest_earlier_one(
    store: LocalStore, config: Config
) -> None:
    """What the backfill test runs through Airflow, here through the library: 11-19 and 11-21 pinned."""
    first = pin_demo_offsets(store, now_ms=NOW, at_ms=NOW - 2 * DAY_MS)
    last = pin_demo_offsets(store, now_ms=NOW, at_ms=NOW)
    backfill = OffsetsChoice(earlier_pin=True)
    day1 = retention(store, config, NOW - 2 * DAY_MS, backfill)
    day2 = retention(store, config, NOW - DAY_MS, backfill)
    day3 = retention(store, config, NOW, backfill)
    assert [(r["offsets_snapshot"]["origin"], r["offsets_snapshot"]["id"]) for r in (day1, day2, day3)] == [
        ("pinned", first.snapshot_id),
        ("pinned-earlier", first.snapshot_id),
        ("pinned", last.snapshot_id),
    ]
    assert deleted(day1) == {
        "clickstream-0": {"consumed": 2},
        "clickstream-2": {"log-start-offset": 1, "consumed": 1},
    }
    assert deleted(day2) == {"clickstream-1": {"retention.ms": 1}}
    assert deleted(day3) == {
        "clickstream-0": {"consumed": 2},
        "clickstream-1": {"retention.ms": 1},
        "clickstream-2": {"consumed": 1},
    }
    for now in (NOW - 2 * DAY_MS, NOW - DAY_MS, NOW):
        assert retention(store, config, now, backfill)["outcome"] == "nothing to change"
    assert head_version(store) == 4
