"""librdkafka's mock Kafka cluster, driven through ctypes on the librdkafka that confluent-kafka bundles.

confluent-kafka has no Python binding for the mock cluster (only ``test.mock.num.brokers``, which cannot
create topics, pin coordinators or stop brokers); the C API (``rdkafka_mock.h``) can. The cluster runs in
librdkafka threads of this process. It starts in milliseconds, but setting it up can stall for a second now
and then (a mock call waiting out its thread's 1 s poll), so tests share clusters where they can:

    with MockCluster(brokers=3) as cluster:
        cluster.create_topic("orders", partitions=4)
        cluster.set_coordinator("billing", broker_id=2)
        cluster.commit("billing", {("orders", 0): 42})

What the mock supports (librdkafka 2.16): produce/consume, OffsetCommit, OffsetFetch for explicit
partitions, metadata. Not ListGroups, DescribeGroups (``_UNSUPPORTED_FEATURE``) nor an OffsetFetch of "all
partitions" (answers nothing).
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

import confluent_kafka
from confluent_kafka import Consumer, TopicPartition

OFFSET_FETCH_API_KEY = 9
_PRODUCER = 0  # RD_KAFKA_PRODUCER: a handle that only owns the mock cluster's threads
_LIB: ctypes.CDLL | None = None

_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "rd_kafka_conf_new": (ctypes.c_void_p, []),
    "rd_kafka_conf_set": (
        ctypes.c_int,
        [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t],
    ),
    "rd_kafka_new": (ctypes.c_void_p, [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]),
    "rd_kafka_destroy": (None, [ctypes.c_void_p]),
    "rd_kafka_mock_cluster_new": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_int]),
    "rd_kafka_mock_cluster_destroy": (None, [ctypes.c_void_p]),
    "rd_kafka_mock_cluster_bootstraps": (ctypes.c_char_p, [ctypes.c_void_p]),
    "rd_kafka_mock_topic_create": (
        ctypes.c_int,
        [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int],
    ),
    "rd_kafka_mock_set_controller_id": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int32]),
    "rd_kafka_mock_broker_set_down": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int32]),
    "rd_kafka_mock_broker_set_up": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int32]),
    "rd_kafka_mock_broker_error_stack_cnt": (
        ctypes.c_int,
        [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int16, ctypes.POINTER(ctypes.c_size_t)],
    ),
    "rd_kafka_mock_coordinator_set": (
        ctypes.c_int,
        [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32],
    ),
}


class MockClusterError(RuntimeError):
    """A mock-cluster call failed (the librdkafka error code is in the message)."""


def librdkafka() -> ctypes.CDLL:
    """The librdkafka shared library inside the confluent-kafka wheel, with argument types declared."""
    global _LIB  # noqa: PLW0603 - loaded once per process
    if _LIB is None:
        libs = Path(confluent_kafka.__file__).parent.parent / "confluent_kafka.libs"
        lib = ctypes.CDLL(str(next(libs.glob("librdkafka*.so*"))))
        for name, (restype, argtypes) in _SIGNATURES.items():
            function = getattr(lib, name)
            function.restype = restype
            function.argtypes = argtypes
        # variadic (err, rtt_ms) pairs: only the return type can be declared
        lib.rd_kafka_mock_broker_push_request_error_rtts.restype = ctypes.c_int
        _LIB = lib
    return _LIB


class MockCluster:
    """A running mock cluster of ``brokers`` brokers (ids 1..brokers); ``close()`` stops it."""

    def __init__(self, brokers: int = 3) -> None:
        lib = librdkafka()
        errstr = ctypes.create_string_buffer(512)
        conf = lib.rd_kafka_conf_new()
        lib.rd_kafka_conf_set(conf, b"log_level", b"0", errstr, len(errstr))
        self._rk = lib.rd_kafka_new(_PRODUCER, conf, errstr, len(errstr))
        if not self._rk:
            raise MockClusterError(errstr.value.decode())
        self._mc = lib.rd_kafka_mock_cluster_new(self._rk, brokers)
        if not self._mc:
            lib.rd_kafka_destroy(self._rk)
            raise MockClusterError("rd_kafka_mock_cluster_new failed")
        self.bootstraps: str = lib.rd_kafka_mock_cluster_bootstraps(self._mc).decode()
        self.brokers = brokers

    def __enter__(self) -> MockCluster:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._mc:
            librdkafka().rd_kafka_mock_cluster_destroy(self._mc)
            self._mc = None
        if self._rk:
            librdkafka().rd_kafka_destroy(self._rk)
            self._rk = None

    def _call(self, name: str, *args: object) -> None:
        err = getattr(librdkafka(), name)(self._mc, *args)
        if err:
            raise MockClusterError(f"{name} failed with librdkafka error {err}")

    def create_topic(self, topic: str, partitions: int, replication_factor: int = 1) -> None:
        self._call("rd_kafka_mock_topic_create", topic.encode(), partitions, replication_factor)

    def set_controller(self, broker_id: int) -> None:
        self._call("rd_kafka_mock_set_controller_id", broker_id)

    def set_coordinator(self, group_id: str, broker_id: int) -> None:
        """Make ``broker_id`` the coordinator of ``group_id`` (FindCoordinator answers it)."""
        self._call("rd_kafka_mock_coordinator_set", b"group", group_id.encode(), broker_id)

    def broker_down(self, broker_id: int) -> None:
        """Close the broker's connections and refuse new ones until ``broker_up``."""
        self._call("rd_kafka_mock_broker_set_down", broker_id)

    def broker_up(self, broker_id: int) -> None:
        self._call("rd_kafka_mock_broker_set_up", broker_id)

    def push_errors(self, broker_id: int, api_key: int, errors: Sequence[int]) -> None:
        """Answer the next ``len(errors)`` requests of ``api_key`` to ``broker_id`` with these error codes."""
        pairs: list[ctypes.c_int] = []
        for code in errors:
            pairs += [ctypes.c_int(code), ctypes.c_int(0)]  # (error, round-trip time in ms)
        err = librdkafka().rd_kafka_mock_broker_push_request_error_rtts(
            ctypes.c_void_p(self._mc),
            ctypes.c_int32(broker_id),
            ctypes.c_int16(api_key),
            ctypes.c_size_t(len(errors)),
            *pairs,
        )
        if err:
            raise MockClusterError(f"rd_kafka_mock_broker_push_request_error_rtts failed with error {err}")

    def pending_errors(self, broker_id: int, api_key: int) -> int:
        """How many pushed errors for ``api_key`` on ``broker_id`` no request has consumed yet."""
        count = ctypes.c_size_t(0)
        self._call("rd_kafka_mock_broker_error_stack_cnt", broker_id, api_key, ctypes.byref(count))
        return count.value

    def commit(self, group_id: str, offsets: Mapping[tuple[str, int], int]) -> None:
        """Commit ``offsets`` for ``group_id`` as a standalone consumer does (``commit(offsets=...)``,
        synchronous, without joining the group)."""
        consumer = Consumer(
            {"bootstrap.servers": self.bootstraps, "group.id": group_id, "enable.auto.commit": False}
        )
        try:
            wanted = [
                TopicPartition(topic, partition, offset) for (topic, partition), offset in offsets.items()
            ]
            for answer in consumer.commit(offsets=wanted, asynchronous=False) or ():
                if answer.error is not None:
                    raise MockClusterError(f"commit of {group_id} {answer}: {answer.error}")
        finally:
            consumer.close()
