"""KIP-211 offset expiry as Kafka 4.x's group coordinator implements it (``OffsetExpirationConditionImpl``;
its test and ``ClassicGroupTest``)."""

from __future__ import annotations

import pytest
from kafka_segments.retention.expiry import ExpiryBase, expiry_base, is_subscribed, offset_expiry
from kafka_segments.state import CommittedOffset, GroupOffsets, GroupType

pytestmark = pytest.mark.unit


def group(
    state: str = "Empty",
    protocol_type: str | None = "consumer",
    *,
    state_ts: int | None = None,
    subscribed: tuple[str, ...] | None = None,
    group_type: GroupType = GroupType.CLASSIC,
) -> GroupOffsets:
    return GroupOffsets("g", state, protocol_type, state_ts, subscribed, (), group_type)


def offset(
    commit_ts: int | None = 500, expire_ts: int | None = None, *, pending: bool = False
) -> CommittedOffset:
    return CommittedOffset("t", 0, 42, commit_ts, expire_ts, pending)


@pytest.mark.parametrize(
    ("expire_ts", "now", "expired"),
    [
        pytest.param(1500, 1500, True, id="kafka_F1_explicit_expire_timestamp_reached"),
        pytest.param(1500, 499, False, id="kafka_F1_explicit_expire_timestamp_not_reached"),
        pytest.param(None, 1000, True, id="kafka_F1_commit_timestamp_plus_retention_is_expired_ge"),
        pytest.param(None, 999, False, id="kafka_F1_one_ms_before"),
        pytest.param(100, 100, True, id="explicit_expire_overrides_the_retention"),
    ],
)
def test_kafka_f1_is_offset_expired(expire_ts: int | None, now: int, expired: bool) -> None:
    standalone = group(protocol_type=None)
    result = offset_expiry(standalone, offset(500, expire_ts), now_ms=now, retention_ms=500)
    assert result.expired is expired


@pytest.mark.parametrize(
    ("grp", "now", "expired"),
    [
        pytest.param(group("Empty", None), 30_000, True, id="kafka_F1_no_protocol_type_commit_base"),
        pytest.param(
            group("Empty", "connect", state_ts=25_000), 34_999, False, id="kafka_F1_empty_state_ts_before"
        ),
        pytest.param(
            group("Empty", "connect", state_ts=25_000), 35_000, True, id="kafka_F1_empty_state_ts_reached"
        ),
        pytest.param(
            group("PreparingRebalance", "connect"), 10**12, False, id="kafka_F1_rebalancing_no_condition"
        ),
        pytest.param(
            group("Stable", "consumer", subscribed=("other",)),
            30_000,
            True,
            id="kafka_F1_stable_consumer_commit_base",
        ),
        pytest.param(
            group("CompletingRebalance", "consumer"), 10**12, False, id="kafka_F1_consumer_not_stable"
        ),
    ],
)
def test_kafka_f1_classic_group_offset_expiration_condition(
    grp: GroupOffsets, now: int, expired: bool
) -> None:
    result = offset_expiry(grp, offset(20_000), now_ms=now, retention_ms=10_000)
    assert result.expired is expired


@pytest.mark.parametrize(
    ("grp", "base"),
    [
        (group("Empty", "consumer", state_ts=1), ExpiryBase.STATE_TIMESTAMP),
        (group("Empty", None), ExpiryBase.COMMIT_TIMESTAMP),
        (group("Empty", ""), ExpiryBase.COMMIT_TIMESTAMP),
        (group("Stable", "consumer", subscribed=("t",)), ExpiryBase.COMMIT_TIMESTAMP),
        (group("Stable", "consumer"), None),
        (group("Stable", "connect", subscribed=("t",)), None),
        (group("PreparingRebalance", "consumer", subscribed=("t",)), None),
        (group("Dead", "consumer"), None),
        (group("Stable", "consumer", group_type=GroupType.CONSUMER), ExpiryBase.COMMIT_TIMESTAMP),
        (group("Reconciling", "consumer", group_type=GroupType.CONSUMER), ExpiryBase.COMMIT_TIMESTAMP),
    ],
)
def test_expiration_condition_by_group_type_and_state(grp: GroupOffsets, base: ExpiryBase | None) -> None:
    assert expiry_base(grp) is base


def test_empty_group_without_state_timestamp_falls_back_to_the_commit_timestamp() -> None:
    result = offset_expiry(group("Empty", "consumer"), offset(20_000), now_ms=30_000, retention_ms=10_000)
    assert result.expired
    assert result.expires_at_ms == 30_000


def test_stable_group_keeps_offsets_of_subscribed_topics() -> None:
    grp = group("Stable", "consumer", subscribed=("t",))
    result = offset_expiry(grp, offset(0), now_ms=10**12, retention_ms=1)
    assert not result.expired
    assert result.expires_at_ms is None


def test_kip848_group_expires_unsubscribed_topics_from_the_commit_timestamp() -> None:
    grp = group("Stable", "consumer", subscribed=("other",), group_type=GroupType.CONSUMER)
    assert offset_expiry(grp, offset(100), now_ms=200, retention_ms=100).expired
    subscribed = group("Stable", "consumer", subscribed=("t",), group_type=GroupType.CONSUMER)
    assert not offset_expiry(subscribed, offset(100), now_ms=10**12, retention_ms=100).expired


def test_kip848_group_with_unknown_subscription_keeps_its_offsets() -> None:
    grp = group("Stable", "consumer", group_type=GroupType.CONSUMER)
    assert not offset_expiry(grp, offset(100), now_ms=10**12, retention_ms=100).expired


def test_pending_transactional_offset_blocks_expiry() -> None:
    standalone = group("Empty", None)
    assert not offset_expiry(standalone, offset(0, pending=True), now_ms=10**12, retention_ms=1).expired


def test_unknown_commit_timestamp_never_expires() -> None:
    standalone = group("Empty", None)
    result = offset_expiry(standalone, offset(None), now_ms=10**12, retention_ms=1)
    assert not result.expired
    assert result.expires_at_ms is None


@pytest.mark.parametrize(
    ("grp", "subscribed"),
    [
        (group("Empty", "consumer", subscribed=("t",)), False),
        (group("Stable", "consumer"), True),
        (group("Stable", "connect"), False),
        (group("Stable", "consumer", subscribed=("x",)), False),
        (group("Stable", "consumer", subscribed=("t",)), True),
    ],
)
def test_is_subscribed_to_topic(grp: GroupOffsets, subscribed: bool) -> None:
    assert is_subscribed(grp, "t") is subscribed
