"""The read-side lake commands: ``describe``, ``dump`` and ``export`` (docs/lake.md).

The lake modules are imported when a command runs, so ``kafka-segments --help`` stays fast."""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

from kafka_segments.cli.arguments import bounded_int
from kafka_segments.cli.common import EXIT_OK, Commands, add_config, add_json, add_lake, add_now
from kafka_segments.cli.inspect_cmd import batch_document, batch_line, dump_record
from kafka_segments.cli.output import print_json

if TYPE_CHECKING:
    from kafka_segments.lake.reader import VisibleBatch
    from kafka_segments.state import PartitionState
    from kafka_segments.storage.base import ObjectStore


positive_version = bounded_int(
    minimum=1, what="a manifest version", too_small="manifest versions start at 1, not {value}"
)
"""``--version``'s type: a manifest version (an integer >= 1)."""
VERSION_HELP = "read this committed manifest version instead of the head"


def add_parsers(commands: Commands) -> None:
    """Add ``describe``, ``dump`` and ``export`` to the command line."""
    sub = commands.add_parser(
        "describe",
        help="per partition: log start/end offset, segments, bytes, records, cleaner checkpoint",
        description=(
            "Describe the lake's committed state from its manifest: per partition the log start and end "
            "offsets, segments, bytes, records, the range of the segments' largest timestamps, the cleaner "
            "checkpoint, the last stable offset, open transactions and the run that last changed it. With "
            "--config: each compacted partition's first dirty and first uncleanable offsets, dirty ratio, "
            "compaction delay and what a run at --now would do, and consumed retention per partition."
        ),
    )
    add_lake(sub)
    sub.add_argument(
        "--topic", dest="topics", action="extend", nargs="+", metavar="T", help="only these topics"
    )
    sub.add_argument("--version", type=positive_version, metavar="N", help=VERSION_HELP)
    add_config(
        sub,
        required=False,
        help=(
            "also show compaction (dirty ratio, compaction delay, the next run's verdict) and consumed "
            "retention (M, the group holding it back) per partition"
        ),
    )
    offsets = sub.add_mutually_exclusive_group()
    offsets.add_argument(
        "--offsets",
        metavar="SNAPSHOT.json",
        help="with --config or --html: the offsets (default: as a run at --now without one would use them)",
    )
    offsets.add_argument(
        "--offsets-source",
        metavar="SRC",
        help=(
            "with --config or --html: the offsets a run with this source would use ('lake': a snapshot of "
            "the lake's __consumer_offsets as of --now; a kafka:// cluster is not asked: the newest pin)"
        ),
    )
    add_now(sub, help="with --config: the time of the compaction and retention views (default: now)")
    add_json(sub)
    sub.add_argument(
        "--html",
        metavar="OUT",
        help=(
            "also write the lake view to OUT: one self-contained HTML page of every topic (partitions, "
            "consumer groups, history over the committed versions; docs/lake-view.md)"
        ),
    )
    sub.set_defaults(handler=run_describe)

    sub = commands.add_parser(
        "dump",
        help="print a partition's visible records with their batches, like kafka-dump-log.sh",
        description=(
            "Print the committed records of one partition at offsets >= its log start offset, one line per "
            "batch with its metadata and one per record (kafka-dump-log.sh --print-data-log's format)."
        ),
    )
    add_lake(sub)
    sub.add_argument("--topic", required=True, metavar="T")
    sub.add_argument("--partition", required=True, type=int, metavar="P")
    sub.add_argument("--version", type=positive_version, metavar="N", help=VERSION_HELP)
    add_json(sub)
    sub.set_defaults(handler=run_dump)

    sub = commands.add_parser(
        "export",
        help="write the committed state as a plain Kafka log directory",
        description=(
            "Write the committed state as a Kafka log directory: <topic>-<partition>/<base>.log with "
            "indexes rebuilt from the log, and log-start-offset-checkpoint and cleaner-offset-checkpoint. "
            "The target must be new or empty."
        ),
    )
    add_lake(sub)
    sub.add_argument("--to", required=True, metavar="DIR", help="a new or empty directory")
    sub.add_argument("--version", type=positive_version, metavar="N", help=VERSION_HELP)
    add_json(sub, help="print the report as one JSON document")
    sub.set_defaults(handler=run_export)


def open_lake(uri: str) -> ObjectStore:
    """The store of a lake URI; a local lake directory must exist.

    Raises:
        InvalidLakeUriError: not a lake URI.
        FileNotFoundError: a local lake path that does not exist.
    """
    from kafka_segments.storage import LocalStore, open_store

    store = open_store(uri)
    if isinstance(store, LocalStore) and not store.root.is_dir():
        raise FileNotFoundError(f"no lake at {store.root}: no such directory")
    return store


def run_describe(args: argparse.Namespace) -> int:
    from kafka_segments.lake.reader import resolve_root
    from kafka_segments.views.describe import describe_manifest, describe_root, topics_manifest

    store = open_lake(args.lake)
    root = resolve_root(store, args.version)
    context = None
    if getattr(args, "config", None):
        from kafka_segments.cli.compaction_view import describe_context

        context = describe_context(args)
    manifest = None  # read only for the compaction outlook and the consumed view (--config)
    if context is None:
        description = describe_root(root, location=store.describe(), topics=args.topics)
    else:
        manifest = topics_manifest(root, args.topics, location=store.describe())
        description = describe_manifest(
            manifest, location=store.describe(), topics=args.topics, compaction=context
        )
    document = description.to_dict()
    text = description.to_text()
    if context is not None or getattr(args, "html", None):
        from kafka_segments.cli.consumed_view import consumed_view, describe_offsets
        from kafka_segments.cli.lake_page import write_lake_page

        now_ms, offsets = describe_offsets(store, args, context)
        if context is not None and manifest is not None:
            text += consumed_view(
                manifest, args, document, config=context.config, now_ms=now_ms, offsets=offsets
            )
        if getattr(args, "html", None):
            write_lake_page(store, args, context, now_ms=now_ms, offsets=offsets, out=args.html)
    if args.json:
        print_json(document)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def run_export(args: argparse.Namespace) -> int:
    from kafka_segments.lake.export import export_lake

    report = export_lake(open_lake(args.lake), args.to, version=args.version)
    if args.json:
        print_json(report.to_dict())
    else:
        sys.stdout.write(report.to_text())
    return EXIT_OK


def run_dump(args: argparse.Namespace) -> int:
    from kafka_segments.lake.reader import partition_state, resolve_root
    from kafka_segments.topic_partition import TopicPartition

    store = open_lake(args.lake)
    root = resolve_root(store, args.version)
    state = partition_state(store, root, TopicPartition(args.topic, args.partition))
    if args.json:
        print_json(dump_document(store, root.version, state))
    else:
        for line in dump_lines(store, root.version, state):
            sys.stdout.write(line)  # not line + "\n": a record's line may be as large as the record
            sys.stdout.write("\n")
    return EXIT_OK


def _batches_by_segment(
    store: ObjectStore, state: PartitionState
) -> Iterator[tuple[str, int, list[VisibleBatch]]]:
    from kafka_segments.lake.reader import iter_visible_batches

    for key, group in itertools.groupby(iter_visible_batches(store, state), key=lambda b: b.segment.key):
        batches = list(group)
        yield key, batches[0].segment.base_offset, batches


def dump_lines(store: ObjectStore, version: int, state: PartitionState) -> Iterator[str]:
    """The text dump: a partition line, then per segment a ``Dumping`` line, a line per batch (as
    ``kafka-dump-log.sh``) and a ``| offset:`` line per visible record; a closing summary line.

    Raises:
        SegmentObjectMismatchError, CorruptRecordError: see ``reader.iter_visible_batches``.
    """
    yield (
        f"Dumping {state.topic_partition} at version {version} of {store.describe()}: "
        f"log start offset {state.log_start_offset}, log end offset {state.log_end_offset}, "
        f"last stable offset {state.last_stable_offset}"
    )
    from kafka_segments.lake.reader import iter_visible_batches

    batch_count = record_count = 0
    segment_key = None
    # batch by batch, none kept: what the dump holds at once is one batch's records and lines, whatever the
    # segment inflates to (a segment of decompression bombs each under the limit: docs/lake.md)
    for batch in iter_visible_batches(store, state):
        if batch.segment.key != segment_key:
            segment_key = batch.segment.key
            yield f"Segment {segment_key} (base offset {batch.segment.base_offset})"
        yield batch_line(batch.header, True)  # iter_visible_batches checked every CRC
        record_count += yield from _record_lines(batch)
        batch_count += 1
        del batch  # its records are cached on it: not held while the next batch is decompressed
    yield f"{batch_count} batch(es), {record_count} record(s) at offsets >= {state.log_start_offset}"


def _record_lines(batch: VisibleBatch) -> Generator[str, None, int]:
    """The ``| offset:`` line of each of ``batch``'s visible records; returns how many."""
    count = 0
    for record in batch.records:
        lines: list[str] = []
        dump_record(batch.header, record, lines)
        count += 1
        yield from lines
    return count


def dump_document(store: ObjectStore, version: int, state: PartitionState) -> dict[str, Any]:
    """The ``--json`` dump. Keys: ``lake``, ``version``, ``topic``, ``partition``, ``log_start_offset``,
    ``log_end_offset``, ``last_stable_offset``, ``segments`` (those with visible batches: ``key``,
    ``base_offset``, ``batches``: ``inspect --json``'s batch objects, each with its visible ``records``).

    Raises:
        SegmentObjectMismatchError, CorruptRecordError: see ``reader.iter_visible_batches``.
    """
    segments = []
    for key, base_offset, batches in _batches_by_segment(store, state):
        documents = []
        for batch in batches:
            document = batch_document(batch.header, True)
            scratch: list[str] = []
            document["records"] = [dump_record(batch.header, record, scratch) for record in batch.records]
            documents.append(document)
        segments.append({"key": key, "base_offset": base_offset, "batches": documents})
    return {
        "lake": store.describe(),
        "version": version,
        "topic": state.topic_partition.topic,
        "partition": state.topic_partition.partition,
        "log_start_offset": state.log_start_offset,
        "log_end_offset": state.log_end_offset,
        "last_stable_offset": state.last_stable_offset,
        "segments": segments,
    }
