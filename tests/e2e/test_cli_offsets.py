"""``kafka-segments offsets snapshot`` as a user runs it: a real process taking a snapshot from a JSON file,
from the lake's archived ``__consumer_offsets`` and from a ``kafka://`` URI, storing it in a local or S3 lake
and pinning it for ``--now``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from cli_harness import cli
from e2e.s3_cli import s3_lake_env
from kafka_segments.demo import sample_topic
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.offsets.snapshot_codec import snapshot_from_json, snapshot_to_json
from kafka_segments.offsets.snapshot_store import list_pins, list_snapshots, read_pin, read_snapshot
from kafka_segments.segment.files import segment_file_name
from kafka_segments.storage import LocalStore, ObjectStore
from unit.coordinator_records import (
    CoordinatorLog,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
)

pytestmark = pytest.mark.e2e

NOW = "2025-11-21T04:40:00Z"
NOW_MS = 1_763_700_000_000


def snapshot_document(*, offset: int = 1200, errors: bool = False) -> dict[str, Any]:
    """The contract's example snapshot, with or without its error entry."""
    return {
        "format_version": 1,
        "taken_at_ms": 1763700000000,
        "source": "file",
        "groups": [
            {
                "group_id": "billing",
                "state": "Stable",
                "protocol_type": "consumer",
                "state_timestamp_ms": 1763690000000,
                "subscribed_topics": ["clickstream"],
                "offsets": [
                    {
                        "topic": "clickstream",
                        "partition": 0,
                        "offset": offset,
                        "commit_timestamp_ms": 1763699000000,
                        "expire_timestamp_ms": None,
                    },
                    {
                        "topic": "orders",
                        "partition": 2,
                        "offset": 7,
                        "commit_timestamp_ms": None,
                        "expire_timestamp_ms": None,
                    },
                ],
            },
            {
                "group_id": "audit",
                "state": "Empty",
                "protocol_type": "",
                "state_timestamp_ms": None,
                "subscribed_topics": None,
                "offsets": [],
            },
        ],
        "errors": [{"group_id": "fraud", "error": "COORDINATOR_NOT_AVAILABLE"}] if errors else [],
    }


def write_file(path: Path, document: dict[str, Any]) -> Path:
    path.write_text(json.dumps(document))
    return path


def new_lake(tmp_path: Path) -> tuple[Path, LocalStore]:
    root = tmp_path / "lake"
    root.mkdir()
    return root, LocalStore(root)


# ---------------------------------------------------------------------------------------------- file source


def test_a_file_snapshot_is_stored_pinned_and_reported_as_json(tmp_path: Path) -> None:
    root, store = new_lake(tmp_path)
    source = write_file(tmp_path / "offsets.json", snapshot_document())

    result = cli("offsets", "snapshot", "--lake", str(root), "--source", str(source), "--now", NOW, "--json")

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    snapshot_id = report["snapshot_id"]
    assert report["key"] == f"_kafka_segments/offsets/{snapshot_id}.json"
    assert report["location"] == str(root / report["key"])
    assert list_snapshots(store) == [snapshot_id]
    stored = read_snapshot(store, snapshot_id)
    assert stored == snapshot_from_json(source.read_bytes(), location=str(source))
    assert report["snapshot"] == json.loads(snapshot_to_json(stored))
    assert report["pin"]["now_ms"] == NOW_MS
    assert report["pin"]["snapshot_id"] == snapshot_id
    assert report["pin"]["reused"] is False
    pin = read_pin(store, NOW_MS)
    assert pin is not None
    assert pin.snapshot_id == snapshot_id


def test_a_second_snapshot_for_the_same_now_keeps_the_first_pin(tmp_path: Path) -> None:
    root, store = new_lake(tmp_path)
    first = write_file(tmp_path / "first.json", snapshot_document(offset=1200))
    second = write_file(tmp_path / "second.json", snapshot_document(offset=1300))
    taken = cli(
        "offsets", "snapshot", "--lake", str(root), "--source", str(first), "--now", str(NOW_MS), "--json"
    )
    first_id = json.loads(taken.stdout)["snapshot_id"]

    result = cli("offsets", "snapshot", "--lake", str(root), "--source", str(second), "--now", NOW)

    assert result.returncode == 0, result.stderr
    assert "already existed (reused" in result.stdout
    assert f"use snapshot {first_id}, not this one" in result.stdout
    assert len(list_snapshots(store)) == 2  # the second snapshot is stored all the same
    pin = read_pin(store, NOW_MS)
    assert pin is not None
    assert pin.snapshot_id == first_id


def test_the_same_file_twice_is_one_snapshot(tmp_path: Path) -> None:
    root, store = new_lake(tmp_path)
    source = write_file(tmp_path / "offsets.json", snapshot_document())

    runs = [
        cli("offsets", "snapshot", "--lake", str(root), "--source", str(source), "--json") for _ in range(2)
    ]

    assert [run.returncode for run in runs] == [0, 0], runs[1].stderr
    assert json.loads(runs[0].stdout)["snapshot_id"] == json.loads(runs[1].stdout)["snapshot_id"]
    assert json.loads(runs[0].stdout)["pin"] is None
    assert len(list_snapshots(store)) == 1
    assert list_pins(store) == []


def test_the_text_report_lists_groups_offsets_and_errors_and_exits_1_on_errors(tmp_path: Path) -> None:
    root, store = new_lake(tmp_path)
    source = write_file(tmp_path / "offsets.json", snapshot_document(errors=True))

    result = cli("offsets", "snapshot", "--lake", str(root), "--source", str(source), "--now", NOW)

    assert result.returncode == 1
    assert result.stderr == (
        "kafka-segments offsets snapshot: 1 group(s) could not be read: fraud (COORDINATOR_NOT_AVAILABLE)\n"
    )
    (snapshot_id,) = list_snapshots(store)  # stored all the same
    lines = result.stdout.splitlines()
    assert lines[0] == f"offset snapshot {snapshot_id}"
    assert lines[1] == f"stored at {root / '_kafka_segments/offsets' / (snapshot_id + '.json')}"
    assert lines[2] == "source file, taken at 2025-11-21T04:40:00.000Z (1763700000000)"
    assert lines[3] == (
        "not pinned for now 2025-11-21T04:40:00.000Z (1763700000000): some groups could not be read"
    )
    assert lines[4] == "2 group(s), 2 committed offset(s), 1 error(s)"
    assert lines[5].startswith(
        "group 'audit': Empty since unknown, classic group, protocol none (standalone)"
    )
    assert lines[6].startswith("group 'billing': Stable since 2025-11-21T01:53:20.000Z")
    assert lines[6].endswith("subscribed: clickstream")
    assert lines[7] == "  clickstream-0 offset 1200, committed 2025-11-21T04:23:20.000Z"
    assert lines[8] == "  orders-2 offset 7, committed unknown"
    assert lines[9] == "error 'fraud': COORDINATOR_NOT_AVAILABLE"


def test_a_snapshot_with_unreadable_groups_is_not_pinned(tmp_path: Path) -> None:
    """A pin is never replaced, so pinning an incomplete snapshot would keep every run at that time from
    using a complete one taken once the groups can be read."""
    root, store = new_lake(tmp_path)
    incomplete = write_file(tmp_path / "incomplete.json", snapshot_document(errors=True))
    complete = write_file(tmp_path / "complete.json", snapshot_document())

    first = cli(
        "offsets", "snapshot", "--lake", str(root), "--source", str(incomplete), "--now", NOW, "--json"
    )
    second = cli(
        "offsets", "snapshot", "--lake", str(root), "--source", str(complete), "--now", NOW, "--json"
    )

    assert first.returncode == 1
    assert json.loads(first.stdout)["pin"] is None
    assert "some groups could not be read" in json.loads(first.stdout)["not_pinned"]
    assert second.returncode == 0, second.stderr
    report = json.loads(second.stdout)
    assert report["pin"]["reused"] is False
    assert report["not_pinned"] is None
    pin = read_pin(store, NOW_MS)
    assert pin is not None
    assert pin.snapshot_id == report["snapshot_id"]


def test_group_and_topic_filters_keep_only_what_was_asked(tmp_path: Path) -> None:
    root, _ = new_lake(tmp_path)
    source = write_file(tmp_path / "offsets.json", snapshot_document(errors=True))

    result = cli(
        "offsets", "snapshot", "--lake", str(root), "--source", str(source),
        "--group", "billing", "--topic", "orders", "--json",
    )  # fmt: skip

    assert result.returncode == 0, result.stderr  # the error was for another group
    snapshot = json.loads(result.stdout)["snapshot"]
    assert [group["group_id"] for group in snapshot["groups"]] == ["billing"]
    assert [offset["topic"] for offset in snapshot["groups"][0]["offsets"]] == ["orders"]
    assert snapshot["errors"] == []


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (None, "cannot read the snapshot file: No such file or directory"),
        ("not json", "snapshot is not valid JSON (line 1 column 1"),
        ("negative", "groups[0].offsets[0].offset: -5 is negative"),
        ("version", "format_version: 2 is not supported"),
    ],
    ids=["missing", "not-json", "negative-offset", "unknown-version"],
)
def test_a_bad_snapshot_file_exits_2_naming_the_file_and_field(
    tmp_path: Path, content: str | None, fragment: str
) -> None:
    root, store = new_lake(tmp_path)
    path = tmp_path / "offsets.json"
    if content == "not json":
        path.write_text("offsets:\n  billing: 1200\n")
    elif content == "negative":
        write_file(path, snapshot_document(offset=-5))
    elif content == "version":
        write_file(path, {**snapshot_document(), "format_version": 2})

    result = cli("offsets", "snapshot", "--lake", str(root), "--source", str(path), "--now", NOW)

    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"kafka-segments offsets snapshot: {path}: ")
    assert fragment in result.stderr
    assert list_snapshots(store) == []
    assert list_pins(store) == []


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--source", "http://offsets.example/x.json"), "unsupported scheme 'http'"),
        (("--source", "kafka://broker-without-port"), "is not host:port"),
        (("--source", "kafka://b:9092", "--topic", "bad topic"), "illegal"),
        (("--source", "x.json", "--now", "yesterday"), "neither epoch milliseconds nor an ISO-8601"),
    ],
    ids=["unknown-scheme", "kafka-without-port", "bad-topic", "bad-now"],
)
def test_bad_arguments_exit_2_with_a_reason(tmp_path: Path, args: tuple[str, ...], fragment: str) -> None:
    root, store = new_lake(tmp_path)

    result = cli("offsets", "snapshot", "--lake", str(root), *args, timeout=30)

    assert result.returncode == 2
    assert fragment in result.stderr
    assert list_snapshots(store) == []


def test_offsets_without_a_subcommand_shows_its_usage() -> None:
    result = cli("offsets")

    assert result.returncode == 2
    assert "snapshot" in result.stderr


def test_a_missing_lake_directory_exits_2(tmp_path: Path) -> None:
    source = write_file(tmp_path / "offsets.json", snapshot_document())

    result = cli("offsets", "snapshot", "--lake", str(tmp_path / "nowhere"), "--source", str(source))

    assert result.returncode == 2
    assert "no lake at" in result.stderr


def test_a_snapshot_is_stored_in_an_s3_lake(tmp_path: Path) -> None:
    source = write_file(tmp_path / "offsets.json", snapshot_document())
    with s3_lake_env("offsets-cli", "lake", lambda store: None) as env:
        taken = cli("offsets", "snapshot", "--lake", "s3://offsets-cli/lake", "--source", str(source),
                    "--now", NOW, "--json", env=env)  # fmt: skip
        again = cli("offsets", "snapshot", "--lake", "s3://offsets-cli/lake", "--source", str(source),
                    "--now", NOW, "--json", env=env)  # fmt: skip

    assert taken.returncode == 0, taken.stderr
    assert again.returncode == 0, again.stderr
    first, second = json.loads(taken.stdout), json.loads(again.stdout)
    assert first["location"] == f"s3://offsets-cli/lake/{first['key']}"
    assert (first["pin"]["reused"], second["pin"]["reused"]) == (False, True)
    assert second["snapshot_id"] == first["snapshot_id"]


# ---------------------------------------------------------------------------------------------- lake source


def archive_consumer_offsets(store: ObjectStore) -> None:
    """One ``__consumer_offsets`` partition: a Stable consumer group that committed two offsets."""
    log = CoordinatorLog(timestamp=NOW_MS - 60_000)
    log.append(
        (group_metadata_key("billing"), group_metadata_value(current_state_timestamp=NOW_MS - 3_600_000)),
        (
            offset_commit_key("billing", "clickstream", 0),
            offset_commit_value(1200, commit_timestamp=NOW_MS - 70_000),
        ),
        (
            offset_commit_key("billing", "clickstream", 1),
            offset_commit_value(40, commit_timestamp=NOW_MS - 65_000),
        ),
    )
    for kind, data in log.segment().by_kind().items():
        if data:
            store.put(f"__consumer_offsets-0/{segment_file_name(0, kind)}", data)


def test_the_lake_source_reads_the_archived_consumer_offsets(tmp_path: Path) -> None:
    root, store = new_lake(tmp_path)
    archive_consumer_offsets(store)
    adopt(store, now_ms=NOW_MS)

    result = cli("offsets", "snapshot", "--lake", str(root), "--source", "lake", "--now", NOW, "--json")

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    snapshot = report["snapshot"]
    assert snapshot["source"] == "lake"
    assert snapshot["taken_at_ms"] == NOW_MS - 60_000  # the newest archived record
    (group,) = snapshot["groups"]
    assert group["group_id"] == "billing"
    assert [(o["topic"], o["partition"], o["offset"]) for o in group["offsets"]] == [
        ("clickstream", 0, 1200),
        ("clickstream", 1, 40),
    ]
    assert read_pin(store, NOW_MS) is not None


def test_the_lake_source_without_consumer_offsets_is_refused(tmp_path: Path) -> None:
    root, store = new_lake(tmp_path)
    for segment in sample_topic():
        for key, data in segment.objects().items():
            store.put(key, data)
    adopt(store, now_ms=NOW_MS)

    result = cli("offsets", "snapshot", "--lake", str(root), "--source", "lake", "--now", NOW)

    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "has no __consumer_offsets partitions" in result.stderr
    assert list_snapshots(store) == []
    assert list_pins(store) == []


def test_the_lake_source_on_an_empty_lake_is_refused(tmp_path: Path) -> None:
    root, store = new_lake(tmp_path)

    result = cli("offsets", "snapshot", "--lake", str(root), "--source", "lake")

    assert result.returncode == 1
    assert "no committed manifest" in result.stderr
    assert list_snapshots(store) == []


# ---------------------------------------------------------------------------------------------- kafka source


def test_an_unreachable_cluster_fails_cleanly_and_quickly(tmp_path: Path) -> None:
    root, store = new_lake(tmp_path)
    started = time.monotonic()

    result = cli(
        "offsets", "snapshot", "--lake", str(root), "--source", "kafka://127.0.0.1:1", "--timeout-ms", "1500",
        timeout=60,
    )  # fmt: skip

    assert time.monotonic() - started < 30
    assert result.returncode == 1
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith("kafka-segments offsets: kafka://127.0.0.1:1: cannot list consumer groups")
    assert "Traceback" not in result.stderr
    assert list_snapshots(store) == []
