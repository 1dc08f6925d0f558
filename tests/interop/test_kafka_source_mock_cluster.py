"""The Kafka offsets source against librdkafka's mock cluster (a real Kafka wire protocol, no JVM).

Offsets are committed the way a standalone consumer commits (``Consumer.commit(offsets=..., asynchronous=
False)``), then read back through ``open_kafka_source`` + ``snapshot_from_kafka``. The mock answers ListGroups
and DescribeGroups with ``_UNSUPPORTED_FEATURE``, so these tests also pin what the source does then; the
describe mapping itself is unit-tested (``tests/unit/test_kafka_source.py``).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from kafka_segments.offsets.kafka_admin import (
    ConfluentGroupAdmin,
    GroupDiscoveryError,
    KafkaAdminError,
    OffsetsVia,
)
from kafka_segments.offsets.kafka_source import open_kafka_source, snapshot_from_kafka
from kafka_segments.state import CommittedOffset, GroupError, GroupOffsets, OffsetSnapshot

from interop.mock_cluster import OFFSET_FETCH_API_KEY, MockCluster

pytestmark = pytest.mark.e2e

TAKEN_AT = 1_763_700_000_000
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
GROUP_AUTHORIZATION_FAILED = 30
BILLING = {("orders", 0): 10, ("orders", 1): 11, ("orders", 2): 12, ("payments", 0): 5}
FRAUD = {("orders", 0): 100, ("orders", 3): 103}
BOTH_WAYS = pytest.mark.parametrize("offsets_via", ["consumer", "admin"])


def seeded_cluster() -> MockCluster:
    """Two topics; "billing" (coordinator: broker 1) and "fraud" (broker 2) have committed offsets."""
    mock = MockCluster(brokers=3)
    mock.create_topic("orders", partitions=4, replication_factor=3)
    mock.create_topic("payments", partitions=2, replication_factor=3)
    mock.set_controller(1)
    mock.set_coordinator("billing", broker_id=1)
    mock.set_coordinator("fraud", broker_id=2)
    mock.commit("billing", BILLING)
    mock.commit("fraud", FRAUD)
    return mock


@pytest.fixture(scope="module")
def shared() -> Iterator[MockCluster]:
    """One cluster for the tests that only read (creating one can take a second: a mock-thread wake-up)."""
    with seeded_cluster() as mock:
        yield mock


@pytest.fixture
def cluster() -> Iterator[MockCluster]:
    """A cluster of its own, for a test that stops brokers."""
    with seeded_cluster() as mock:
        yield mock


@pytest.fixture(scope="module")
def fraud_coordinator_down() -> Iterator[MockCluster]:
    """Broker 3, the coordinator of "fraud", is down; broker 1 ("billing") is up."""
    with seeded_cluster() as mock:
        mock.set_coordinator("fraud", broker_id=3)
        mock.broker_down(3)
        yield mock


@contextmanager
def kafka_source(
    cluster: MockCluster, *, offsets_via: OffsetsVia = "consumer"
) -> Iterator[ConfluentGroupAdmin]:
    admin = open_kafka_source(
        f"kafka://{cluster.bootstraps}", environ={}, timeout_s=1.0, offsets_via=offsets_via
    )
    try:
        yield admin
    finally:
        admin.close()  # no client left reconnecting to a stopped cluster


def snapshot(
    cluster: MockCluster, *, groups: list[str] | None, offsets_via: OffsetsVia = "consumer", **kwargs: Any
) -> OffsetSnapshot:
    with kafka_source(cluster, offsets_via=offsets_via) as admin:
        return snapshot_from_kafka(
            admin, taken_at_ms=TAKEN_AT, source=admin.location, groups=groups, **kwargs
        )


def committed(offsets: dict[tuple[str, int], int]) -> tuple[CommittedOffset, ...]:
    return tuple(CommittedOffset(t, p, o) for (t, p), o in sorted(offsets.items()))


def offsets_only(group_id: str, offsets: dict[tuple[str, int], int]) -> GroupOffsets:
    """What the source records when DescribeGroups is unsupported and the group was not listed."""
    return GroupOffsets(group_id, "Unknown", "consumer", None, None, committed(offsets))


@BOTH_WAYS
def test_named_groups_offsets_are_read_back_exactly(shared: MockCluster, offsets_via: OffsetsVia) -> None:
    got = snapshot(
        shared, groups=["fraud", "billing", "idle"], topics=["orders", "payments"], offsets_via=offsets_via
    )
    assert got == OffsetSnapshot(
        taken_at_ms=TAKEN_AT,
        source=f"kafka://{shared.bootstraps}",
        groups=(offsets_only("billing", BILLING), offsets_only("fraud", FRAUD), offsets_only("idle", {})),
    )


def test_partitions_without_a_commit_are_left_out_not_reported_negative(shared: MockCluster) -> None:
    got = snapshot(shared, groups=["fraud"], topics=["orders"])
    fraud = got.group("fraud")
    assert fraud is not None
    assert [(o.partition, o.offset) for o in fraud.offsets] == [(0, 100), (3, 103)]
    assert all(o.commit_timestamp_ms is None and o.expire_timestamp_ms is None for o in fraud.offsets)


@BOTH_WAYS
def test_topics_limit_the_partitions_read(shared: MockCluster, offsets_via: OffsetsVia) -> None:
    got = snapshot(shared, groups=["billing"], topics=["payments", "no-such-topic"], offsets_via=offsets_via)
    assert got.groups == (offsets_only("billing", {("payments", 0): 5}),)


def test_all_topics_are_read_from_metadata_by_default(shared: MockCluster) -> None:
    got = snapshot(shared, groups=["billing", "fraud"])
    assert got.groups == (offsets_only("billing", BILLING), offsets_only("fraud", FRAUD))


def test_the_mock_answers_nothing_to_an_all_partitions_offset_fetch(shared: MockCluster) -> None:
    # why "consumer" (explicit partitions) is the way tested end to end: with the Admin call and no topics,
    # librdkafka asks for every partition at once, which the mock does not implement
    got = snapshot(shared, groups=["billing"], offsets_via="admin")
    assert got.groups == (offsets_only("billing", {}),)


def test_a_group_whose_coordinator_is_down_is_an_error_and_the_others_are_read(
    fraud_coordinator_down: MockCluster,
) -> None:
    got = snapshot(fraud_coordinator_down, groups=["billing", "fraud"], topics=["orders", "payments"])
    assert got.groups == (offsets_only("billing", BILLING),)
    assert got.errors == (GroupError("fraud", "_TIMED_OUT"),)  # its describe already timed out


@BOTH_WAYS
def test_an_offset_fetch_from_a_down_coordinator_times_out_for_that_group_only(
    fraud_coordinator_down: MockCluster, offsets_via: OffsetsVia
) -> None:
    with kafka_source(fraud_coordinator_down, offsets_via=offsets_via) as admin:
        got = admin.list_offsets(["billing", "fraud"], topics=["orders", "payments"])
    assert got == {
        "billing": committed(BILLING),
        "fraud": GroupError("fraud", "_TIMED_OUT"),
    }


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (COORDINATOR_NOT_AVAILABLE, "COORDINATOR_NOT_AVAILABLE"),
        (NOT_COORDINATOR, "NOT_COORDINATOR"),
        (GROUP_AUTHORIZATION_FAILED, "GROUP_AUTHORIZATION_FAILED"),
    ],
)
def test_an_offset_fetch_error_is_recorded_under_kafkas_error_name(
    shared: MockCluster, code: int, name: str
) -> None:
    shared.push_errors(2, OFFSET_FETCH_API_KEY, [code])  # broker 2 coordinates "fraud"
    got = snapshot(shared, groups=["billing", "fraud"], topics=["orders", "payments"])
    assert shared.pending_errors(2, OFFSET_FETCH_API_KEY) == 0
    assert got.groups == (offsets_only("billing", BILLING),)
    assert got.errors == (GroupError("fraud", name),)


def test_an_offset_fetch_error_through_the_admin_call_is_recorded_too(shared: MockCluster) -> None:
    shared.push_errors(2, OFFSET_FETCH_API_KEY, [GROUP_AUTHORIZATION_FAILED])
    got = snapshot(shared, groups=["billing", "fraud"], topics=["orders"], offsets_via="admin")
    assert shared.pending_errors(2, OFFSET_FETCH_API_KEY) == 0
    assert got.errors == (GroupError("fraud", "GROUP_AUTHORIZATION_FAILED"),)


def test_listing_groups_is_unsupported_so_discovery_fails_and_says_how_to_avoid_it(
    shared: MockCluster,
) -> None:
    with pytest.raises(GroupDiscoveryError, match="name the groups explicitly") as caught:
        snapshot(shared, groups=None)
    assert caught.value.error == "_UNSUPPORTED_FEATURE"
    assert caught.value.location == f"kafka://{shared.bootstraps}"


def test_describe_is_unsupported_per_group_on_the_mock(shared: MockCluster) -> None:
    with kafka_source(shared) as admin:
        got = admin.describe_groups(["billing", "fraud"])
    assert got == {
        "billing": GroupError("billing", "_UNSUPPORTED_FEATURE"),
        "fraud": GroupError("fraud", "_UNSUPPORTED_FEATURE"),
    }


def test_an_unreachable_cluster_raises_rather_than_giving_an_empty_snapshot(cluster: MockCluster) -> None:
    for broker in (1, 2, 3):
        cluster.broker_down(broker)
    with kafka_source(cluster) as admin, pytest.raises(KafkaAdminError, match="topic metadata") as caught:
        admin.list_offsets(["billing"], topics=["orders"])
    assert caught.value.error.startswith("_")


CRASH_SCRIPT = textwrap.dedent(
    """
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file

    from interop.mock_cluster import OFFSET_FETCH_API_KEY, MockCluster
    from kafka_segments.offsets.kafka_source import open_kafka_source

    with MockCluster(brokers=2) as cluster:
        cluster.create_topic("orders", partitions=1)
        cluster.set_coordinator("fraud", broker_id=2)
        cluster.commit("fraud", {("orders", 0): 1})
        cluster.push_errors(2, OFFSET_FETCH_API_KEY, [15])  # COORDINATOR_NOT_AVAILABLE
        uri = "kafka://" + cluster.bootstraps
        admin = open_kafka_source(uri, environ={}, timeout_s=2, offsets_via="admin")
        print(admin.list_offsets(["fraud"], topics=["orders"]))
    """
)


def test_the_admin_offset_fetch_still_crashes_librdkafka_on_coordinator_errors(tmp_path: Path) -> None:
    """Why offsets are read through a consumer by default (librdkafka issue #5040). When this fails,
    librdkafka has fixed the crash: the Admin call may become the default again."""
    tests = Path(__file__).resolve().parents[1]
    run = subprocess.run(
        [sys.executable, "-c", CRASH_SCRIPT],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PYTHONPATH": str(tests), "PATH": ""},
        check=False,
    )
    assert run.returncode in (-signal.SIGSEGV, -signal.SIGABRT), (
        run.returncode,
        run.stdout,
        run.stderr[-2000:],
    )
