"""A compaction run's staged output (or its plan.json) edited to break one cleaner rule is caught by the
expectations named after that rule: validation fails, the run is rejected, ``commit_staged`` refuses, and the
head manifest and the input segments stay as they were.

Every case starts from the same staged run (``quality.compaction_lake``: ``c-0`` cleaned into one segment
``[0-7]`` below the active ``[8]``, ``cd-0`` cleaned and then emptied by retention.ms, ``t-0`` delete-only),
copied from a template so the run is staged once per module.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kafka_segments.config import Config
from kafka_segments.errors import RunStateError
from kafka_segments.lake.codec import manifest_from_json, manifest_to_json
from kafka_segments.lake.history import read_head
from kafka_segments.lake.run_folder import (
    INPUT_MANIFEST,
    PLAN,
    read_outcome,
    read_run,
    run_file_key,
    write_run_json,
)
from kafka_segments.lake.runs import Outcome
from kafka_segments.lake.staging import retire
from kafka_segments.pipeline.stages import VALIDATION, commit_staged, read_run_json
from kafka_segments.state import Manifest, OpenTransaction, SegmentEntry
from kafka_segments.storage import LocalStore, Overwrite
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock
from lake.retention_helpers import config
from segment_quality import ValidationFailedError, validate_run

from quality.compaction_lake import C0, CD0, END_OFFSET, T0, YAML, compaction_config, staged_compaction_run
from quality.helpers import partition_of, rewrite_staged, with_partition

pytestmark = pytest.mark.quality

Edit = Callable[[LocalStore, str], None]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A lake with the compaction run staged (not validated), and the run id."""
    root = tmp_path_factory.mktemp("compaction-template") / "lake"
    run_id = staged_compaction_run(LocalStore(root), FakeClock())
    return root, run_id


# ------------------------------------------------------------------------------------------------- editing


def _staged(edit: Callable[[Manifest, str], Manifest]) -> Edit:
    def apply(store: LocalStore, run_id: str) -> None:
        rewrite_staged(store, run_id, lambda manifest: edit(manifest, run_id))

    return apply


def _partition(tp: TopicPartition, **changes: object) -> Edit:
    return _staged(lambda manifest, _run_id: with_partition(manifest, tp, **changes))


def _segments(
    tp: TopicPartition, edit: Callable[[tuple[SegmentEntry, ...]], tuple[SegmentEntry, ...]]
) -> Edit:
    return _staged(lambda m, _run_id: with_partition(m, tp, segments=edit(partition_of(m, tp).segments)))


def _output(**changes: object) -> Edit:
    """Change ``c-0``'s output segment (the first live one)."""
    return _segments(C0, lambda segments: (dataclasses.replace(segments[0], **changes), *segments[1:]))


def _output_at(base_offset: int) -> Edit:
    """Move ``c-0``'s output segment to ``base_offset`` (its key too: the manifest codec checks the name)."""

    def edit(manifest: Manifest, run_id: str) -> Manifest:
        state = partition_of(manifest, C0)
        key = f"{C0.dir_name}/{base_offset:020d}-{run_id}.log"
        moved = dataclasses.replace(state.segments[0], base_offset=base_offset, key=key)
        return with_partition(manifest, C0, segments=(moved, *state.segments[1:]))

    return _staged(edit)


def _plan(edit: Callable[[dict[str, Any]], None]) -> Edit:
    def apply(store: LocalStore, run_id: str) -> None:
        document = read_run_json(store, run_id, PLAN)
        edit(document)
        write_run_json(store, run_id, PLAN, document)

    return apply


def _round(tp: TopicPartition, **changes: object) -> Edit:
    """Change what plan.json's compaction section says about ``tp`` (adding it when it is not listed)."""

    def edit(document: dict[str, Any]) -> None:
        partitions = document["compaction"]["partitions"]
        found = [p for p in partitions if (p["topic"], p["partition"]) == (tp.topic, tp.partition)]
        if not found:
            found = [{"topic": tp.topic, "partition": tp.partition}]
            partitions.append(found[0])
        found[0].update(changes)

    return _plan(edit)


def _skip_in_plan(tp: TopicPartition) -> Edit:
    def edit(document: dict[str, Any]) -> None:
        for item in document["plan"]["partitions"]:
            if (item["topic"], item["partition"]) == (tp.topic, tp.partition):
                item["skipped"] = "quarantined"

    return _plan(edit)


def _open_transaction_in_input(tp: TopicPartition, first_offset: int) -> Edit:
    def apply(store: LocalStore, run_id: str) -> None:
        key = run_file_key(run_id, INPUT_MANIFEST)
        manifest = manifest_from_json(store.get(key), location=key)
        txn = OpenTransaction(producer_id=7, producer_epoch=0, first_offset=first_offset)
        store.put(
            key, manifest_to_json(with_partition(manifest, tp, open_transactions=(txn,))), mode=Overwrite()
        )

    return apply


def _replace_the_active_segment(manifest: Manifest, run_id: str, *, store: LocalStore) -> Manifest:
    state = partition_of(manifest, C0)
    active = state.segments[-1]
    entry = retire(active, C0, read_run(store, run_id), reason="compaction", delete_delay_ms=60_000)
    edited = with_partition(manifest, C0, segments=state.segments[:-1])
    return dataclasses.replace(edited, retired=(*edited.retired, entry))


def _replacing_the_active_segment(store: LocalStore, run_id: str) -> None:
    rewrite_staged(store, run_id, lambda manifest: _replace_the_active_segment(manifest, run_id, store=store))


def _output_past_the_round_end(segments: tuple[SegmentEntry, ...]) -> tuple[SegmentEntry, ...]:
    output = segments[0]
    extra = dataclasses.replace(
        output, key=output.key.replace("00000000000000000000-", "00000000000000000009-")
    )
    empty = dataclasses.replace(extra, base_offset=9, last_offset=None, size=0, record_count=0, batch_count=0)
    return (*segments, empty)


def _compaction_as_reason(manifest: Manifest, _run_id: str) -> Manifest:
    retired = [
        dataclasses.replace(item, reason="compaction") if item.topic_partition == T0 else item
        for item in manifest.retired
    ]
    return dataclasses.replace(manifest, retired=tuple(retired))


def _checkpoints_outside_the_log(manifest: Manifest, _run_id: str) -> Manifest:
    reset = with_partition(manifest, CD0, cleaner_checkpoint=END_OFFSET + 1)  # the new log start, not the end
    return with_partition(reset, C0, cleaner_checkpoint=10)  # past the log end offset 9


CASES = [
    pytest.param(
        _round(T0, status="cleaned", end_offset=5),
        {"round-only-for-compacted-topics", "cleaned-partition-has-a-checkpoint"},
        id="a-round-of-a-delete-only-topic",
    ),
    pytest.param(
        _skip_in_plan(C0),
        {"round-only-in-a-planned-partition", "unplanned-partition-keeps-its-segments"},
        id="a-round-in-a-partition-the-plan-skipped",
    ),
    pytest.param(
        _round(C0, end_offset=None), {"round-has-an-end-offset"}, id="a-round-without-an-end-offset"
    ),
    pytest.param(
        _round(C0, end_offset=9),
        {"round-ends-at-or-below-the-active-segment", "checkpoint-is-the-round-end-offset"},
        id="a-round-into-the-active-segment",
    ),
    pytest.param(
        _open_transaction_in_input(C0, 5),
        {"round-ends-at-or-below-the-last-stable-offset"},
        id="a-round-past-an-open-transaction",
    ),
    pytest.param(
        _partition(C0, cleaner_checkpoint=None),
        {"cleaned-partition-has-a-checkpoint"},
        id="no-checkpoint-after-a-round",
    ),
    pytest.param(
        _staged(_checkpoints_outside_the_log),
        {"checkpoint-is-the-round-end-offset", "checkpoint-at-or-before-the-log-end-offset"},
        id="checkpoints-outside-the-log",
    ),
    pytest.param(
        _output_at(2),
        {"round-keeps-the-first-segment-base", "written-segment-starts-at-a-replaced-segment"},
        id="output-based-at-its-first-kept-record",
    ),
    pytest.param(
        _partition(C0, log_start_offset=3),
        {"round-keeps-the-log-start-offset"},
        id="a-round-moving-the-log-start-offset",
    ),
    pytest.param(
        _replacing_the_active_segment,
        {"round-keeps-segments-from-its-end", "replaced-segments-below-the-round-end"},
        id="a-round-replacing-the-active-segment",
    ),
    pytest.param(
        _segments(C0, _output_past_the_round_end),
        {
            "round-adds-no-segment-from-its-end",
            "written-segment-below-the-round-end",
            "written-segment-starts-at-a-replaced-segment",
        },
        id="output-from-the-round-end-on",
    ),
    pytest.param(
        _staged(_compaction_as_reason),
        {"no-replacement-without-a-round"},
        id="a-compaction-replacement-in-a-delete-only-topic",
    ),
    pytest.param(
        _round(C0, status="skipped", end_offset=None),
        {
            "no-replacement-without-a-round",
            "written-segment-in-a-cleaned-partition",
            "retention-adds-no-segment",
            "segment-counts-reconcile",
            "byte-counts-reconcile",
        },
        id="a-plan-that-hides-its-round",
    ),
    pytest.param(
        _output(record_count=9, size=5_000),  # in: 8 records, 567 bytes (allowance 922); out: 5, 357
        {"round-only-drops-records", "round-bytes-within-the-rebuild-allowance"},
        id="output-grown-past-its-input",
    ),
]


@pytest.mark.parametrize(("edit", "expected"), CASES)
def test_a_broken_cleaner_rule_is_caught_and_the_run_rejected(
    template: tuple[Path, str], tmp_path: Path, edit: Edit, expected: set[str]
) -> None:
    store, run_id = _copy(template, tmp_path)
    edit(store, run_id)

    assert _rejected(store, run_id, compaction_config()) == expected


def test_a_round_while_the_cleaner_is_disabled_is_caught(template: tuple[Path, str], tmp_path: Path) -> None:
    """Validated with the configuration that disables the cleaner: no round, and no deletion pass for a
    compacted topic either (``UnifiedLog.deleteOldSegments`` skips them while log.cleaner.enable is false)."""
    store, run_id = _copy(template, tmp_path)
    disabled = config("broker:\n  log.cleaner.enable: false\n" + YAML)

    assert _rejected(store, run_id, disabled) == {
        "round-only-with-the-cleaner-enabled",
        "retention-ms-pass-runs",
    }


# ------------------------------------------------------------------------------------------------- checking


def _copy(template: tuple[Path, str], tmp_path: Path) -> tuple[LocalStore, str]:
    root, run_id = template
    shutil.copytree(root, tmp_path / "lake")
    return LocalStore(tmp_path / "lake"), run_id


def _rejected(store: LocalStore, run_id: str, cfg: Config) -> set[str]:
    """Validate; check that the run was rejected and nothing committed; return the failed invariants."""
    head = read_head(store)
    inputs = [segment for state in (head.partitions if head else ()) for segment in state.segments]
    with pytest.raises(ValidationFailedError) as caught:
        validate_run(store, run_id, config=cfg)
    ended = read_outcome(store, run_id)
    assert ended is not None
    assert ended.outcome is Outcome.ABORTED
    assert (ended.reason or "").startswith("validation failed:")
    with pytest.raises(RunStateError, match="aborted: validation failed"):
        commit_staged(store, run_id)
    assert read_head(store) == head
    assert all(store.head(segment.key).size == segment.size for segment in inputs)
    assert read_run_json(store, run_id, VALIDATION)["success"] is False
    report = caught.value.report
    assert report is not None
    for invariant in report.failed_invariants:
        assert invariant in str(caught.value)
    return set(report.failed_invariants)
