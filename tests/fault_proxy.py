"""A fault-injecting HTTP proxy for tests: put it in front of the embedded S3 server (loopback only) and make
chosen requests fail the ways a network and a busy S3 fail.

Each request from the client is read whole and forwarded verbatim on a fresh upstream connection (so SigV4
signatures stay valid); the upstream reply is read whole and sent back, or mangled by the first ``Fault``
that matches the request:

* ``reset_before``: the connection is reset before any reply (the request is not forwarded);
* ``lost_reply``: the request is forwarded, then the connection is reset before any reply;
* ``reset_after_headers``: the reply's status line and headers are sent, then the connection is reset;
* ``truncate``: the headers (with the full ``Content-Length``) and half the body, then a reset;
* ``status``: an S3 error reply (``500 InternalError``, ``503 SlowDown``...) instead of forwarding;
* ``delay``: the reply is held back ``delay_s`` seconds, then sent whole.

A fault applies ``times`` times (``ALWAYS``: every time), to requests whose method and path match and, for the
reply faults, whose upstream status is ``upstream_status`` when given (e.g. a truncated ``404``).
"""

from __future__ import annotations

import http.client
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import BinaryIO
from urllib.parse import urlsplit

ALWAYS = -1
_IDLE_TIMEOUT_S = 30.0
_ERROR_CODES = {500: "InternalError", 503: "SlowDown"}


@dataclass
class Fault:
    """What to do to matching requests (see the module docstring for ``kind``)."""

    kind: str
    method: str | None = None
    path_contains: str = ""
    times: int = 1
    status: int = 503
    delay_s: float = 0.0
    upstream_status: int | None = None
    applied: int = field(default=0, init=False)

    def matches(self, method: str, path: str) -> bool:
        return (
            (self.method is None or self.method == method)
            and self.path_contains in path
            and (self.times == ALWAYS or self.applied < self.times)
        )


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    raw: bytes


class FaultProxy:
    """The proxy's faults and request log; ``endpoint_url`` is what clients use instead of the server's."""

    def __init__(self, upstream_url: str) -> None:
        parts = urlsplit(upstream_url)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.faults: list[Fault] = []
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.endpoint_url = ""

    def add(self, fault: Fault) -> Fault:
        with self.lock:
            self.faults.append(fault)
        return fault

    def clear(self) -> None:
        with self.lock:
            self.faults.clear()
            self.requests.clear()

    def take(self, request: Request, upstream_status: int | None) -> Fault | None:
        """The first fault for this request (and reply status), counted as applied."""
        with self.lock:
            for fault in self.faults:
                reply_fault = fault.kind not in {"reset_before", "status", "lost_reply"}
                if (upstream_status is None) == reply_fault:
                    continue
                if fault.upstream_status is not None and fault.upstream_status != upstream_status:
                    continue
                if fault.matches(request.method, request.path):
                    fault.applied += 1
                    return fault
        return None


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        proxy = self.server.proxy
        self.request.settimeout(_IDLE_TIMEOUT_S)
        rfile: BinaryIO = self.request.makefile("rb")
        try:
            while True:
                request = _read_request(rfile, self.request)
                if request is None:
                    return
                with proxy.lock:
                    proxy.requests.append((request.method, request.path))
                if not self._serve(proxy, request):
                    return
        except OSError:
            return
        finally:
            rfile.close()

    def _serve(self, proxy: FaultProxy, request: Request) -> bool:
        """Answer one request; ``False`` when the connection was reset."""
        fault = proxy.take(request, None)
        if fault is not None and fault.kind == "reset_before":
            self._reset()
            return False
        if fault is not None and fault.kind == "status":
            code = _ERROR_CODES.get(fault.status, "InternalError")
            body = f"<Error><Code>{code}</Code><Message>injected</Message></Error>".encode()
            head = f"HTTP/1.1 {fault.status} Injected\r\nContent-Type: application/xml\r\n"
            self.request.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            return True
        status, head, body = _forward(proxy.upstream, request)
        if fault is not None and fault.kind == "lost_reply":
            self._reset()
            return False
        fault = proxy.take(request, status)
        if fault is not None and fault.kind == "delay":
            time.sleep(fault.delay_s)
        if fault is not None and fault.kind == "reset_after_headers":
            self.request.sendall(head)
            self._reset()
            return False
        if fault is not None and fault.kind == "truncate":
            self.request.sendall(head + body[: len(body) // 2])
            self._reset()
            return False
        self.request.sendall(head + body)
        return True

    def _reset(self) -> None:
        """Close with a TCP reset (RST), as a dropped connection looks to the client."""
        self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.request.close()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, proxy: FaultProxy) -> None:
        self.proxy = proxy
        super().__init__(("127.0.0.1", 0), _Handler)


def _read_request(rfile: BinaryIO, sock: socket.socket) -> Request | None:
    line = rfile.readline()
    if not line.strip():
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    headers: list[bytes] = []
    length, chunked, expect = 0, False, False
    while (header := rfile.readline()) not in {b"\r\n", b"\n", b""}:
        name, _, value = header.decode("latin-1").partition(":")
        lowered = name.strip().lower()
        if lowered == "expect":
            expect = True
            continue  # answered here; not signed by SigV4
        if lowered == "content-length":
            length = int(value.strip())
        if lowered == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
        headers.append(header)
    if expect:
        sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    body = _read_chunked(rfile) if chunked else rfile.read(length)
    return Request(method, path, line + b"".join(headers) + b"\r\n" + body)


def _read_chunked(rfile: BinaryIO) -> bytes:
    """A chunked body, framing included (it is forwarded as it came)."""
    raw = b""
    while True:
        size_line = rfile.readline()
        raw += size_line
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while (trailer := rfile.readline()) not in {b"\r\n", b"\n", b""}:
                raw += trailer
            return raw + b"\r\n"
        raw += rfile.read(size + 2)


def _forward(upstream: tuple[str, int], request: Request) -> tuple[int, bytes, bytes]:
    """The upstream reply to ``request``: status, head (status line and headers, re-framed) and body."""
    with socket.create_connection(upstream, timeout=_IDLE_TIMEOUT_S) as sock:
        sock.sendall(request.raw)
        response = http.client.HTTPResponse(sock, method=request.method)
        try:
            response.begin()
            body = response.read()
        finally:
            response.close()
    lines = [f"HTTP/1.1 {response.status} {response.reason}"]
    for name, value in response.getheaders():
        if name.lower() in {"transfer-encoding", "connection"}:
            continue
        if name.lower() == "content-length" and request.method != "HEAD":
            continue
        lines.append(f"{name}: {value}")
    if request.method != "HEAD":
        lines.append(f"Content-Length: {len(body)}")
    return response.status, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"), body


@contextmanager
def fault_proxy(upstream_url: str) -> Iterator[FaultProxy]:
    """A running proxy in front of ``upstream_url`` on a free loopback port."""
    proxy = FaultProxy(upstream_url)
    server = _Server(proxy)
    host, port = server.server_address[:2]
    proxy.endpoint_url = f"http://{host}:{port}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
