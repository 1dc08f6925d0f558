"""KIP-68 consumed retention (docs/retention.md) with KIP-211 expiry, planned per partition."""

from __future__ import annotations

import pytest
from kafka_segments.retention.consumed import ConsumedIndex, ConsumedStatus
from kafka_segments.retention.plan import PartitionPlan, plan_partition
from kafka_segments.retention.rules import DeletionReason
from kafka_segments.state import CommittedOffset, GroupError, GroupOffsets, GroupType, OffsetSnapshot
from unit.retention_helpers import seg, state, topic_config

pytestmark = pytest.mark.unit

NOW = 1_763_700_000_000
DAY = 86_400_000
OLD = NOW - 10 * DAY


def committed(partition: int, offset: int, *, topic: str = "t", at: int = NOW - 1000) -> CommittedOffset:
    return CommittedOffset(topic, partition, offset, at, None)


def consumer_group(
    group_id: str,
    *offsets: CommittedOffset,
    state_name: str = "Stable",
    subscribed: tuple[str, ...] | None = ("t",),
    protocol_type: str | None = "consumer",
    state_ts: int | None = None,
) -> GroupOffsets:
    return GroupOffsets(group_id, state_name, protocol_type, state_ts, subscribed, offsets, GroupType.CLASSIC)


def snapshot(*groups: GroupOffsets, errors: tuple[GroupError, ...] = ()) -> OffsetSnapshot:
    return OffsetSnapshot(NOW, "file", groups, errors)


def plan(
    snap: OffsetSnapshot | None, *, retention_ms: int = 30 * DAY, ts: int = OLD, **config: object
) -> PartitionPlan:
    segments = [seg(b, b + 4, size=100, ts=ts) for b in (0, 5, 10)]
    options: dict[str, object] = {
        "consumed_retention_enabled": True,
        "consumed_retention_ms": DAY,
        "retention_ms": retention_ms,
    }
    options.update(config)
    topic = topic_config(**options)
    index = None if snap is None else ConsumedIndex(snap, now_ms=NOW, retention_ms=topic.offsets_retention_ms)
    return plan_partition(state(segments), topic, now_ms=NOW, index=index)


def deleted(result: PartitionPlan) -> list[tuple[int, str]]:
    return [(d.segment.base_offset, d.reason.value) for d in result.deletions]


def test_lagging_group_holds_consumed_retention_back() -> None:
    result = plan(snapshot(consumer_group("fast", committed(0, 15)), consumer_group("slow", committed(0, 7))))
    assert result.consumed.status is ConsumedStatus.ACTIVE
    assert result.consumed.min_offset == 7
    assert deleted(result) == [(0, "consumed")]
    assert result.new_log_start_offset == 5
    assert result.holder is not None
    assert result.holder.group_id == "slow"
    assert result.holder.lag_records == 15 - 7
    assert result.holder.lag_bytes == 200  # [5-9] and [10-14] are not wholly consumed
    assert result.holder.expires_at_ms is None  # Stable and subscribed: its offsets do not expire


def test_every_group_caught_up_deletes_everything_old_enough() -> None:
    result = plan(snapshot(consumer_group("a", committed(0, 15)), consumer_group("b", committed(0, 15))))
    assert deleted(result) == [(0, "consumed"), (5, "consumed"), (10, "consumed")]
    assert result.new_log_start_offset == 15


def test_consumed_time_must_have_passed() -> None:
    result = plan(snapshot(consumer_group("a", committed(0, 15))), ts=NOW - DAY + 1)
    assert deleted(result) == []


def test_expired_empty_group_no_longer_counts() -> None:
    lagging_but_gone = consumer_group(
        "gone", committed(0, 2, at=OLD), state_name="Empty", subscribed=None, state_ts=OLD
    )
    result = plan(snapshot(lagging_but_gone, consumer_group("live", committed(0, 10))))
    assert [g.group_id for g in result.consumed.groups] == ["live"]
    assert deleted(result) == [(0, "consumed"), (5, "consumed")]


def test_empty_group_not_yet_expired_still_counts_and_reports_its_expiry() -> None:
    empty = consumer_group("idle", committed(0, 3), state_name="Empty", subscribed=None, state_ts=NOW - DAY)
    result = plan(snapshot(empty, consumer_group("live", committed(0, 15))))
    assert result.holder is not None
    assert result.holder.group_id == "idle"
    assert result.holder.expires_at_ms == NOW - DAY + 7 * DAY
    assert deleted(result) == []


def test_only_group_expired_means_no_group_counts() -> None:
    gone = consumer_group("gone", committed(0, 2, at=OLD), state_name="Empty", subscribed=None, state_ts=OLD)
    result = plan(snapshot(gone))
    assert result.consumed.status is ConsumedStatus.NO_GROUPS
    assert deleted(result) == []


def test_unreadable_group_sets_m_to_minus_one_and_forced_retention_still_applies() -> None:
    snap = snapshot(
        consumer_group("a", committed(0, 15)), errors=(GroupError("fraud", "COORDINATOR_NOT_AVAILABLE"),)
    )
    result = plan(snap, retention_ms=20 * DAY)
    assert result.consumed.status is ConsumedStatus.UNREADABLE_GROUPS
    assert result.consumed.min_offset == -1
    assert result.consumed.unreadable_groups == ("fraud",)
    assert deleted(result) == []
    forced = plan(snap, retention_ms=5 * DAY)
    assert deleted(forced) == [(0, "retention.ms"), (5, "retention.ms"), (10, "retention.ms")]


def test_standalone_consumer_counts_until_its_commit_expires() -> None:
    recent = consumer_group("solo", committed(0, 6), state_name="Empty", protocol_type=None, subscribed=None)
    assert plan(snapshot(recent)).consumed.min_offset == 6
    stale = consumer_group(
        "solo", committed(0, 6, at=OLD), state_name="Empty", protocol_type=None, subscribed=None
    )
    assert plan(snapshot(stale)).consumed.status is ConsumedStatus.NO_GROUPS


def test_unsubscribed_topic_offsets_expire_from_their_commit() -> None:
    moved_on = consumer_group("moved", committed(0, 1, at=OLD), subscribed=("other",))
    result = plan(snapshot(moved_on, consumer_group("live", committed(0, 10))))
    assert [g.group_id for g in result.consumed.groups] == ["live"]


def test_subscribed_group_without_an_offset_pins_the_partition() -> None:
    no_commit = consumer_group("new", committed(1, 99))  # an offset for partition 1 only
    result = plan(snapshot(no_commit, consumer_group("live", committed(0, 15))))
    assert result.consumed.min_offset == 0
    assert result.holder is not None
    assert result.holder.group_id == "new"
    assert result.holder.committed_offset is None
    assert deleted(result) == []


def test_group_counts_through_its_subscription_alone() -> None:
    subscribed_only = consumer_group("sub", subscribed=("t",))
    result = plan(snapshot(subscribed_only, consumer_group("live", committed(0, 15))))
    assert result.consumed.min_offset == 0


def test_required_group_missing_from_the_snapshot_pins_the_partition() -> None:
    result = plan(snapshot(consumer_group("live", committed(0, 15))), required_groups=("audit",))
    assert result.holder is not None
    assert result.holder.group_id == "audit"
    assert deleted(result) == []
    caught_up = snapshot(consumer_group("live", committed(0, 15)), consumer_group("audit", committed(0, 12)))
    assert deleted(plan(caught_up, required_groups=("audit",))) == [(0, "consumed"), (5, "consumed")]


def test_disabled_or_compact_only_topic_has_no_consumed_retention() -> None:
    snap = snapshot(consumer_group("a", committed(0, 15)))
    assert plan(snap, consumed_retention_enabled=False).consumed.status is ConsumedStatus.DISABLED
    compact = plan(snap, cleanup_policy="compact")
    assert compact.consumed.status is ConsumedStatus.DISABLED
    assert deleted(compact) == []


def test_no_snapshot_is_reported() -> None:
    result = plan(None)
    assert result.consumed.status is ConsumedStatus.NO_SNAPSHOT
    assert deleted(result) == []


def test_forced_retention_past_a_committed_offset_previews_unread_loss() -> None:
    snap = snapshot(consumer_group("slow", committed(0, 3)), consumer_group("fast", committed(0, 15)))
    result = plan(snap, retention_ms=5 * DAY)
    assert deleted(result)[-1] == (10, "retention.ms")
    assert [(loss.group_id, loss.committed_offset, loss.records) for loss in result.unread_loss] == [
        ("slow", 3, 12)
    ]


def test_future_timestamped_segment_blocks_time_retention_after_it() -> None:
    segments = [seg(0, 4, ts=OLD), seg(5, 9, ts=NOW + DAY), seg(10, 14, ts=OLD)]
    topic = topic_config(retention_ms=DAY)
    result = plan_partition(state(segments), topic, now_ms=NOW, index=None)
    assert [d.segment.base_offset for d in result.deletions] == [0]
    assert result.deletions[0].reason is DeletionReason.RETENTION_MS
