"""KIP-68 consumed retention and KIP-211 offset expiry, one scenario per clause, through the whole ``run``
path on a local lake and on S3; and a run whose offsets come from the ``__consumer_offsets`` partitions
archived in the same lake."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from kafka_segments.pipeline.offsets_input import OffsetsChoice
from kafka_segments.pipeline.retention_run import RunOptions, run_retention
from kafka_segments.retention.consumed import ConsumedStatus
from kafka_segments.storage import ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock, upload_segment
from unit.coordinator_records import (
    CoordinatorLog,
    consumer_subscription,
    group_metadata_key,
    group_metadata_value,
    member,
    offset_commit_key,
    offset_commit_value,
)

from lake.retention_helpers import (
    TP,
    bases,
    config,
    group,
    run,
    topic_yaml,
    upload_fifteen_records,
    write_snapshot,
)

pytestmark = pytest.mark.lake

DAY = 86_400_000
OLD = T0 - 10 * DAY
OFFSETS_RETENTION = 10_080 * 60_000
CONSUMED = {"retention_commitoffset_enable": True, "retention_commitoffset_ms": DAY, "retention_ms": 30 * DAY}


@dataclass(frozen=True)
class Scenario:
    groups: list[dict[str, object]]
    left: list[int]
    status: ConsumedStatus
    holder: str | None = None
    errors: tuple[dict[str, str], ...] = ()
    settings: dict[str, object] = field(default_factory=dict)
    segment_ts: tuple[int, int, int] = (T0 - 2 * DAY,) * 3
    unread_loss: tuple[str, ...] = ()


LIVE = group("live", [(0, 15, T0)], subscribed=["t"])

SCENARIOS = {
    "kip68_lagging_group_holds_retention_back": Scenario(
        [LIVE, group("slow", [(0, 7, T0)], subscribed=["t"])], [5, 10], ConsumedStatus.ACTIVE, "slow"
    ),
    "kip68_every_group_caught_up": Scenario([LIVE], [], ConsumedStatus.ACTIVE, "live"),
    "kip211_expired_empty_group_no_longer_counts": Scenario(
        [LIVE, group("gone", [(0, 2, OLD)], state="Empty", state_ts=OLD)], [], ConsumedStatus.ACTIVE, "live"
    ),
    "kip211_empty_group_counts_until_its_state_timestamp_expires": Scenario(
        [LIVE, group("idle", [(0, 2, OLD)], state="Empty", state_ts=T0 - DAY)],
        [0, 5, 10],
        ConsumedStatus.ACTIVE,
        "idle",
    ),
    "kip68_unreadable_group_sets_m_to_minus_one": Scenario(
        [LIVE],
        [0, 5, 10],
        ConsumedStatus.UNREADABLE_GROUPS,
        errors=({"group_id": "fraud", "error": "COORDINATOR_NOT_AVAILABLE"},),
    ),
    "kip211_standalone_consumer_counts_from_its_commit": Scenario(
        [LIVE, group("solo", [(0, 6, T0 - DAY)], state="Empty", protocol_type=None)],
        [5, 10],
        ConsumedStatus.ACTIVE,
        "solo",
    ),
    "kip211_standalone_consumer_expired": Scenario(
        [LIVE, group("solo", [(0, 6, T0 - OFFSETS_RETENTION)], state="Empty", protocol_type=None)],
        [],
        ConsumedStatus.ACTIVE,
        "live",
    ),
    "kip211_unsubscribed_topic_expires_from_its_commit": Scenario(
        [LIVE, group("moved", [(0, 1, OLD)], subscribed=["other"])], [], ConsumedStatus.ACTIVE, "live"
    ),
    "kip211_subscribed_topic_never_expires": Scenario(
        [LIVE, group("steady", [(0, 1, OLD)], subscribed=["t"])], [0, 5, 10], ConsumedStatus.ACTIVE, "steady"
    ),
    "kip68_no_group_counts": Scenario(
        [group("elsewhere", [(0, 1, T0)], subscribed=["other"], topic="other")],
        [0, 5, 10],
        ConsumedStatus.NO_GROUPS,
    ),
    "kip68_forced_retention_ms_still_applies_and_warns": Scenario(
        [LIVE, group("slow", [(0, 3, T0)], subscribed=["t"])],
        [],
        ConsumedStatus.UNREADABLE_GROUPS,
        errors=({"group_id": "fraud", "error": "GROUP_AUTHORIZATION_FAILED"},),
        settings={"retention_ms": DAY},
        unread_loss=("slow",),
    ),
    "kip68_required_group_guard": Scenario(
        [LIVE],
        [0, 5, 10],
        ConsumedStatus.ACTIVE,
        "audit",
        settings={"kafka_segments_consumed_required_groups": "audit"},
    ),
    "future_timestamped_segment_blocks_time_retention": Scenario(
        [LIVE, group("slow", [(0, 0, T0)], subscribed=["t"])],
        [5, 10],
        ConsumedStatus.ACTIVE,
        "slow",
        settings={"retention_ms": DAY},
        segment_ts=(OLD, T0 + DAY, OLD),
        unread_loss=("slow",),
    ),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_consumed_retention_scenario(store: ObjectStore, clock: FakeClock, tmp_path: Path, name: str) -> None:
    scenario = SCENARIOS[name]
    upload_fifteen_records(store, segment_ts=scenario.segment_ts)
    snapshot = write_snapshot(
        tmp_path / "offsets.json", scenario.groups, taken_at_ms=T0, errors=scenario.errors
    )
    settings = {**CONSUMED, **scenario.settings}

    result = run(store, config(topic_yaml(**settings)), now_ms=T0, clock=clock, offsets_file=snapshot)

    assert bases(store) == scenario.left
    plan = result.plan.partition(TP)
    assert plan is not None
    assert plan.consumed.status is scenario.status
    assert (None if plan.holder is None else plan.holder.group_id) == scenario.holder
    assert tuple(loss.group_id for loss in plan.unread_loss) == scenario.unread_loss


def test_run_takes_its_offsets_from_the_archived_consumer_offsets(
    store: ObjectStore, clock: FakeClock
) -> None:
    """``--offsets-source lake``: the group coordinator's own records, replayed; pinned for the rerun."""
    upload_fifteen_records(store, ts=T0 - 2 * DAY)
    log = CoordinatorLog(timestamp=T0 - 60_000)
    log.append(
        (
            group_metadata_key("billing"),
            group_metadata_value(members=[member("m1", subscription=consumer_subscription(["t"]))]),
        )
    )
    log.append((offset_commit_key("billing", "t", 0), offset_commit_value(7, commit_timestamp=T0 - 60_000)))
    upload_segment(store, TopicPartition("__consumer_offsets", 0), log.segment())
    cfg = config(topic_yaml(**CONSUMED))
    options = RunOptions(now_ms=T0, offsets=OffsetsChoice(source="lake"))

    first = run_retention(store, cfg, options, clock=clock)

    assert first.offsets is not None
    assert first.offsets.origin == "taken"
    assert first.offsets.snapshot.source == "lake"
    plan = first.plan.partition(TP)
    assert plan is not None
    assert plan.holder is not None
    assert (plan.holder.group_id, plan.holder.committed_offset) == ("billing", 7)
    assert bases(store) == [5, 10]
    offsets_plan = first.plan.partition(TopicPartition("__consumer_offsets", 0))
    assert offsets_plan is not None
    assert not offsets_plan.changed  # compacted by Kafka's own override: no time retention

    rerun = run_retention(store, cfg, options, clock=clock)
    assert rerun.offsets is not None
    assert rerun.offsets.origin == "pinned"
    assert rerun.offsets.snapshot_id == first.offsets.snapshot_id
    assert rerun.committed_version is None
