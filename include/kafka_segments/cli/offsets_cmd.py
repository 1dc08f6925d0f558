"""``kafka-segments offsets snapshot`` (docs/retention.md, "Consumer-offset snapshots"): take a
consumer-offset snapshot, store it in the lake and, with ``--now``, pin it for that logical time.

A pin is never replaced, so a snapshot in which some groups could not be read is stored but not pinned: a
rerun once they can be read pins a complete one. Exit codes: 0 stored; 1 stored with group errors, or the
lake or source failed; 2 bad input."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kafka_segments.cli.arguments import bounded_int
from kafka_segments.cli.common import (
    EXIT_OK,
    EXIT_PROBLEM,
    EXIT_USAGE,
    REPORT_JSON_HELP,
    Commands,
    add_json,
    add_lake,
    add_now,
)
from kafka_segments.cli.output import print_json

if TYPE_CHECKING:
    from kafka_segments.offsets.snapshot_store import SnapshotPin, StoredSnapshot
    from kafka_segments.state import OffsetSnapshot
    from kafka_segments.storage.base import ObjectStore

_PROG = "kafka-segments offsets snapshot"

positive_ms = bounded_int(minimum=1, what="a number of milliseconds", too_small="must be >= 1, not {value}")


def run_snapshot(args: argparse.Namespace) -> int:
    from kafka_segments.cli.lake_cmds import open_lake
    from kafka_segments.offsets.snapshot_store import pin_snapshot, store_snapshot

    store = open_lake(args.lake)
    snapshot = _take(store, args)
    if snapshot is None:
        return EXIT_USAGE
    stored = store_snapshot(store, snapshot)
    pin = None
    not_pinned = None
    if args.now is not None and stored.snapshot.errors:
        # A pin is never replaced: pinning a snapshot with unreadable groups would keep every run at this
        # time from using a complete snapshot taken once the groups can be read again.
        not_pinned = f"not pinned for now {_iso(args.now)} ({args.now}): some groups could not be read"
    elif args.now is not None:
        pin = pin_snapshot(store, now_ms=args.now, snapshot_id=stored.snapshot_id, source=args.source)
    if args.json:
        print_json(snapshot_document(store, stored, pin, not_pinned=not_pinned))
    else:
        sys.stdout.write(snapshot_text(store, stored, pin, not_pinned=not_pinned))
    errors = stored.snapshot.errors
    if errors:
        listed = ", ".join(f"{e.group_id} ({e.error})" for e in errors)
        print(f"{_PROG}: {len(errors)} group(s) could not be read: {listed}", file=sys.stderr)
        return EXIT_PROBLEM
    return EXIT_OK


def _take(store: ObjectStore, args: argparse.Namespace) -> OffsetSnapshot | None:
    """The snapshot from ``--source``; ``None`` (reason on stderr) when the source is bad input."""
    from kafka_segments.errors import InvalidTopicError
    from kafka_segments.offsets.kafka_source import InvalidKafkaSourceError
    from kafka_segments.offsets.snapshot_fields import SnapshotFormatError
    from kafka_segments.offsets.sources import InvalidSnapshotSourceError, take_snapshot

    try:
        return take_snapshot(
            store,
            source=args.source,
            groups=args.groups,
            topics=args.topics,
            kafka_timeout_s=args.timeout_ms / 1000,
        )
    except (
        InvalidSnapshotSourceError,
        InvalidKafkaSourceError,
        InvalidTopicError,
        SnapshotFormatError,
    ) as exc:
        print(f"{_PROG}: {exc}", file=sys.stderr)
        return None


def _iso(ms: int | None) -> str:
    if ms is None:
        return "unknown"
    try:
        moment = datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return str(ms)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _pin_line(pin: SnapshotPin, stored: StoredSnapshot, location: str) -> str:
    when = f"now {_iso(pin.now_ms)} ({pin.now_ms})"
    if not pin.reused:
        return f"pinned for {when}: {location}"
    if pin.snapshot_id == stored.snapshot_id:
        return f"pin for {when} already existed for this snapshot (reused): {location}"
    return (
        f"pin for {when} already existed (reused, pinned at {_iso(pin.pinned_at_ms)}): runs at that time use "
        f"snapshot {pin.snapshot_id}, not this one"
    )


def _counts_line(snapshot: OffsetSnapshot) -> str:
    offsets = sum(len(group.offsets) for group in snapshot.groups)
    return f"{len(snapshot.groups)} group(s), {offsets} committed offset(s), {len(snapshot.errors)} error(s)"


def snapshot_text(
    store: ObjectStore, stored: StoredSnapshot, pin: SnapshotPin | None, *, not_pinned: str | None = None
) -> str:
    """The report for people: id and location, the pin (or why there is none), then every group with its
    offsets, and errors."""

    snapshot = stored.snapshot
    lines = [
        f"offset snapshot {stored.snapshot_id}",
        f"stored at {store.location(stored.key)}",
        f"source {snapshot.source}, taken at {_iso(snapshot.taken_at_ms)} ({snapshot.taken_at_ms})",
    ]
    if pin is not None:
        lines.append(_pin_line(pin, stored, store.location(pin.key)))
    elif not_pinned:
        lines.append(not_pinned)
    lines.append(_counts_line(snapshot))
    for group in snapshot.groups:
        subscribed = (
            "unknown" if group.subscribed_topics is None else ", ".join(group.subscribed_topics) or "none"
        )
        protocol = "none (standalone)" if group.is_standalone else group.protocol_type
        lines.append(
            f"group {group.group_id!r}: {group.state} since {_iso(group.state_timestamp_ms)}, "
            f"{group.group_type.value} group, protocol {protocol}, subscribed: {subscribed}"
        )
        for offset in group.offsets:
            extra = (
                f", expires {_iso(offset.expire_timestamp_ms)}"
                if offset.expire_timestamp_ms is not None
                else ""
            )
            extra += ", transactional commit pending" if offset.pending_transaction else ""
            lines.append(
                f"  {offset.topic}-{offset.partition} offset {offset.offset}, "
                f"committed {_iso(offset.commit_timestamp_ms)}{extra}"
            )
    lines.extend(f"error {error.group_id!r}: {error.error}" for error in snapshot.errors)
    return "\n".join(lines) + "\n"


def snapshot_document(
    store: ObjectStore, stored: StoredSnapshot, pin: SnapshotPin | None, *, not_pinned: str | None = None
) -> dict[str, Any]:
    """The ``--json`` report. Keys: ``snapshot_id``, ``key``, ``location``, ``pin`` (``null`` when not
    pinned; else ``now_ms``, ``key``, ``snapshot_id``, ``source``, ``pinned_at_ms``, ``reused``),
    ``not_pinned`` (why ``--now`` did not pin, else ``null``) and ``snapshot`` (the snapshot's canonical JSON
    document)."""
    from kafka_segments.offsets.snapshot_codec import snapshot_to_dict

    pin_document = None
    if pin is not None:
        pin_document = {
            "now_ms": pin.now_ms,
            "key": pin.key,
            "snapshot_id": pin.snapshot_id,
            "source": pin.source,
            "pinned_at_ms": pin.pinned_at_ms,
            "reused": pin.reused,
        }
    return {
        "snapshot_id": stored.snapshot_id,
        "key": stored.key,
        "location": store.location(stored.key),
        "pin": pin_document,
        "not_pinned": not_pinned,
        "snapshot": snapshot_to_dict(stored.snapshot),
    }


def _offsets_usage(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return EXIT_USAGE

    return handler


def add_parsers(commands: Commands) -> None:
    """Add ``offsets`` (with its subcommand ``snapshot``) to the command line."""
    offsets = commands.add_parser(
        "offsets",
        help="consumer-offset snapshots: take, store and pin them",
        description="Consumer-group offset snapshots, the input of consumed retention (offset expiry too).",
    )
    offsets.set_defaults(handler=_offsets_usage(offsets))
    subcommands = offsets.add_subparsers(dest="offsets_command", metavar="SUBCOMMAND")
    sub = subcommands.add_parser(
        "snapshot",
        help="take a snapshot of the groups' committed offsets, store it in the lake, optionally pin it",
        description=(
            "Take a snapshot of every consumer group's state and committed offsets from SRC, store it "
            "immutably under _kafka_segments/offsets/<sha256>.json and print its id. With --now, pin it for "
            "that logical time (a pin that exists is kept and reported: reruns and backfills use the same "
            "offsets). Exit code 1 when some groups could not be read (they are listed as errors; such a "
            "snapshot is stored but not pinned)."
        ),
    )
    add_lake(sub)
    sub.add_argument(
        "--source",
        required=True,
        metavar="SRC",
        help="kafka://host:port (a live cluster), lake (the archived __consumer_offsets) or a JSON file",
    )
    add_now(sub, help="pin for this logical time (ms or ISO-8601)")
    sub.add_argument(
        "--group", dest="groups", action="extend", nargs="+", metavar="G", help="only these groups"
    )
    sub.add_argument(
        "--topic", dest="topics", action="extend", nargs="+", metavar="T", help="only offsets of these topics"
    )
    sub.add_argument(
        "--timeout-ms",
        type=positive_ms,
        default=30_000,
        metavar="MS",
        help="bound on each Kafka Admin request of a kafka:// source (default 30000)",
    )
    add_json(sub, help=REPORT_JSON_HELP)
    sub.set_defaults(handler=run_snapshot)
