"""A StatsD server on loopback for the DAG tests: a UDP socket that keeps every gauge it receives, and
Airflow's metrics (``airflow.sdk.observability.stats``) pointed at it as a deployment with
``[metrics] statsd_on`` would be, through Airflow's own ``SafeStatsdLogger`` (its validators, name handler and
prefix ``airflow``).

The ``statsd`` package Airflow's StatsD logger wraps is not installed here (docs/metrics.md), so the wire
client is ``LoopbackStatsClient``: the part of ``statsd.StatsClient`` the logger calls, in the StatsD line
format (``<prefix>.<name>:<value>|g``)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from typing import Any


class LoopbackStatsClient:
    """``statsd.StatsClient(host, port, prefix, ipv6)``'s gauge, counter and timer calls, over UDP."""

    def __init__(self, host: str, port: int, prefix: str | None, ipv6: bool = False) -> None:
        self._address = (host, port)
        self._prefix = f"{prefix}." if prefix else ""

    def _send(self, stat: str, value: Any, kind: str) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            sender.sendto(f"{self._prefix}{stat}:{value}|{kind}".encode(), self._address)

    def gauge(self, stat: str, value: Any, rate: float = 1, delta: bool = False) -> None:
        self._send(stat, value, "g")

    def incr(self, stat: str, count: int = 1, rate: float = 1) -> None:
        self._send(stat, count, "c")

    def decr(self, stat: str, count: int = 1, rate: float = 1) -> None:
        self._send(stat, -count, "c")

    def timing(self, stat: str, delta: Any, rate: float = 1) -> None:
        self._send(stat, delta, "ms")

    def timer(self, stat: str, rate: float = 1) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()


class StatsdListener:
    """Every StatsD line received on ``port`` (127.0.0.1), in order."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self.port: int = self._socket.getsockname()[1]
        self.lines: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._socket.recv(65_535)
            except TimeoutError:
                continue
            self.lines.extend(data.decode().splitlines())

    def close(self) -> None:
        """Stop listening, after reading what is still queued on the socket."""
        self._stop.set()
        self._thread.join()
        with contextlib.suppress(TimeoutError):
            while True:
                self.lines.extend(self._socket.recv(65_535).decode().splitlines())
        self._socket.close()

    def gauges(self) -> dict[str, float]:
        """The last value of every gauge received."""
        values: dict[str, float] = {}
        for line in self.lines:
            name, _, rest = line.partition(":")
            value, _, kind = rest.partition("|")
            if kind == "g":
                values[name] = float(value)
        return values


@contextlib.contextmanager
def airflow_metrics_to_statsd() -> Iterator[StatsdListener]:
    """Airflow's stats sent to a fresh listener (as the task runner's ``stats.initialize`` does with StatsD
    on) for the duration; then Airflow's configured backend again."""
    import airflow.sdk.serde  # noqa: F401  (its import initializes stats from the configuration: first)
    from airflow.sdk._shared.observability.metrics import statsd_logger
    from airflow.sdk.observability import stats
    from airflow.sdk.observability.metrics.stats_utils import get_stats_factory

    listener = StatsdListener()

    def factory() -> Any:
        return statsd_logger.get_statsd_logger(
            stats_class=LoopbackStatsClient,  # type: ignore[arg-type]
            host="127.0.0.1",
            port=listener.port,
            prefix="airflow",
        )

    stats.initialize(factory=factory, export_legacy_names=False)
    try:
        yield listener
    finally:
        stats.initialize(factory=get_stats_factory(), export_legacy_names=False)
        listener.close()
