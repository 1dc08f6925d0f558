"""A run's folder (``lake.run_folder``): ``run.json`` carries the request once, ``outcome.json`` records the
``RunOutcome`` itself, a first release's folders (``request.json``, outcomes without ``run_outcome``) are
still read, and no other module of the library writes into a run's folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kafka_segments.errors import ManifestFormatError, RunStateError
from kafka_segments.lake.layout import outcome_key, run_record_key
from kafka_segments.lake.run_folder import (
    LEGACY_REQUEST,
    read_outcome,
    read_run,
    run_file_key,
)
from kafka_segments.lake.runs import (
    DRY_RUN_REASON,
    NOTHING_TO_ADOPT_REASON,
    NOTHING_TO_CHANGE_REASON,
    Outcome,
    RunOutcome,
    Selection,
)
from kafka_segments.lake.transaction import LakeTransaction
from kafka_segments.offsets.snapshot_codec import load_snapshot_file
from kafka_segments.pipeline.offsets_input import ResolvedOffsets
from kafka_segments.pipeline.stages import (
    commit_staged,
    execute_run,
    prepare_run,
    read_run_offsets,
    reject_run,
)
from kafka_segments.storage import ObjectStore, Overwrite
from kit import FakeClock

from lake.retention_helpers import TP, config, group, topic_yaml, upload_fifteen_records, write_snapshot

pytestmark = pytest.mark.lake

NOW = 1_000_000
INCLUDE = Path(__file__).resolve().parents[2] / "include"


def _names(store: ObjectStore, run_id: str) -> set[str]:
    prefix = run_file_key(run_id, "")
    return {meta.key.removeprefix(prefix) for meta in store.list(prefix)}


def test_run_json_carries_the_request_and_no_request_json_is_written(
    store: ObjectStore, clock: FakeClock, tmp_path: Path
) -> None:
    upload_fifteen_records(store)
    snapshot = load_snapshot_file(
        str(write_snapshot(tmp_path / "s.json", [group("g", [(0, 7, NOW)])], taken_at_ms=NOW))
    )
    offsets = ResolvedOffsets(snapshot, None, "file", "a note")
    selection = Selection(topics=("t",), partitions=(TP,))
    record = prepare_run(
        store, now_ms=NOW, offsets=offsets, dry_run=True, selection=selection, labels={"k": "v"}, clock=clock
    )

    assert _names(store, record.run_id) == {"run.json", "offsets.json"}
    document = json.loads(store.get(run_record_key(record.run_id)))
    assert document["request"] == {
        "topics": ["t"],
        "partitions": [{"topic": TP.topic, "partition": TP.partition}],
        "offsets": {"snapshot_id": None, "origin": "file", "note": "a note"},
        "labels": {"k": "v"},
    }
    assert (document["now_ms"], document["dry_run"]) == (NOW, True)  # each fact once, beside the request
    stored = read_run(store, record.run_id)
    assert stored == record
    assert (stored.selection, stored.labels) == (selection, {"k": "v"})
    resolved = read_run_offsets(store, stored)
    assert resolved is not None
    assert (resolved.snapshot, resolved.origin, resolved.note) == (snapshot, "file", "a note")


def test_a_first_release_folder_with_request_json_is_still_read(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store)
    record = prepare_run(store, now_ms=NOW, offsets=None, dry_run=False, clock=clock)
    old_record = json.loads(store.get(run_record_key(record.run_id)))
    del old_record["request"]
    store.put(run_record_key(record.run_id), json.dumps(old_record).encode(), mode=Overwrite())
    old_request = {
        "format_version": 1,
        "run_id": record.run_id,
        "now_ms": NOW,
        "base_version": None,
        "dry_run": False,
        "topics": ["t"],
        "partitions": None,
        "offsets": None,
        "labels": {"airflow_run_id": "manual__1"},
    }
    store.put(run_file_key(record.run_id, LEGACY_REQUEST), json.dumps(old_request).encode(), mode=Overwrite())

    stored = read_run(store, record.run_id)
    assert stored.selection == Selection(topics=("t",))
    assert stored.labels == {"airflow_run_id": "manual__1"}
    staged = execute_run(store, config(topic_yaml(retention_ms=NOW - 25)), record.run_id, clock=clock)
    assert staged.result.plan.partitions  # the old request's selection plans topic t


@pytest.mark.parametrize(
    ("dry_run", "retention_ms", "expected", "outcome", "reason"),
    [
        (False, NOW - 25, RunOutcome.COMMITTED, Outcome.COMMITTED, ""),
        (True, NOW - 25, RunOutcome.DRY_RUN, Outcome.ABORTED, DRY_RUN_REASON),
        (False, -1, RunOutcome.NOTHING_TO_CHANGE, Outcome.ABORTED, NOTHING_TO_CHANGE_REASON),
    ],
)
def test_outcome_json_records_the_run_outcome(
    store: ObjectStore,
    clock: FakeClock,
    dry_run: bool,
    retention_ms: int,
    expected: RunOutcome,
    outcome: Outcome,
    reason: str,
) -> None:
    upload_fifteen_records(store, segment_ts=[10, 20, 30])
    if expected is RunOutcome.NOTHING_TO_CHANGE:  # a committed head, then a run that changes nothing
        first = prepare_run(store, now_ms=NOW, offsets=None, dry_run=False, clock=clock)
        execute_run(store, config(topic_yaml(retention_ms=retention_ms)), first.run_id, clock=clock)
        commit_staged(store, first.run_id, require_validation=False, clock=clock)
    record = prepare_run(store, now_ms=NOW, offsets=None, dry_run=dry_run, clock=clock)
    execute_run(store, config(topic_yaml(retention_ms=retention_ms)), record.run_id, clock=clock)
    commit_staged(store, record.run_id, require_validation=False, clock=clock)

    document = json.loads(store.get(outcome_key(record.run_id)))
    assert (document["run_outcome"], document["outcome"], document["reason"]) == (
        expected.value,
        outcome.value,
        reason,
    )
    ended = read_outcome(store, record.run_id)
    assert ended is not None
    assert (ended.run_outcome, ended.outcome) == (expected, outcome)


def test_a_rejected_run_and_a_failed_run_record_why(store: ObjectStore, clock: FakeClock) -> None:
    upload_fifteen_records(store)
    rejected = prepare_run(store, now_ms=NOW, offsets=None, dry_run=False, clock=clock)
    reject_run(store, rejected.run_id, reason="validation failed: expect_x", clock=clock)
    failed = LakeTransaction.begin(store, now_ms=NOW, operation="run", clock=clock)
    with pytest.raises(ValueError, match="boom"), failed:
        raise ValueError("boom")

    ended = read_outcome(store, rejected.run_id)
    assert ended is not None
    assert (ended.run_outcome, ended.label) == (RunOutcome.REJECTED, "validation failed: expect_x")
    ended = read_outcome(store, failed.run_id)
    assert ended is not None
    assert ended.run_outcome is RunOutcome.ABORTED
    assert ended.reason == "run failed before its commit: boom"
    with pytest.raises(RunStateError, match="was aborted: validation failed"):
        LakeTransaction.resume(store, rejected.run_id, clock=clock).ended()


@pytest.mark.parametrize(
    ("outcome", "reason", "expected"),
    [
        ("committed", "", RunOutcome.COMMITTED),
        ("aborted", DRY_RUN_REASON, RunOutcome.DRY_RUN),
        ("aborted", NOTHING_TO_CHANGE_REASON, RunOutcome.NOTHING_TO_CHANGE),
        ("aborted", NOTHING_TO_ADOPT_REASON, RunOutcome.NOTHING_TO_CHANGE),
        ("aborted", "version 3 was committed by run r9", RunOutcome.ABORTED),
        ("aborted", "validation failed: expect_x", RunOutcome.ABORTED),
    ],
)
def test_a_first_release_outcome_is_decoded_once(
    store: ObjectStore, outcome: str, reason: str, expected: RunOutcome
) -> None:
    document = {
        "format_version": 1,
        "run_id": "r1",
        "outcome": outcome,
        "version": 1 if outcome == "committed" else None,
        "finished_at_ms": 5,
        "reason": reason,
    }
    store.put(outcome_key("r1"), json.dumps(document).encode(), mode=Overwrite())
    ended = read_outcome(store, "r1")
    assert ended is not None
    assert (ended.run_outcome, ended.reason) == (expected, reason)


def test_an_outcome_that_contradicts_itself_is_refused_naming_the_field(store: ObjectStore) -> None:
    document = {
        "format_version": 1,
        "run_id": "r1",
        "outcome": "aborted",
        "run_outcome": "committed",
        "version": 1,
        "finished_at_ms": 5,
        "reason": "",
    }
    store.put(outcome_key("r1"), json.dumps(document).encode(), mode=Overwrite())
    with pytest.raises(ManifestFormatError, match=r"outcome\.json.*run_outcome"):
        read_outcome(store, "r1")


ALLOWED = {
    "kafka_segments/lake/run_folder.py",  # the owner
    "kafka_segments/lake/layout.py",  # the keys' syntax
    "kafka_segments/lake/run_folders.py",  # gc deletes whole folders (it reads none)
}


def test_only_the_run_folder_module_names_keys_inside_a_run_folder() -> None:
    """No other module builds a key inside ``runs/<id>/`` (``run_prefix``, ``outcome_key``,
    ``run_record_key``, ``staged_manifest_key``): reading or writing a run's folder goes through
    ``lake.run_folder``."""
    pattern = re.compile(r"\b(run_prefix|outcome_key|run_record_key|staged_manifest_key)\(")
    offenders = sorted(
        str(path.relative_to(INCLUDE))
        for path in INCLUDE.rglob("*.py")
        if str(path.relative_to(INCLUDE)) not in ALLOWED and pattern.search(path.read_text())
    )
    assert offenders == []
