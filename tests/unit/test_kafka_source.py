"""The Kafka offsets source without a cluster: ``snapshot_from_kafka`` over a fake ``GroupAdmin`` (discovery,
describe, per-group errors, the offsets-only fallback), the confluent-kafka mapping over confluent-kafka's
own result objects, and the URI / settings parsing. The same code against a mock cluster:
``tests/interop/test_kafka_source_mock_cluster.py``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import ConsumerGroupState, KafkaError, KafkaException, TopicPartition
from confluent_kafka._model import ConsumerGroupType, Node
from confluent_kafka.admin import (
    ConsumerGroupDescription,
    ConsumerGroupListing,
    ListConsumerGroupsResult,
    MemberAssignment,
    MemberDescription,
)
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import InvalidTopicError
from kafka_segments.offsets.kafka_admin import (
    ConfluentGroupAdmin,
    GroupDescription,
    GroupDiscoveryError,
    GroupListing,
    KafkaAdminError,
    description_from_confluent,
    description_from_future,
    error_name,
    listing_from_confluent,
    offsets_from_partitions,
)
from kafka_segments.offsets.kafka_source import (
    InvalidKafkaSourceError,
    open_kafka_source,
    parse_kafka_uri,
    settings_from_env,
    snapshot_from_kafka,
)
from kafka_segments.retention.expiry import offset_expiry
from kafka_segments.state import (
    GROUP_STATES,
    CommittedOffset,
    GroupError,
    GroupOffsets,
    GroupType,
    OffsetSnapshot,
)

pytestmark = pytest.mark.unit

AT = 1_763_700_000_000
SOURCE = "kafka://broker:9092"
ORDERS = (CommittedOffset("orders", 0, 10), CommittedOffset("orders", 1, 11))


def stable(group_id: str, *topics: str, group_type: GroupType = GroupType.CLASSIC) -> GroupDescription:
    return GroupDescription(group_id, "Stable", "consumer", group_type, tuple(topics))


@dataclass
class FakeAdmin:
    """A ``GroupAdmin`` answering from dicts; every call is recorded."""

    listings: Sequence[GroupListing] | Exception = ()
    descriptions: Mapping[str, GroupDescription | GroupError] = field(default_factory=dict)
    offsets: Mapping[str, tuple[CommittedOffset, ...] | GroupError] = field(default_factory=dict)
    calls: list[tuple[Any, ...]] = field(default_factory=list)

    def list_groups(self) -> tuple[GroupListing, ...]:
        self.calls.append(("list",))
        if isinstance(self.listings, Exception):
            raise self.listings
        return tuple(self.listings)

    def describe_groups(self, group_ids: Sequence[str]) -> dict[str, GroupDescription | GroupError]:
        self.calls.append(("describe", list(group_ids)))
        return {g: self.descriptions.get(g, stable(g, "orders")) for g in group_ids}

    def list_offsets(
        self, group_ids: Sequence[str], *, topics: Sequence[str] | None
    ) -> dict[str, tuple[CommittedOffset, ...] | GroupError]:
        self.calls.append(("offsets", list(group_ids), topics))
        return {g: self.offsets.get(g, ORDERS) for g in group_ids}


def take(admin: FakeAdmin, **kwargs: Any) -> OffsetSnapshot:
    return snapshot_from_kafka(admin, taken_at_ms=AT, source=SOURCE, **kwargs)


# --- discovery ------------------------------------------------------------------------------------------


def test_groups_are_discovered_with_list_groups_when_not_named() -> None:
    listed = [GroupListing(g, "Stable", "consumer", GroupType.CLASSIC) for g in ("b", "a")]
    admin = FakeAdmin(listings=listed)
    got = take(admin)
    assert [g.group_id for g in got.groups] == ["a", "b"]
    assert admin.calls == [("list",), ("describe", ["a", "b"]), ("offsets", ["a", "b"], None)]


def test_named_groups_skip_list_groups_so_a_cluster_that_cannot_list_still_works() -> None:
    admin = FakeAdmin(
        listings=GroupDiscoveryError("unsupported", location=SOURCE, error="_UNSUPPORTED_FEATURE")
    )
    got = take(admin, groups=["b", "a", "b"], topics=["orders"])
    assert [g.group_id for g in got.groups] == ["a", "b"]
    assert admin.calls == [("describe", ["a", "b"]), ("offsets", ["a", "b"], ["orders"])]


def test_a_discovery_failure_raises_rather_than_snapshotting_a_partial_listing() -> None:
    admin = FakeAdmin(listings=GroupDiscoveryError("broker 2 down", location=SOURCE, error="_TRANSPORT"))
    with pytest.raises(GroupDiscoveryError) as caught:
        take(admin)
    assert caught.value.error == "_TRANSPORT"
    assert admin.calls == [("list",)]


@pytest.mark.parametrize("groups", [[], None])
def test_no_groups_gives_an_empty_snapshot_without_further_calls(groups: list[str] | None) -> None:
    admin = FakeAdmin()
    assert take(admin, groups=groups) == OffsetSnapshot(AT, SOURCE, ())
    assert admin.calls == ([] if groups == [] else [("list",)])


@pytest.mark.parametrize("groups", [[""], "billing"])
def test_group_ids_must_be_a_list_of_non_empty_ids(groups: Any) -> None:
    with pytest.raises(InvalidKafkaSourceError):
        take(FakeAdmin(), groups=groups)


def test_topics_must_be_kafka_topic_names() -> None:
    with pytest.raises(InvalidTopicError):
        take(FakeAdmin(), groups=["a"], topics=["bad/topic"])


# --- describe -------------------------------------------------------------------------------------------


def test_a_described_group_keeps_kafkas_state_protocol_type_type_and_assigned_topics() -> None:
    consumer_group = GroupDescription(
        "kip848", "Stable", "consumer", GroupType.CONSUMER, ("orders", "payments")
    )
    admin = FakeAdmin(descriptions={"kip848": consumer_group})
    got = take(admin, groups=["kip848"])
    assert got.groups == (
        GroupOffsets(
            group_id="kip848",
            state="Stable",
            protocol_type="consumer",
            state_timestamp_ms=None,  # Describe does not return it
            subscribed_topics=("orders", "payments"),
            offsets=ORDERS,
            group_type=GroupType.CONSUMER,
        ),
    )


def test_a_failed_describe_is_an_error_and_its_offsets_are_not_fetched() -> None:
    admin = FakeAdmin(descriptions={"fraud": GroupError("fraud", "COORDINATOR_NOT_AVAILABLE")})
    got = take(admin, groups=["billing", "fraud"])
    assert [g.group_id for g in got.groups] == ["billing"]
    assert got.errors == (GroupError("fraud", "COORDINATOR_NOT_AVAILABLE"),)
    assert admin.calls[-1] == ("offsets", ["billing"], None)


def test_when_every_describe_fails_no_offsets_are_fetched() -> None:
    admin = FakeAdmin(descriptions={"a": GroupError("a", "GROUP_AUTHORIZATION_FAILED")})
    got = take(admin, groups=["a"])
    assert got == OffsetSnapshot(AT, SOURCE, (), (GroupError("a", "GROUP_AUTHORIZATION_FAILED"),))
    assert [call[0] for call in admin.calls] == ["describe"]


def test_group_id_not_found_is_a_dead_group_with_whatever_offsets_remain() -> None:
    admin = FakeAdmin(descriptions={"gone": GroupError("gone", "GROUP_ID_NOT_FOUND")}, offsets={"gone": ()})
    got = take(admin, groups=["gone"])
    assert got.groups == (GroupOffsets("gone", "Dead", "", None, (), ()),)
    assert got.errors == ()


@pytest.mark.parametrize("error", ["_UNSUPPORTED_FEATURE", "UNSUPPORTED_VERSION"])
def test_unsupported_describe_of_a_named_group_falls_back_to_offsets_only_unknown_state(error: str) -> None:
    admin = FakeAdmin(descriptions={"billing": GroupError("billing", error)})
    got = take(admin, groups=["billing"])
    assert got.groups == (GroupOffsets("billing", "Unknown", "consumer", None, None, ORDERS),)
    assert got.errors == ()


def test_unsupported_describe_of_a_listed_group_keeps_what_list_groups_said() -> None:
    listed = [
        GroupListing("simple", "Empty", "", None),
        GroupListing("kip848", "Stable", "consumer", GroupType.CONSUMER),
    ]
    unsupported = {g.group_id: GroupError(g.group_id, "_UNSUPPORTED_FEATURE") for g in listed}
    got = take(FakeAdmin(listings=listed, descriptions=unsupported))
    assert got.groups == (
        GroupOffsets("kip848", "Stable", "consumer", None, None, ORDERS, GroupType.CONSUMER),
        GroupOffsets("simple", "Empty", "", None, None, ORDERS, GroupType.CLASSIC),
    )


# --- offsets --------------------------------------------------------------------------------------------


def test_a_failed_offset_fetch_is_an_error_and_the_other_groups_are_read() -> None:
    admin = FakeAdmin(offsets={"b": GroupError("b", "_TIMED_OUT")})
    got = take(admin, groups=["c", "b", "a"])
    assert [g.group_id for g in got.groups] == ["a", "c"]
    assert got.errors == (GroupError("b", "_TIMED_OUT"),)


def test_errors_are_sorted_by_group_whichever_call_failed() -> None:
    admin = FakeAdmin(
        descriptions={"z": GroupError("z", "GROUP_AUTHORIZATION_FAILED")},
        offsets={"a": GroupError("a", "NOT_COORDINATOR")},
    )
    got = take(admin, groups=["a", "z", "m"])
    assert got.errors == (GroupError("a", "NOT_COORDINATOR"), GroupError("z", "GROUP_AUTHORIZATION_FAILED"))


DESCRIPTIONS = st.builds(
    GroupDescription,
    group_id=st.just("g"),
    state=st.sampled_from(GROUP_STATES),
    protocol_type=st.sampled_from(["consumer", "", "connect"]),
    group_type=st.sampled_from(GroupType),
    assigned_topics=st.sampled_from([None, (), ("orders",), ("payments",)]),
)
OUTCOMES = st.one_of(
    DESCRIPTIONS,
    st.sampled_from([GroupError("g", "_UNSUPPORTED_FEATURE"), GroupError("g", "GROUP_ID_NOT_FOUND")]),
)


@given(outcome=OUTCOMES, now_ms=st.integers(0, 2**62), retention_ms=st.integers(0, 2**40))
def test_kip211_no_offset_of_an_admin_snapshot_ever_expires(
    outcome: GroupDescription | GroupError, now_ms: int, retention_ms: int
) -> None:
    """OffsetFetch returns no commit timestamps and Describe no state timestamp, so whatever KIP-211 base
    a group's state and type select, it is unknown: the offsets are kept (the safe reading)."""
    got = take(FakeAdmin(descriptions={"g": outcome}), groups=["g"])
    (group,) = got.groups
    for offset in group.offsets:
        assert not offset_expiry(group, offset, now_ms=now_ms, retention_ms=retention_ms).expired


# --- the confluent-kafka mapping ------------------------------------------------------------------------


def described(**kwargs: Any) -> ConsumerGroupDescription:
    values: dict[str, Any] = {
        "group_id": "billing",
        "is_simple_consumer_group": False,
        "members": [],
        "partition_assignor": "range",
        "state": ConsumerGroupState.STABLE,
        "coordinator": Node(1, "broker", 9092),
        "type": ConsumerGroupType.CLASSIC,
    }
    values.update(kwargs)
    return ConsumerGroupDescription(**values)


def member(topics: Sequence[str], target: Sequence[str] | None = None) -> MemberDescription:
    def assignment(names: Sequence[str]) -> MemberAssignment:
        return MemberAssignment([TopicPartition(t, 0) for t in names])

    return MemberDescription(
        "m",
        "client",
        "host",
        assignment(topics),
        target_assignment=None if target is None else assignment(target),
    )


def test_described_topics_are_the_union_of_current_and_target_assignments() -> None:
    group = described(members=[member(["payments", "orders"]), member(["orders"], target=["audit"])])
    assert description_from_confluent(group) == GroupDescription(
        "billing", "Stable", "consumer", GroupType.CLASSIC, ("audit", "orders", "payments")
    )


def test_a_simple_kip848_group_maps_to_an_empty_protocol_type_and_consumer_type() -> None:
    group = described(
        is_simple_consumer_group=True, state=ConsumerGroupState.EMPTY, type=ConsumerGroupType.CONSUMER
    )
    assert description_from_confluent(group) == GroupDescription(
        "billing", "Empty", "", GroupType.CONSUMER, ()
    )


@pytest.mark.parametrize(
    ("state", "name"),
    [
        (ConsumerGroupState.UNKNOWN, "Unknown"),
        (ConsumerGroupState.PREPARING_REBALANCING, "PreparingRebalance"),
        (ConsumerGroupState.COMPLETING_REBALANCING, "CompletingRebalance"),
        (ConsumerGroupState.STABLE, "Stable"),
        (ConsumerGroupState.DEAD, "Dead"),
        (ConsumerGroupState.EMPTY, "Empty"),
        (None, "Unknown"),
    ],
)
def test_group_states_map_to_kafkas_group_state_names(state: ConsumerGroupState | None, name: str) -> None:
    assert description_from_confluent(described(state=state, type=ConsumerGroupType.UNKNOWN)).state == name
    assert name in GROUP_STATES


def failed(error: KafkaError) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_exception(KafkaException(error))
    return future


def test_a_describe_error_maps_to_a_group_error_named_by_kafka() -> None:
    future = failed(KafkaError(KafkaError.COORDINATOR_NOT_AVAILABLE))
    assert description_from_future("g", future, timeout_s=1) == GroupError("g", "COORDINATOR_NOT_AVAILABLE")


def test_a_group_of_another_protocol_is_described_as_unknown_with_that_protocol() -> None:
    future = failed(
        KafkaError(KafkaError._INVALID_ARG, "GroupId connect-cluster is not a consumer group (connect).")
    )
    assert description_from_future("connect-cluster", future, timeout_s=1) == GroupDescription(
        "connect-cluster", "Unknown", "connect", GroupType.CLASSIC, None
    )


def test_another_invalid_argument_stays_an_error() -> None:
    future = failed(KafkaError(KafkaError._INVALID_ARG, "something else"))
    assert description_from_future("g", future, timeout_s=1) == GroupError("g", "_INVALID_ARG")


def test_a_future_that_never_completes_is_a_timeout() -> None:
    assert description_from_future("g", Future(), timeout_s=0.01) == GroupError("g", "_TIMED_OUT")


def test_a_successful_describe_future_is_mapped() -> None:
    future: Future[Any] = Future()
    future.set_result(described())
    assert description_from_future("billing", future, timeout_s=1) == GroupDescription(
        "billing", "Stable", "consumer", GroupType.CLASSIC, ()
    )


def partition(topic: str, number: int, offset: int, error: KafkaError | None = None) -> Any:
    return SimpleNamespace(topic=topic, partition=number, offset=offset, error=error)


def test_negative_offsets_mean_no_commit_and_are_skipped() -> None:
    answer = [
        partition("orders", 1, 11),
        partition("orders", 2, -1001),
        partition("audit", 0, 0),
        partition("x", 0, -1),
    ]
    assert offsets_from_partitions("g", answer) == (
        CommittedOffset("audit", 0, 0),
        CommittedOffset("orders", 1, 11),
    )


def test_a_partition_error_fails_the_whole_group() -> None:
    answer = [
        partition("orders", 0, 5),
        partition("orders", 1, -1, KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)),
    ]
    assert offsets_from_partitions("g", answer) == GroupError("g", "TOPIC_AUTHORIZATION_FAILED")


def test_listings_map_state_simple_flag_and_type() -> None:
    listing = ConsumerGroupListing("g", True, ConsumerGroupState.EMPTY, ConsumerGroupType.CLASSIC)
    assert listing_from_confluent(listing) == GroupListing("g", "Empty", "", GroupType.CLASSIC)
    bare = ConsumerGroupListing("h", False)
    assert listing_from_confluent(bare) == GroupListing("h", "Unknown", "consumer", None)


def test_error_names() -> None:
    assert error_name(KafkaException(KafkaError(KafkaError._TRANSPORT))) == "_TRANSPORT"
    assert error_name(TimeoutError()) == "_TIMED_OUT"
    assert error_name(ValueError("x")) == "ValueError"


# --- ConfluentGroupAdmin over a fake AdminClient ----------------------------------------------------------


@dataclass
class FakeClient:
    """The few AdminClient calls ConfluentGroupAdmin makes, answering canned results."""

    listing: ListConsumerGroupsResult | Exception = field(default_factory=ListConsumerGroupsResult)
    topics: dict[str, Any] | Exception = field(default_factory=dict)
    describe_raises: Exception | None = None

    def list_consumer_groups(self, **_: Any) -> Future[Any]:
        future: Future[Any] = Future()
        if isinstance(self.listing, Exception):
            future.set_exception(self.listing)
        else:
            future.set_result(self.listing)
        return future

    def describe_consumer_groups(self, group_ids: list[str], **_: Any) -> dict[str, Future[Any]]:
        if self.describe_raises is not None:
            raise self.describe_raises
        return {g: failed(KafkaError(KafkaError._UNSUPPORTED_FEATURE)) for g in group_ids}

    def list_topics(self, **_: Any) -> Any:
        if isinstance(self.topics, Exception):
            raise self.topics
        return SimpleNamespace(topics=self.topics)


def confluent_admin(client: FakeClient) -> ConfluentGroupAdmin:
    return ConfluentGroupAdmin({"bootstrap.servers": "broker:9092"}, location=SOURCE, client=client)


def topic(partitions: Sequence[int], error: KafkaError | None = None) -> Any:
    return SimpleNamespace(partitions={p: object() for p in partitions}, error=error)


def test_list_groups_sorts_the_listing() -> None:
    listing = ListConsumerGroupsResult(
        valid=[ConsumerGroupListing("b", False), ConsumerGroupListing("a", True)], errors=[]
    )
    assert [g.group_id for g in confluent_admin(FakeClient(listing=listing)).list_groups()] == ["a", "b"]


def test_list_groups_fails_when_any_broker_failed_to_answer() -> None:
    listing = ListConsumerGroupsResult(
        valid=[ConsumerGroupListing("a", False)], errors=[KafkaError(KafkaError._TRANSPORT)]
    )
    with pytest.raises(GroupDiscoveryError, match="name the groups explicitly") as caught:
        confluent_admin(FakeClient(listing=listing)).list_groups()
    assert (caught.value.error, caught.value.location) == ("_TRANSPORT", SOURCE)


def test_list_groups_fails_when_the_call_fails() -> None:
    client = FakeClient(listing=KafkaException(KafkaError(KafkaError._TIMED_OUT)))
    with pytest.raises(GroupDiscoveryError) as caught:
        confluent_admin(client).list_groups()
    assert caught.value.error == "_TIMED_OUT"


def test_a_describe_call_that_fails_outright_fails_every_group() -> None:
    client = FakeClient(describe_raises=KafkaException(KafkaError(KafkaError._TRANSPORT)))
    assert confluent_admin(client).describe_groups(["a", "b"]) == {
        "a": GroupError("a", "_TRANSPORT"),
        "b": GroupError("b", "_TRANSPORT"),
    }


def test_nothing_asked_nothing_called() -> None:
    admin = confluent_admin(FakeClient(topics=RuntimeError("must not be called")))
    assert admin.describe_groups([]) == {}
    assert admin.list_offsets([], topics=None) == {}


def test_partitions_come_from_metadata_and_unknown_topics_have_none() -> None:
    leaderless = KafkaError(KafkaError.LEADER_NOT_AVAILABLE)
    client = FakeClient(topics={"orders": topic([1, 0]), "audit": topic([0], error=leaderless)})
    admin = confluent_admin(client)
    assert admin.partitions(["orders", "gone", "audit"]) == [("audit", 0), ("orders", 0), ("orders", 1)]
    assert admin.partitions(None) == [("audit", 0), ("orders", 0), ("orders", 1)]
    assert admin.list_offsets(["g"], topics=["gone"]) == {"g": ()}


def test_a_topic_whose_partitions_cannot_be_read_fails_the_snapshot() -> None:
    client = FakeClient(topics={"orders": topic([], error=KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))})
    with pytest.raises(KafkaAdminError, match="topic orders") as caught:
        confluent_admin(client).partitions(["orders"])
    assert caught.value.error == "TOPIC_AUTHORIZATION_FAILED"


def test_unreadable_metadata_fails_the_snapshot() -> None:
    client = FakeClient(topics=KafkaException(KafkaError(KafkaError._TRANSPORT)))
    with pytest.raises(KafkaAdminError, match="cannot read topic metadata") as caught:
        confluent_admin(client).list_offsets(["g"], topics=["orders"])
    assert caught.value.error == "_TRANSPORT"


def test_close_drops_the_client() -> None:
    admin = confluent_admin(FakeClient())
    admin.close()
    assert admin._client is None


# --- URI and settings -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "servers"),
    [
        ("kafka://broker:9092", "broker:9092"),
        ("kafka://a.example.com:9092,b-2:19092/", "a.example.com:9092,b-2:19092"),
        ("KAFKA://10.0.0.1:1", "10.0.0.1:1"),
        ("kafka://[::1]:9092", "[::1]:9092"),
    ],
)
def test_kafka_uris_name_the_bootstrap_servers(uri: str, servers: str) -> None:
    assert parse_kafka_uri(uri) == servers


@pytest.mark.parametrize(
    "uri",
    [
        "broker:9092",
        "http://broker:9092",
        "kafka://",
        "kafka://broker",
        "kafka://broker:0",
        "kafka://broker:65536",
        "kafka://a:1,,b:2",
        "kafka://broker:9092/path",
        "kafka://user@broker:9092",
    ],
)
def test_malformed_kafka_uris_are_refused(uri: str) -> None:
    with pytest.raises(InvalidKafkaSourceError):
        parse_kafka_uri(uri)


def test_settings_come_from_the_environment_and_the_mapping_overrides_them() -> None:
    environ = {
        "KAFKA_SEGMENTS_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
        "KAFKA_SEGMENTS_KAFKA_SASL_MECHANISM": "PLAIN",
        "KAFKA_SEGMENTS_KAFKA_": "ignored",
        "KAFKA_SEGMENTS_LAKE": "ignored",
    }
    assert settings_from_env(environ) == {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"}
    admin = open_kafka_source("kafka://b:9092", environ=environ, config={"sasl.mechanism": "SCRAM-SHA-512"})
    assert admin.location == "kafka://b:9092"
    assert admin._config == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "bootstrap.servers": "b:9092",
    }


@pytest.mark.parametrize(
    ("environ", "config"),
    [({"KAFKA_SEGMENTS_KAFKA_BOOTSTRAP_SERVERS": "x:1"}, None), ({}, {"bootstrap.servers": "x:1"})],
)
def test_bootstrap_servers_come_only_from_the_uri(
    environ: dict[str, str], config: dict[str, str] | None
) -> None:
    with pytest.raises(InvalidKafkaSourceError, match=r"bootstrap\.servers"):
        open_kafka_source("kafka://b:9092", environ=environ, config=config)


def test_opening_a_source_loads_no_kafka_client() -> None:
    code = (
        "import sys; from kafka_segments.offsets.kafka_source import open_kafka_source;"
        "open_kafka_source('kafka://b:9092', environ={});"
        "print(sorted(m for m in sys.modules if m.startswith('confluent_kafka')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
