"""The decompression limit every codec's reader checks (``compression``, ``gzip_stream``)."""

from __future__ import annotations

__all__ = ["DecompressedSizeError", "check_size"]


class DecompressedSizeError(ValueError):
    """A stream inflates past ``limit`` bytes (callers add the location)."""

    def __init__(self, codec: str, limit: int) -> None:
        super().__init__(f"{codec} records inflate past the decompression limit of {limit} bytes")
        self.limit = limit


def check_size(codec: str, size: int, limit: int | None) -> None:
    """Raises ``DecompressedSizeError`` when ``size`` passes ``limit`` (``None``: no limit)."""
    if limit is not None and size > limit:
        raise DecompressedSizeError(codec, limit)
