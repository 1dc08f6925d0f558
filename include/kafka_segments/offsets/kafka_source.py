"""A consumer-offset snapshot (docs/retention.md, "Consumer-offset snapshots") from a running cluster, through
the Admin API (``GroupAdmin``; ``open_kafka_source("kafka://host:port")`` gives confluent-kafka's).

What the Admin API cannot tell, for KIP-211 expiry (``OffsetExpirationConditionImpl``): commit and state
timestamps are ``None``, so such offsets never expire in this snapshot (that can only hold consumed retention
back, never delete unread data); ``subscribed_topics`` is the union of the assigned topics (a lower bound,
exact for Empty groups and the standard assignors); pending transactional commits are not waited for.

Failures: a group whose describe or offset fetch fails goes into ``errors`` with Kafka's error name (consumed
retention then deletes nothing: KIP-68's M = −1). ``GROUP_ID_NOT_FOUND`` records the group ``Dead``. A
Describe that is unsupported (librdkafka's mock cluster, some proxies) records the group offsets-only, state
``Unknown``: safe, since none of its offsets expire; erroring instead would disable consumed retention on such
a cluster for good. ListGroups failing on any broker raises ``GroupDiscoveryError`` (passing ``groups`` skips
it); unreadable topic metadata raises ``KafkaAdminError``.

Connection: ``bootstrap.servers`` from the URI; other librdkafka properties from
``KAFKA_SEGMENTS_KAFKA_<NAME>`` (``KAFKA_SEGMENTS_KAFKA_SECURITY_PROTOCOL`` → ``security.protocol``),
overridden by the ``config`` mapping."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from kafka_segments.errors import KafkaSegmentsError
from kafka_segments.offsets.kafka_admin import (
    ConfluentGroupAdmin,
    GroupAdmin,
    GroupDescription,
    GroupListing,
    OffsetsVia,
)
from kafka_segments.redaction import redact_uri
from kafka_segments.state import GroupError, GroupOffsets, GroupType, OffsetSnapshot
from kafka_segments.topic_partition import validate_topic_name

KAFKA_SCHEME = "kafka://"
ENV_PREFIX = "KAFKA_SEGMENTS_KAFKA_"
DESCRIBE_UNSUPPORTED = frozenset({"_UNSUPPORTED_FEATURE", "UNSUPPORTED_VERSION"})
GROUP_ID_NOT_FOUND = "GROUP_ID_NOT_FOUND"

_HOST_PORT = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(?P<port>[0-9]{1,5})")


class InvalidKafkaSourceError(KafkaSegmentsError, ValueError):
    """A Kafka source URI, connection setting or group list is not valid."""


def snapshot_from_kafka(
    admin: GroupAdmin,
    *,
    taken_at_ms: int,
    source: str,
    groups: Sequence[str] | None = None,
    topics: Sequence[str] | None = None,
) -> OffsetSnapshot:
    """Every group's state and committed offsets, read through ``admin`` (see the module docstring for what
    is unknown and how failures are recorded).

    ``groups``: read only these groups, without ListGroups; ``None`` lists them. ``topics``: read only the
    offsets of these topics' partitions; ``None`` reads all.

    Raises:
        GroupDiscoveryError: the groups could not be listed (name them).
        KafkaAdminError: the topics' partitions could not be read.
        InvalidKafkaSourceError: an empty group id, or ``groups`` given as one string.
        InvalidTopicError: a topic name Kafka would reject.
    """
    for topic in topics or ():
        validate_topic_name(topic)
    listings: dict[str, GroupListing] = {}
    if groups is None:
        listings = {listing.group_id: listing for listing in admin.list_groups()}
    group_ids = sorted(listings) if groups is None else _group_ids(groups)
    shapes, errors = _describe(admin, group_ids, listings)
    offsets = admin.list_offsets(sorted(shapes), topics=topics) if shapes else {}
    read: list[GroupOffsets] = []
    for group_id, shape in sorted(shapes.items()):
        committed = offsets[group_id]
        if isinstance(committed, GroupError):
            errors.append(committed)
        else:
            read.append(replace(shape, offsets=committed))
    return OffsetSnapshot(
        taken_at_ms=taken_at_ms,
        source=source,
        groups=tuple(read),
        errors=tuple(sorted(errors, key=lambda e: e.group_id)),
    )


def _describe(
    admin: GroupAdmin, group_ids: Sequence[str], listings: Mapping[str, GroupListing]
) -> tuple[dict[str, GroupOffsets], list[GroupError]]:
    """The readable groups' state fields (offsets still empty), and the groups that failed."""
    descriptions = admin.describe_groups(group_ids) if group_ids else {}
    shapes: dict[str, GroupOffsets] = {}
    errors: list[GroupError] = []
    for group_id in group_ids:
        shape = _shape(group_id, descriptions[group_id], listings.get(group_id))
        if isinstance(shape, GroupError):
            errors.append(shape)
        else:
            shapes[group_id] = shape
    return shapes, errors


def _group_ids(groups: Sequence[str]) -> list[str]:
    if isinstance(groups, str):
        raise InvalidKafkaSourceError(f"groups must be a list of group ids, not the string {groups!r}")
    if any(not group for group in groups):
        raise InvalidKafkaSourceError("empty consumer group id")
    return sorted(set(groups))


def _shape(
    group_id: str, described: GroupDescription | GroupError, listing: GroupListing | None
) -> GroupOffsets | GroupError:
    """The group's state fields (offsets come later), or its error."""
    if isinstance(described, GroupDescription):
        return GroupOffsets(
            group_id=group_id,
            state=described.state,
            protocol_type=described.protocol_type,
            state_timestamp_ms=None,
            subscribed_topics=described.assigned_topics,
            offsets=(),
            group_type=described.group_type,
        )
    if described.error == GROUP_ID_NOT_FOUND:
        return _state_only(group_id, state="Dead", protocol_type="", subscribed_topics=())
    if described.error in DESCRIBE_UNSUPPORTED:
        return _offsets_only(group_id, listing)
    return described


def _offsets_only(group_id: str, listing: GroupListing | None) -> GroupOffsets:
    """A group Describe is not available for: what ListGroups said, else ``Unknown`` ``consumer``."""
    if listing is None:
        return _state_only(group_id, state="Unknown", protocol_type="consumer", subscribed_topics=None)
    return _state_only(
        group_id,
        state=listing.state,
        protocol_type=listing.protocol_type,
        subscribed_topics=None,
        group_type=listing.group_type or GroupType.CLASSIC,
    )


def _state_only(
    group_id: str,
    *,
    state: str,
    protocol_type: str,
    subscribed_topics: tuple[str, ...] | None,
    group_type: GroupType = GroupType.CLASSIC,
) -> GroupOffsets:
    return GroupOffsets(
        group_id=group_id,
        state=state,
        protocol_type=protocol_type,
        state_timestamp_ms=None,
        subscribed_topics=subscribed_topics,
        offsets=(),
        group_type=group_type,
    )


def open_kafka_source(
    uri: str,
    *,
    config: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
    offsets_via: OffsetsVia = "consumer",
) -> ConfluentGroupAdmin:
    """The cluster ``kafka://host:port[,host:port...]`` names, as a ``GroupAdmin`` (connects on first use).

    ``environ`` (default ``os.environ``) supplies ``KAFKA_SEGMENTS_KAFKA_*`` settings; ``config`` overrides
    them. ``timeout_s`` bounds each request; ``offsets_via`` picks how offsets are read (see
    ``ConfluentGroupAdmin``: a consumer per group by default, which survives coordinator moves).

    Raises:
        InvalidKafkaSourceError: a malformed URI, or ``bootstrap.servers`` set outside the URI.
    """
    bootstrap = parse_kafka_uri(uri)
    settings = settings_from_env(os.environ if environ is None else environ)
    settings.update(config or {})
    if "bootstrap.servers" in settings:
        raise InvalidKafkaSourceError(f"{uri}: bootstrap.servers comes from the URI; do not set it elsewhere")
    settings["bootstrap.servers"] = bootstrap
    return ConfluentGroupAdmin(
        settings, location=KAFKA_SCHEME + bootstrap, timeout_s=timeout_s, offsets_via=offsets_via
    )


def parse_kafka_uri(uri: str) -> str:
    """The ``bootstrap.servers`` list of ``kafka://host:port[,host:port...]`` (``[v6addr]:port`` too)."""
    if not uri.lower().startswith(KAFKA_SCHEME):
        raise InvalidKafkaSourceError(
            f"Kafka source {redact_uri(uri)!r}: expected kafka://host:port[,host:port]"
        )
    if "@" in uri:
        raise InvalidKafkaSourceError(
            f"Kafka source {redact_uri(uri)!r}: credentials in the URI are not allowed (set them with "
            f"{ENV_PREFIX}SASL_USERNAME / {ENV_PREFIX}SASL_PASSWORD)"
        )
    servers = uri[len(KAFKA_SCHEME) :].rstrip("/").split(",")
    for server in servers:
        match = _HOST_PORT.fullmatch(server)
        if match is None or not 1 <= int(match.group("port")) <= 65535:
            raise InvalidKafkaSourceError(f"Kafka source {uri!r}: {server!r} is not host:port")
    return ",".join(servers)


def settings_from_env(environ: Mapping[str, str]) -> dict[str, str]:
    """librdkafka settings from ``KAFKA_SEGMENTS_KAFKA_<NAME>`` variables (``SECURITY_PROTOCOL`` →
    ``security.protocol``)."""
    return {
        name[len(ENV_PREFIX) :].lower().replace("_", "."): value
        for name, value in environ.items()
        if name.startswith(ENV_PREFIX) and len(name) > len(ENV_PREFIX)
    }
