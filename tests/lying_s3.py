"""A tiny S3 server for tests that ignores conditional writes, as ``s3rver`` 3.7.1,
``@20minutes/s3rver`` 5.0.0 and older MinIO and Ceph releases do: ``If-None-Match: *`` and ``If-Match`` on a
PUT are read and dropped, so every PUT wins.

Path-style requests only, on loopback: PUT/GET/HEAD/DELETE of objects, ``ListObjectsV2`` (with
``start-after`` and ``delimiter``), ``DeleteObjects``,
and PUT/HEAD of buckets (every bucket exists). Signatures are not checked. ``objects`` is the server's whole
state (bucket-relative ``bucket/key`` -> bytes), for seeding and for asserting what was written."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape

_DELETE_KEY = re.compile(rb"<Key>(.*?)</Key>", re.DOTALL)


@dataclass
class LyingS3:
    """The server's state: ``endpoint_url`` and every object (``"bucket/key"`` -> bytes)."""

    endpoint_url: str = ""
    objects: dict[str, bytes] = field(default_factory=dict)
    conditional_puts: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def keys(self, bucket: str) -> list[str]:
        with self.lock:
            return sorted(k.split("/", 1)[1] for k in self.objects if k.startswith(bucket + "/"))


def _etag(data: bytes) -> str:
    return '"' + hashlib.md5(data, usedforsecurity=False).hexdigest() + '"'


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return

    def _target(self) -> tuple[str, str, dict[str, list[str]]]:
        parts = urlsplit(self.path)
        bucket, _, key = unquote(parts.path).lstrip("/").partition("/")
        return bucket, key, parse_qs(parts.query, keep_blank_values=True)

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raw = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in {b"\r\n", b"\n", b""}:
                        pass
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if "aws-chunked" in self.headers.get("Content-Encoding", ""):
            return _decode_aws_chunked(raw)
        return raw

    def _reply(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _missing(self, key: str) -> None:
        body = f"<Error><Code>NoSuchKey</Code><Key>{escape(key)}</Key></Error>".encode()
        self._reply(404, body, {"Content-Type": "application/xml"})

    def do_PUT(self) -> None:
        bucket, key, _ = self._target()
        data = self._body()
        state = self.server.state
        if not key:
            self._reply(200)
            return
        with state.lock:
            if self.headers.get("If-None-Match") or self.headers.get("If-Match"):
                state.conditional_puts += 1  # read, and ignored
            state.objects[f"{bucket}/{key}"] = data
        self._reply(200, headers={"ETag": _etag(data)})

    def do_GET(self) -> None:
        bucket, key, query = self._target()
        if not key:
            self._list(bucket, query)
            return
        with self.server.state.lock:
            data = self.server.state.objects.get(f"{bucket}/{key}")
        if data is None:
            self._missing(key)
            return
        self._reply(200, data, self._object_headers(data))

    def do_HEAD(self) -> None:
        bucket, key, _ = self._target()
        if not key:
            self._reply(200)
            return
        with self.server.state.lock:
            data = self.server.state.objects.get(f"{bucket}/{key}")
        if data is None:
            self._reply(404)
            return
        self.send_response(200)
        for name, value in self._object_headers(data).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()

    def do_DELETE(self) -> None:
        bucket, key, _ = self._target()
        with self.server.state.lock:
            self.server.state.objects.pop(f"{bucket}/{key}", None)
        self._reply(204)

    def do_POST(self) -> None:
        bucket, _, query = self._target()
        data = self._body()
        if "delete" not in query:
            self._reply(501)
            return
        with self.server.state.lock:
            for match in _DELETE_KEY.finditer(data):
                self.server.state.objects.pop(f"{bucket}/{match.group(1).decode()}", None)
        self._reply(200, b"<DeleteResult></DeleteResult>", {"Content-Type": "application/xml"})

    def _object_headers(self, data: bytes) -> dict[str, str]:
        return {"ETag": _etag(data), "Last-Modified": formatdate(usegmt=True), "Content-Type": "binary/octet"}

    def _list(self, bucket: str, query: dict[str, list[str]]) -> None:
        prefix = query.get("prefix", [""])[0]
        start_after = query.get("start-after", [""])[0]
        delimiter = query.get("delimiter", [""])[0]
        with self.server.state.lock:
            objects = self.server.state.objects.items()
            found = sorted((k.split("/", 1)[1], v) for k, v in objects if k.startswith(bucket + "/"))
        listed = [(key, data) for key, data in found if key.startswith(prefix) and key > start_after]
        folders = sorted(
            {
                prefix + key[len(prefix) :].split(delimiter, 1)[0] + delimiter
                for key, _ in listed
                if delimiter and delimiter in key[len(prefix) :]
            }
        )
        contents = "".join(
            f"<Contents><Key>{escape(key)}</Key><Size>{len(data)}</Size><ETag>{escape(_etag(data))}</ETag>"
            "<LastModified>2026-01-01T00:00:00.000Z</LastModified></Contents>"
            for key, data in listed
            if not delimiter or delimiter not in key[len(prefix) :]
        )
        common = "".join(f"<CommonPrefixes><Prefix>{escape(f)}</Prefix></CommonPrefixes>" for f in folders)
        body = (
            f'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>{escape(bucket)}</Name>'
            f"<Prefix>{escape(prefix)}</Prefix><IsTruncated>false</IsTruncated>{contents}{common}"
            "</ListBucketResult>"
        ).encode()
        self._reply(200, body, {"Content-Type": "application/xml"})


def _decode_aws_chunked(raw: bytes) -> bytes:
    """The payload of an ``aws-chunked`` body (``<hex size>[;chunk-signature=...]\\r\\n<data>\\r\\n``...,
    trailers after the last, empty chunk)."""
    out, position = b"", 0
    while True:
        end = raw.index(b"\r\n", position)
        size = int(raw[position:end].split(b";")[0], 16)
        if size == 0:
            return out
        out += raw[end + 2 : end + 2 + size]
        position = end + 2 + size + 2


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: LyingS3) -> None:
        self.state = state
        super().__init__(("127.0.0.1", 0), _Handler)


@contextmanager
def lying_s3_server() -> Iterator[LyingS3]:
    """The server, started on a free loopback port for the ``with`` block."""
    state = LyingS3()
    server = _Server(state)
    state.endpoint_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="lying-s3", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
