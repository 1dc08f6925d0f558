"""The S3 store's reading of a GET's body into a caller's buffer (``storage.s3``'s ``get_into``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafka_segments.errors import ObjectStoreError, TransientStoreError
from kafka_segments.storage.base import PROGRESS_CHUNK_BYTES, Progress

READ_CHUNK_BYTES = 8 << 20
"""``get_into`` reads the body this many bytes per ``readinto`` call (each call copies one urllib3 chunk)."""


def stream_into(body: Any, target: memoryview, *, location: str, progress: Progress | None) -> None:
    """Fill ``target`` from a botocore ``StreamingBody`` that announced ``len(target)`` bytes, then read
    once more: botocore checks the length (and the checksum, if it verifies one) on that empty read."""
    filled, size = 0, len(target)
    chunk = READ_CHUNK_BYTES if progress is None else PROGRESS_CHUNK_BYTES
    while filled < size:
        count = body.readinto(target[filled : min(filled + chunk, size)])
        if not count:  # the connection closed early: transient, like a reset
            raise TransientStoreError(
                f"response body ended after {filled} of {size} bytes", location=location
            )
        filled += count
        if progress is not None:
            progress(filled)
    if body.readinto(bytearray(1)):
        raise ObjectStoreError(f"response body longer than its Content-Length {size}", location=location)


@dataclass
class ResumedRead:
    """What one ``get_into`` carries from a try cut short to the next: the etag of the first reply and the
    most bytes ``progress`` was told of."""

    if_match: str | None
    progress: Progress | None
    etag: str | None = None
    told: int = 0

    def pin(self) -> str | None:
        """The next GET's ``If-Match``: the caller's, or once bytes were handed over, the first reply's."""
        if self.if_match is not None or self.told == 0:
            return self.if_match
        return self.etag

    def forward(self, filled: int) -> None:
        if self.progress is not None and filled > self.told:
            self.told = filled
            self.progress(filled)
