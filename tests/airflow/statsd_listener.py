"""A StatsD server on loopback for the DAG tests: a UDP socket that keeps every line it receives. The test
Airflow stack (``conftest.py``) turns ``[metrics] statsd_on`` on and points ``statsd_host`` and
``statsd_port`` at the session's listener, so Airflow's own StatsD path (the ``statsd`` package's
``StatsClient`` behind Airflow's ``SafeStatsdLogger``, prefix ``airflow``) sends to it."""

from __future__ import annotations

import contextlib
import socket
import threading
import time


class StatsdListener:
    """Every StatsD line received on ``port`` (127.0.0.1), in order."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self.port: int = self._socket.getsockname()[1]
        self.lines: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._socket.recv(65_535)
            except TimeoutError:
                continue
            with self._lock:
                self.lines.extend(data.decode().splitlines())

    def mark(self) -> int:
        """How many lines were received so far (pass to ``gauges`` to see only what came later)."""
        with self._lock:
            return len(self.lines)

    def settle(self, *, quiet_s: float = 0.3, timeout_s: float = 10.0) -> None:
        """Wait until nothing more arrived for ``quiet_s`` (UDP datagrams sent just now may still be on their
        way to the receiving thread), at most ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        seen = self.mark()
        while time.monotonic() < deadline:
            time.sleep(quiet_s)
            now = self.mark()
            if now == seen:
                return
            seen = now

    def close(self) -> None:
        """Stop listening, after reading what is still queued on the socket."""
        self._stop.set()
        self._thread.join()
        with contextlib.suppress(TimeoutError):
            while True:
                self.lines.extend(self._socket.recv(65_535).decode().splitlines())
        self._socket.close()

    def gauges(self, *, since: int = 0) -> dict[str, float]:
        """The last value of every gauge received after the first ``since`` lines."""
        with self._lock:
            lines = self.lines[since:]
        values: dict[str, float] = {}
        for line in lines:
            name, _, rest = line.partition(":")
            value, _, kind = rest.partition("|")
            if kind == "g":
                values[name] = float(value)
        return values
