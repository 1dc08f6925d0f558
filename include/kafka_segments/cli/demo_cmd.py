"""``kafka-segments demo``: the quick start's main job on the embedded default stack.

Over real HTTP to the embedded S3 server: upload the sample topic's segments with Kafka's plain names, adopt,
describe, run retention with consumed retention (KIP-68) on, dump a partition, export and inspect it, then
``recover``, a dry-run ``gc`` and one query (the compacted view of the topic, docs/reading.md). The server
is stopped on the way out, whatever happens.

``demo --lake L`` instead builds the demo lake of ``./scripts/demo`` into ``L`` (a local folder or
``s3://bucket/prefix``) and stops: what the README's commands and docs/reading.md's example run on."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_segments.cli.common import EXIT_OK, EXIT_PROBLEM, Commands
from kafka_segments.cli.inspect_cmd import inspect_file
from kafka_segments.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_segments.demo import EmbeddedS3
    from kafka_segments.storage import ObjectStore, S3Store


def add_parsers(commands: Commands) -> None:
    """Add ``demo`` to the command line."""
    sub = commands.add_parser(
        "demo",
        help="write a sample topic to an embedded S3 server, read it back and inspect it",
        description=(
            "The quick start's main job on the embedded default stack: start an S3 server on loopback, "
            "write a sample topic's segments into a lake bucket, read them back and print them with inspect."
        ),
    )
    sub.add_argument("--output", default=None, help="also keep the downloaded segments in this folder")
    sub.add_argument("--records", action="store_true", help="print every record, not only batches")
    sub.add_argument(
        "--lake",
        metavar="L",
        help=(
            "only build the demo lake of ./scripts/demo (customers, clickstream, __consumer_offsets, offsets "
            "pinned) into L, a local folder or s3://bucket/prefix, for now (a lake L already holds is kept)"
        ),
    )
    sub.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from kafka_segments.demo import DAY_MS, SAMPLE_START_MS, embedded_s3_server

    if args.lake is not None:
        return build_lake(args.lake)
    started = time.perf_counter()
    now_ms = SAMPLE_START_MS + DAY_MS
    with _export_target(args.output) as target, embedded_s3_server() as s3:
        _progress(f"embedded S3 server listening on {s3.endpoint_url}")
        store = _lake(s3)
        written = _upload_sample(store)
        quarantined = _adopt(store, now_ms=now_ms)
        _describe(store)
        live = _retention(store, now_ms=now_ms)
        _describe(store)
        _dump(store)
        exported = _export(store, target)
        _settle(store)
        problems = _inspect(exported, records=args.records)
        _query(store)
    _progress("embedded S3 server stopped")
    _summary(written, live, exported, problems + quarantined, time.perf_counter() - started, args.output)
    return EXIT_PROBLEM if problems or quarantined else EXIT_OK


def build_lake(uri: str) -> int:
    """The demo lake in ``uri`` for now (and the offsets pinned at the last two midnights), unless the lake
    already has a manifest."""
    from kafka_segments.clock import wall_clock_ms
    from kafka_segments.demo import MINUTE_MS, build_demo_lake, pin_demo_history
    from kafka_segments.lake.history import head_version
    from kafka_segments.storage import open_store
    from kafka_segments.timefmt import text_time

    store = open_store(uri)
    version = head_version(store)
    if version is not None:
        print(f"{store.describe()} already holds a lake (manifest version {version}); left as it is")
        return EXIT_OK
    now_ms = wall_clock_ms() // MINUTE_MS * MINUTE_MS
    lake = build_demo_lake(store, now_ms=now_ms)
    pin_demo_history(store, now_ms=now_ms)
    print(
        f"demo lake built in {store.describe()} for now={text_time(now_ms)}: {lake.segments} segments "
        "(customers, clickstream, __consumer_offsets), committed as version "
        f"{lake.committed_version}"
    )
    return EXIT_OK


@contextmanager
def _export_target(output: str | None) -> Iterator[Path]:
    if output:
        yield Path(output)
        return
    with tempfile.TemporaryDirectory(prefix="kafka-segments-demo-") as scratch:
        yield Path(scratch) / "export"


def _lake(s3: EmbeddedS3) -> S3Store:
    from kafka_segments.demo import DEMO_BUCKET, DEMO_PREFIX

    s3.client().create_bucket(Bucket=DEMO_BUCKET)
    return s3.store(DEMO_BUCKET, DEMO_PREFIX)


def _upload_sample(store: ObjectStore) -> int:
    from kafka_segments.demo import sample_topic

    segments = sample_topic()
    objects = {key: data for segment in segments for key, data in segment.objects().items()}
    for key, data in objects.items():
        store.put(key, data)
    total = sum(len(data) for data in objects.values())
    _progress(
        f"uploaded {len(segments)} segments ({len(objects)} objects, {total} bytes) to {store.describe()}"
    )
    return len(segments)


def _adopt(store: ObjectStore, *, now_ms: int) -> int:
    from kafka_segments.lake.adopt_run import adopt

    report = adopt(store, now_ms=now_ms)
    _section("adopt", report.to_text())
    return len(report.result.quarantined)


DEMO_CONFIG = """\
broker:
  log.retention.hours: 168
topics:
  orders:
    retention.commitoffset.enable: true
    retention.commitoffset.ms: 3600000
"""


def _retention(store: ObjectStore, *, now_ms: int) -> int:
    """A retention run with consumed retention on; returns how many ``.log`` files an export will hold."""
    from kafka_segments.config import parse_config
    from kafka_segments.demo import SAMPLE_TOPIC
    from kafka_segments.lake.reader import resolve_manifest
    from kafka_segments.offsets.snapshot_codec import snapshot_to_json
    from kafka_segments.pipeline.offsets_input import OffsetsChoice
    from kafka_segments.pipeline.report import render_text
    from kafka_segments.pipeline.retention_run import RunOptions, run_retention
    from kafka_segments.state import CommittedOffset, GroupOffsets, OffsetSnapshot

    manifest = resolve_manifest(store, None)
    read_up_to = []
    for state in manifest.partitions:
        # partition 0: read to the end; partition 1: only its first segment
        offset = (
            state.log_end_offset if state.topic_partition.partition == 0 else state.segments[1].base_offset
        )
        read_up_to.append(CommittedOffset(SAMPLE_TOPIC, state.topic_partition.partition, offset, now_ms))
    snapshot = OffsetSnapshot(
        taken_at_ms=now_ms,
        source="file",
        groups=(GroupOffsets("billing", "Stable", "consumer", None, (SAMPLE_TOPIC,), tuple(read_up_to)),),
    )
    with tempfile.TemporaryDirectory(prefix="kafka-segments-demo-") as scratch:
        offsets_file = Path(scratch) / "offsets.json"
        offsets_file.write_bytes(snapshot_to_json(snapshot))
        options = RunOptions(now_ms=now_ms, offsets=OffsetsChoice(file=str(offsets_file)))
        result = run_retention(store, parse_config(DEMO_CONFIG, source="demo config"), options)
    _section("run (retention, --engine inline)", render_text(result))
    # export writes an empty active segment for a partition retention emptied, as Kafka holds one
    return sum(max(1, len(state.segments)) for state in resolve_manifest(store, None).partitions)


def _describe(store: ObjectStore) -> None:
    from kafka_segments.views.describe import describe_lake

    _section("describe", describe_lake(store).to_text())


def _dump(store: ObjectStore) -> None:
    from kafka_segments.cli.inspect_cmd import batch_line, dump_record
    from kafka_segments.demo import SAMPLE_TOPIC
    from kafka_segments.lake.reader import iter_visible_batches, partition_state, resolve_root

    topic_partition = TopicPartition(SAMPLE_TOPIC, 1)  # partition 0 was wholly consumed and deleted
    state = partition_state(store, resolve_root(store, None), topic_partition)
    lines = [f"{topic_partition}: log start offset {state.log_start_offset}, end {state.log_end_offset}"]
    for batch in iter_visible_batches(store, state):
        lines.append(batch_line(batch.header, True))
        for record in batch.records:
            dump_record(batch.header, record, lines)
    _section(f"dump {topic_partition}", "\n".join(lines))


def _export(store: ObjectStore, target: Path) -> list[Path]:
    from kafka_segments.lake.export import export_lake

    report = export_lake(store, target)
    _section(f"export to {target}", report.to_text())
    return sorted(
        (path for path in target.rglob("*") if path.is_file() and path.parent != target),
        key=lambda path: (path.parent, path.stem, path.suffix != ".log", path.suffix),
    )


def _settle(store: ObjectStore) -> None:
    from kafka_segments.lake.gc import collect_garbage
    from kafka_segments.lake.recover import recover

    _section("recover", recover(store).to_text())
    _section("gc (dry run)", collect_garbage(store, dry_run=True).to_text())


def _inspect(paths: list[Path], *, records: bool) -> int:
    problems = 0
    lines = []
    for path in paths:
        report = inspect_file(path, records=records)
        lines.extend(report.lines)
        problems += report.problem is not None
    _section("inspect the exported log directory", "\n".join(lines))
    return problems


def _query(store: ObjectStore) -> None:
    """The compacted view of the sample topic, read as Arrow batches (``kafka_segments.reading``)."""
    from kafka_segments.demo import SAMPLE_TOPIC
    from kafka_segments.reading import read_lake

    options = {"subscribe": SAMPLE_TOPIC, "view": "latest", "kafka.isolation.level": "read_committed"}
    lines = [f"read_lake(lake, {options})"]
    for batch in read_lake(store, options):
        for row in batch.to_pylist():
            key = row["key"].decode(errors="replace")
            where = f"{row['topic']}-{row['partition']} offset {row['offset']}"
            lines.append(f"{where}: {key} = {row['value']!r}")
    _section("query: the compacted view (latest committed value per key)", "\n".join(lines))


def _section(title: str, body: str) -> None:
    sys.stdout.write(f"\n== {title} ==\n{body.rstrip()}\n")


def _summary(
    written: int, live: int, exported: list[Path], problems: int, seconds: float, output: str | None
) -> None:
    logs = sum(path.suffix == ".log" for path in exported)
    status = "OK" if problems == 0 and live == logs else "PROBLEMS FOUND"
    print(
        f"\ndemo {status}: {written} segments uploaded to the embedded S3 lake, adopted and committed, "
        "retention run, "
        f"{logs} exported and inspected with their {len(exported) - logs} rebuilt index files, "
        f"{problems} with problems, in {seconds:.1f} s"
        + (f"; the exported log directory is in {output}" if output else "")
    )


def _progress(message: str) -> None:
    print(f"[demo] {message}", file=sys.stderr, flush=True)
