"""The three Admin calls an offsets snapshot needs from a live cluster (ListGroups, Describe,
OffsetFetch), and a confluent-kafka implementation; ``GroupAdmin`` is the seam the tests fake.

A broker that does not answer ListGroups fails the whole listing (``GroupDiscoveryError``) rather than
silently missing its groups. Describe returns no subscriptions nor state timestamps, OffsetFetch no commit
timestamps. Per-group failures are values (``GroupError`` with Kafka's error name; ``_``-names are
librdkafka's client-side errors), so one unreachable coordinator does not hide the other groups."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from kafka_segments.errors import LocatedError
from kafka_segments.state import CommittedOffset, GroupError, GroupType

if TYPE_CHECKING:
    from confluent_kafka import TopicPartition as ConfluentPartition
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.admin._group import ConsumerGroupDescription

OffsetsVia = Literal["consumer", "admin"]
"""How ``ConfluentGroupAdmin`` reads committed offsets (see its docstring)."""

_GRACE_S = 10.0
"""Extra wait for a future beyond the request timeout librdkafka enforces itself."""

_STATE_NAMES = {
    "UNKNOWN": "Unknown",
    "PREPARING_REBALANCING": "PreparingRebalance",
    "COMPLETING_REBALANCING": "CompletingRebalance",
    "STABLE": "Stable",
    "DEAD": "Dead",
    "EMPTY": "Empty",
}
"""confluent-kafka's ``ConsumerGroupState`` members -> Kafka's ``GroupState`` names. librdkafka 2.16 knows
only the classic names: a KIP-848 group in Assigning/Reconciling/NotReady reads as Unknown."""

_NOT_A_CONSUMER_GROUP = re.compile(r"is not a consumer group \((?P<protocol>[^)]*)\)")
"""librdkafka refuses to describe a classic group of another protocol (Connect workers, Schema Registry) with
``_INVALID_ARG`` "GroupId <id> is not a consumer group (<protocol type>)", as the Java client does."""


class KafkaAdminError(LocatedError):
    """A cluster-wide Admin call failed (listing groups, reading topic metadata), so no snapshot is possible.

    Attributes:
        error: Kafka's (or librdkafka's) error name, e.g. ``_TIMED_OUT``.
    """

    def __init__(self, reason: str, *, location: str, error: str) -> None:
        self.error = error
        super().__init__(reason, location=location)


class GroupDiscoveryError(KafkaAdminError):
    """The cluster's consumer groups could not be listed completely (ListGroups failed on some broker, or the
    cluster or proxy does not support it). Pass the group ids explicitly to skip discovery."""


@dataclass(frozen=True, slots=True)
class GroupListing:
    """One group as ListGroups shows it."""

    group_id: str
    state: str
    """Kafka's ``GroupState`` name (``Unknown`` when the broker does not say)."""
    protocol_type: str
    """``""`` for a simple group (standalone consumers); ``consumer`` otherwise (ListGroups through
    librdkafka only tells whether the protocol type is empty)."""
    group_type: GroupType | None
    """``None`` when the broker does not say (ListGroups before v5)."""


@dataclass(frozen=True, slots=True)
class GroupDescription:
    """One group as Describe shows it."""

    group_id: str
    state: str
    """Kafka's ``GroupState`` name."""
    protocol_type: str
    """``consumer``, ``""`` for a simple group, or another protocol (``connect``)."""
    group_type: GroupType
    assigned_topics: tuple[str, ...] | None
    """Sorted topics of the members' current and target assignments; ``None`` for other protocols (their
    assignments are not consumer assignments)."""

    @property
    def is_simple_consumer_group(self) -> bool:
        return self.protocol_type == ""


class GroupAdmin(Protocol):
    """The Admin calls a snapshot needs. Results hold one entry per requested group id."""

    def list_groups(self) -> tuple[GroupListing, ...]:
        """Every group of the cluster. Raises ``GroupDiscoveryError`` when the listing may be incomplete."""
        ...

    def describe_groups(self, group_ids: Sequence[str]) -> Mapping[str, GroupDescription | GroupError]:
        """Describe each group; a group that cannot be described maps to its ``GroupError``."""
        ...

    def list_offsets(
        self, group_ids: Sequence[str], *, topics: Sequence[str] | None
    ) -> Mapping[str, tuple[CommittedOffset, ...] | GroupError]:
        """Each group's committed offsets (sorted, no negative offsets), for the partitions of ``topics``,
        or of every topic when ``None``. Raises ``KafkaAdminError`` when the partitions cannot be read."""
        ...


def error_name(exc: BaseException) -> str:
    """Kafka's name for a failed Admin or consumer call (``_TIMED_OUT`` when the future itself timed out)."""
    from confluent_kafka import KafkaError, KafkaException

    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0].name()
    if isinstance(exc, TimeoutError):
        return "_TIMED_OUT"
    return type(exc).__name__


def description_from_future(
    group_id: str, future: Future[Any], *, timeout_s: float
) -> GroupDescription | GroupError:
    """The outcome of one ``describe_consumer_groups`` future."""
    from confluent_kafka import KafkaException

    try:
        described = future.result(timeout=timeout_s)
    except (KafkaException, TimeoutError) as exc:
        protocol = _other_protocol(exc)
        if protocol is not None:
            return GroupDescription(group_id, "Unknown", protocol, GroupType.CLASSIC, None)
        return GroupError(group_id, error_name(exc))
    return description_from_confluent(described)


def _other_protocol(exc: BaseException) -> str | None:
    """The protocol type of a group librdkafka would not describe ("not a consumer group"), else ``None``."""
    if error_name(exc) != "_INVALID_ARG":
        return None
    match = _NOT_A_CONSUMER_GROUP.search(exc.args[0].str())
    return match.group("protocol") if match else None


def description_from_confluent(described: ConsumerGroupDescription) -> GroupDescription:
    """Map confluent-kafka's ``ConsumerGroupDescription`` (state, type, members' assignments)."""
    topics: set[str] = set()
    for member in described.members:
        topics.update(tp.topic for tp in member.assignment.topic_partitions)
        if member.target_assignment is not None:
            topics.update(tp.topic for tp in member.target_assignment.topic_partitions)
    return GroupDescription(
        group_id=described.group_id,
        state=_state_name(getattr(described, "state", None)),
        protocol_type="" if described.is_simple_consumer_group else "consumer",
        group_type=_group_type(getattr(described, "type", None)) or GroupType.CLASSIC,
        assigned_topics=tuple(sorted(topics)),
    )


def offsets_from_partitions(
    group_id: str, partitions: Sequence[ConfluentPartition]
) -> tuple[CommittedOffset, ...] | GroupError:
    """A group's committed offsets from an OffsetFetch answer. A negative offset means "no commit" and is
    skipped (the Admin client maps it to null). A partition-level error fails the whole group: skipping the
    partition, as the Java Admin client does, would let consumed retention ignore the group there."""
    offsets = []
    for tp in partitions:
        if tp.error is not None:
            return GroupError(group_id, tp.error.name())
        if tp.offset >= 0:
            offsets.append(CommittedOffset(tp.topic, tp.partition, tp.offset))
    return tuple(sorted(offsets, key=lambda o: (o.topic, o.partition)))


def listing_from_confluent(listing: Any) -> GroupListing:
    """Map confluent-kafka's ``ConsumerGroupListing``."""
    return GroupListing(
        group_id=listing.group_id,
        state=_state_name(getattr(listing, "state", None)),
        protocol_type="" if listing.is_simple_consumer_group else "consumer",
        group_type=_group_type(getattr(listing, "type", None)),
    )


def _state_name(state: Any) -> str:
    return _STATE_NAMES.get(getattr(state, "name", ""), "Unknown")


def _group_type(kind: Any) -> GroupType | None:
    name = getattr(kind, "name", "")
    return {"CLASSIC": GroupType.CLASSIC, "CONSUMER": GroupType.CONSUMER}.get(name)


class ConfluentGroupAdmin:
    """``GroupAdmin`` over confluent-kafka's ``AdminClient`` (librdkafka); connects on first use.

    ``offsets_via``: ``"consumer"`` (default) reads offsets with one short-lived, never-subscribing
    ``Consumer`` per group; ``"admin"`` uses ``AdminClient.list_consumer_group_offsets``, which in librdkafka
    2.4-2.16 crashes the process on a NOT_COORDINATOR answer (librdkafka issue #5040), as during a rolling
    restart. Both read the last *stable* committed offset. ``timeout_s`` bounds each request,
    ``max_in_flight`` the groups read at once; ``client`` replaces the ``AdminClient`` built from ``config``.
    """

    def __init__(
        self,
        config: Mapping[str, str],
        *,
        location: str,
        timeout_s: float = 30.0,
        offsets_via: OffsetsVia = "consumer",
        max_in_flight: int = 8,
        client: AdminClient | None = None,
    ) -> None:
        self._config = dict(config)
        self._location = location
        self._timeout_s = timeout_s
        self._offsets_via = offsets_via
        self._max_in_flight = max_in_flight
        self._client = client

    @property
    def location(self) -> str:
        """The cluster, as ``kafka://host:port[,host:port]``."""
        return self._location

    def close(self) -> None:
        """Drop the Admin client (librdkafka destroys it when it is garbage collected)."""
        self._client = None

    def _admin(self) -> AdminClient:
        if self._client is None:
            from confluent_kafka.admin import AdminClient

            settings: dict[str, str | int | float | bool] = dict(self._config)
            self._client = AdminClient(settings)
        return self._client

    def list_groups(self) -> tuple[GroupListing, ...]:
        from confluent_kafka import KafkaException

        try:
            future = self._admin().list_consumer_groups(request_timeout=self._timeout_s)
            result = future.result(timeout=self._timeout_s + _GRACE_S)
        except (KafkaException, TimeoutError) as exc:
            raise self._discovery_error(error_name(exc), str(exc)) from exc
        if result.errors:
            first = result.errors[0]  # a KafkaError per broker that failed
            raise self._discovery_error(first.name(), first.str())
        listings = (listing_from_confluent(g) for g in result.valid or ())
        return tuple(sorted(listings, key=lambda g: g.group_id))

    def _discovery_error(self, name: str, detail: str) -> GroupDiscoveryError:
        return GroupDiscoveryError(
            f"cannot list consumer groups ({name}: {detail}); name the groups explicitly to skip discovery",
            location=self._location,
            error=name,
        )

    def describe_groups(self, group_ids: Sequence[str]) -> dict[str, GroupDescription | GroupError]:
        from confluent_kafka import KafkaException

        if not group_ids:
            return {}
        try:
            futures = self._admin().describe_consumer_groups(list(group_ids), request_timeout=self._timeout_s)
        except KafkaException as exc:
            return {g: GroupError(g, error_name(exc)) for g in group_ids}
        wait = self._timeout_s + _GRACE_S
        return {g: description_from_future(g, futures[g], timeout_s=wait) for g in group_ids}

    def list_offsets(
        self, group_ids: Sequence[str], *, topics: Sequence[str] | None
    ) -> dict[str, tuple[CommittedOffset, ...] | GroupError]:
        if not group_ids:
            return {}
        self._admin()  # created here, not racing in the worker threads
        if self._offsets_via == "admin" and topics is None:
            return self._in_parallel(group_ids, lambda g: self._offsets_via_admin(g, None))
        partitions = self.partitions(topics)
        if not partitions:
            return dict.fromkeys(group_ids, ())
        fetch = self._offsets_via_admin if self._offsets_via == "admin" else self._offsets_via_consumer
        return self._in_parallel(group_ids, lambda g: fetch(g, partitions))

    def partitions(self, topics: Sequence[str] | None) -> list[tuple[str, int]]:
        """The partitions of ``topics`` (every topic when ``None``) from cluster metadata. A topic the
        metadata does not show (deleted, or not visible to this principal) has none."""
        from confluent_kafka import KafkaException

        try:
            metadata = self._admin().list_topics(timeout=self._timeout_s)
        except KafkaException as exc:
            raise KafkaAdminError(
                f"cannot read topic metadata: {exc}", location=self._location, error=error_name(exc)
            ) from exc
        names = sorted(metadata.topics) if topics is None else sorted(set(topics) & set(metadata.topics))
        found: list[tuple[str, int]] = []
        for name in names:
            topic = metadata.topics[name]
            if topic.error is not None and not topic.partitions:
                raise KafkaAdminError(
                    f"cannot read the partitions of topic {name}: {topic.error.str()}",
                    location=self._location,
                    error=topic.error.name(),
                )
            found.extend((name, p) for p in sorted(topic.partitions))
        return found

    def _in_parallel(
        self, group_ids: Sequence[str], fetch: Callable[[str], tuple[CommittedOffset, ...] | GroupError]
    ) -> dict[str, tuple[CommittedOffset, ...] | GroupError]:
        with ThreadPoolExecutor(max_workers=self._max_in_flight) as pool:
            return dict(zip(group_ids, pool.map(fetch, group_ids), strict=True))

    def _offsets_via_consumer(
        self, group_id: str, partitions: Sequence[tuple[str, int]]
    ) -> tuple[CommittedOffset, ...] | GroupError:
        from confluent_kafka import Consumer, KafkaException, TopicPartition

        settings: dict[str, Any] = {
            **self._config,
            "group.id": group_id,
            "enable.auto.commit": False,
            "isolation.level": "read_uncommitted",
        }
        consumer = Consumer(settings)
        try:
            answer = consumer.committed(
                [TopicPartition(t, p) for t, p in partitions], timeout=self._timeout_s
            )
        except KafkaException as exc:
            return GroupError(group_id, error_name(exc))
        finally:
            consumer.close()
        return offsets_from_partitions(group_id, answer)

    def _offsets_via_admin(
        self, group_id: str, partitions: Sequence[tuple[str, int]] | None
    ) -> tuple[CommittedOffset, ...] | GroupError:
        from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition

        wanted = None if partitions is None else [TopicPartition(t, p) for t, p in partitions]
        try:
            futures = self._admin().list_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(group_id, wanted)], request_timeout=self._timeout_s
            )
            answer = futures[group_id].result(timeout=self._timeout_s + _GRACE_S)
        except (KafkaException, TimeoutError) as exc:
            return GroupError(group_id, error_name(exc))
        return offsets_from_partitions(group_id, answer.topic_partitions or ())
