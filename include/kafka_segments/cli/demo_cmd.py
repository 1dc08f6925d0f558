"""``kafka-segments demo``: the quick start's main job on the embedded default stack.

Starts the embedded S3 server, writes the sample topic's segments into a lake bucket over HTTP, lists
and downloads them again, and prints them with ``inspect``. The server is stopped on the way out,
whatever happens.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kafka_segments.cli.inspect_cmd import inspect_file
from kafka_segments.embedded_s3 import embedded_s3_server
from kafka_segments.sample import sample_topic

DEMO_BUCKET = "kafka-segments-demo"
DEMO_PREFIX = "lake/"


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kafka-segments-demo-") as scratch:
        target = Path(args.output) if args.output else Path(scratch)
        with embedded_s3_server() as s3:
            _progress(f"embedded S3 server listening on {s3.endpoint_url}")
            client = s3.client()
            client.create_bucket(Bucket=DEMO_BUCKET)
            written = _upload_sample(client)
            downloaded = _download_lake(client, target)
        _progress("embedded S3 server stopped")
        problems = 0
        for path in downloaded:
            report = inspect_file(path, records=args.records)
            sys.stdout.write("".join(line + "\n" for line in report.lines))
            problems += report.problem is not None
    _summary(written, downloaded, problems, time.perf_counter() - started, args.output)
    return 1 if problems else 0


def _upload_sample(client: Any) -> int:
    segments = sample_topic()
    objects = {key: data for segment in segments for key, data in segment.objects().items()}
    for key, data in objects.items():
        client.put_object(Bucket=DEMO_BUCKET, Key=DEMO_PREFIX + key, Body=data)
    total = sum(len(data) for data in objects.values())
    _progress(
        f"wrote {len(segments)} segments ({len(objects)} objects, {total} bytes) "
        f"to s3://{DEMO_BUCKET}/{DEMO_PREFIX}"
    )
    return len(segments)


def _download_lake(client: Any, target: Path) -> list[Path]:
    paths = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=DEMO_BUCKET, Prefix=DEMO_PREFIX):
        for item in page.get("Contents", []):
            relative = item["Key"][len(DEMO_PREFIX) :]
            path = target / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(client.get_object(Bucket=DEMO_BUCKET, Key=item["Key"])["Body"].read())
            paths.append(path)
    _progress(f"read back {len(paths)} objects from the lake")
    return sorted(paths, key=lambda path: (path.parent, path.stem, path.suffix != ".log", path.suffix))


def _summary(written: int, downloaded: list[Path], problems: int, seconds: float, output: str | None) -> None:
    logs = sum(path.suffix == ".log" for path in downloaded)
    status = "OK" if problems == 0 and written == logs else "PROBLEMS FOUND"
    print(
        f"\ndemo {status}: {written} segments written to the embedded S3 lake, {logs} read back "
        f"and inspected with their {len(downloaded) - logs} index files, {problems} with problems, "
        f"in {seconds:.1f} s" + (f"; segments kept in {output}" if output else "")
    )


def _progress(message: str) -> None:
    print(f"[demo] {message}", file=sys.stderr, flush=True)
