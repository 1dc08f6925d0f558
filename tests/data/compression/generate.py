"""Regenerate the compression golden files: ``.venv/bin/python tests/data/compression/generate.py``.

``payload.bin`` is a fixed text-and-binary payload; every other file is ``compress(codec, payload)`` as
this library writes it (see tests/data/README.md). Rerun only when the format deliberately changes.
"""

from __future__ import annotations

from pathlib import Path

from kafka_segments.records.attributes import CompressionType
from kafka_segments.records.compression import compress

HERE = Path(__file__).resolve().parent


def golden_payload() -> bytes:
    lines = b"".join(b"offset=%04d key=user-%02d value=%s\n" % (i, i % 7, b"x" * (i % 13)) for i in range(40))
    return lines + bytes(range(256))


GOLDEN = {
    "payload.gzip": (CompressionType.GZIP, 2),
    "payload.snappy": (CompressionType.SNAPPY, 2),
    "payload.lz4": (CompressionType.LZ4, 2),
    "payload.v0.lz4": (CompressionType.LZ4, 0),
    "payload.zstd": (CompressionType.ZSTD, 2),
}


def main() -> None:
    payload = golden_payload()
    (HERE / "payload.bin").write_bytes(payload)
    for name, (codec, magic) in GOLDEN.items():
        (HERE / name).write_bytes(compress(codec, payload, magic=magic))


if __name__ == "__main__":
    main()
