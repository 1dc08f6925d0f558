"""The suites themselves: every invariant reads columns its frame has, turns into a GX expectation, and —
the property that keeps the gate from crying wolf — Kafka's own deletion passes over any log pass every suite,
while a deletion a pass would not make is caught."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from kafka_segments.compaction import COMPACTION_REASON
from kafka_segments.config import Config, parse_config
from kafka_segments.retention.rules import DeletionReason, LogView, PassInputs, apply_retention
from kafka_segments.state import Manifest, PartitionState, RetiredObject, SegmentEntry, SegmentOrigin
from kafka_segments.topic_partition import TopicPartition
from segment_quality import compaction_suites, suites
from segment_quality.gx_runtime import expectation, run_suites
from segment_quality.spec import conditions_of
from segment_quality.staged.frames import PLANNED, PlanEntry, QualityFrames, frames_of
from segment_quality.suites import (
    COMPACTION_SUITES,
    FRAME_COLUMNS,
    REASONS,
    RETENTION_SUITES,
    RETIRE_REASONS,
    suite_specs,
)

pytestmark = pytest.mark.quality

TP = TopicPartition("t", 0)
NOW = 1_000_000


def test_every_invariant_reads_columns_of_its_frame_and_has_a_unique_name() -> None:
    names = [invariant.name for spec in suite_specs() for invariant in spec.invariants]
    assert len(names) == len(set(names))
    for spec in suite_specs():
        columns = FRAME_COLUMNS[spec.frame]
        for invariant in spec.invariants:
            assert set(invariant.columns()) <= set(columns), invariant.name
        assert set(spec.index_columns) <= set(columns)


def test_the_compaction_suites_run_after_the_retention_suites() -> None:
    assert suite_specs() == (*RETENTION_SUITES, *COMPACTION_SUITES)
    assert [spec.name for spec in suite_specs()] == [
        "retention.partitions",
        "retention.deletions",
        "compaction.partitions",
        "compaction.segments",
    ]


def test_each_invariant_becomes_a_gx_expectation_named_after_it() -> None:
    for spec in suite_specs():
        for invariant in spec.invariants:
            built = expectation(invariant)
            assert built.meta == {"invariant": invariant.name}
            assert invariant.rule in str(built.description)
            assert (built.row_condition is None) == (invariant.when is None)
            if isinstance(invariant.when, tuple):
                assert repr(built.row_condition).count(" AND ") == len(invariant.when) - 1


def test_the_suites_know_every_reason_a_run_retires_for() -> None:
    assert set(RETIRE_REASONS) == {reason.value for reason in DeletionReason} | {COMPACTION_REASON}
    conditioned = {
        condition.value
        for spec in suite_specs()
        for invariant in spec.invariants
        for condition in conditions_of(invariant.when)
        if condition.column == "reason"
    }
    assert conditioned <= set(RETIRE_REASONS)
    assert {reason.value for reason in DeletionReason} <= conditioned  # every pass has its own invariants


@pytest.mark.parametrize("module", [suites, compaction_suites], ids=lambda module: module.__name__)
def test_the_suites_spell_no_reason_themselves(module: ModuleType) -> None:
    """A reason written out in a suite is a copy that a new or renamed reason leaves behind."""
    tree = ast.parse(Path(str(module.__file__)).read_text())
    literals = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)}
    assert literals & set(RETIRE_REASONS) == set()


# ------------------------------------------------------------------------------------------------- property


def _entry(base: int, records: int, size: int, ts: int) -> SegmentEntry:
    return SegmentEntry(
        key=f"{TP.dir_name}/{base:020d}.log",
        base_offset=base,
        last_offset=base + records - 1 if records else None,
        size=size if records else 0,
        sha256="0" * 64,
        etag="e",
        record_count=records,
        batch_count=1 if records else 0,
        max_timestamp_ms=ts if records else -1,
        first_batch_max_timestamp_ms=ts if records else -1,
        last_modified_ms=ts,
        origin=SegmentOrigin.ADOPTED,
        run_id="r0",
    )


@st.composite
def logs(draw: st.DrawFn) -> PartitionState:
    """A partition: 1-6 segments (some may be empty), offset gaps, past and future timestamps."""
    segments: list[SegmentEntry] = []
    base = draw(st.integers(0, 50))
    for _ in range(draw(st.integers(1, 6))):
        records = draw(st.integers(0, 5))
        segment = _entry(base, records, draw(st.integers(1, 500)), draw(st.integers(0, NOW + 100)))
        segments.append(segment)
        base = segment.next_offset + draw(st.integers(0 if records else 1, 3))
    log_end = segments[-1].next_offset
    log_start = draw(st.integers(segments[0].base_offset, log_end))
    return PartitionState(TP, log_start, log_end, tuple(segments))


@st.composite
def configs(draw: st.DrawFn) -> str:
    retention_ms = draw(st.one_of(st.just(-1), st.integers(0, NOW)))
    consumed_ms = draw(st.integers(0, retention_ms if retention_ms >= 0 else NOW))
    return (
        "topics:\n  t:\n"
        f"    retention.ms: {retention_ms}\n"
        f"    retention.bytes: {draw(st.one_of(st.just(-1), st.integers(0, 2000)))}\n"
        f"    retention.commitoffset.enable: {str(draw(st.booleans())).lower()}\n"
        f"    retention.commitoffset.ms: {consumed_ms}\n"
    )


def _staged(state: PartitionState, config: Config, bound: int | None) -> tuple[Manifest, Manifest]:
    """The input and the staged manifest of Kafka's passes over ``state``."""
    outcome = apply_retention(
        LogView(state.segments, state.log_start_offset, state.log_end_offset),
        PassInputs(config.for_topic("t"), NOW, bound),
    )
    after = dataclasses.replace(state, log_start_offset=outcome.log_start_offset, segments=outcome.kept)
    retired = tuple(RetiredObject(d.segment.key, TP, 2, 0, 0, d.reason.value) for d in outcome.deletions)
    return (
        Manifest(1, None, "r0", "adopt", 0, NOW, (state,)),
        Manifest(2, 1, "r1", "run", 0, NOW, (after,), retired),
    )


def _frames(before: Manifest, after: Manifest, config: Config, bound: int | None) -> QualityFrames:
    return frames_of(before, after, {TP: PlanEntry(PLANNED, bound)}, config=config, now_ms=NOW)


@settings(max_examples=10, deadline=None)
@given(state=logs(), yaml_text=configs(), bound=st.one_of(st.none(), st.integers(-1, 60)))
def test_kafkas_own_deletion_passes_pass_every_suite(
    state: PartitionState, yaml_text: str, bound: int | None
) -> None:
    config = parse_config(yaml_text, source="property.yaml")
    before, after = _staged(state, config, bound)

    suites = run_suites(
        _frames(before, after, config, bound), suite_specs(), run_name="property", docs_dir=None, detail=False
    )

    failed = [(suite.name, outcome.invariant) for suite in suites for outcome in suite.failed]
    assert failed == []


@settings(max_examples=6, deadline=None)
@given(
    state=logs(),
    yaml_text=configs(),
    bound=st.one_of(st.none(), st.integers(-1, 60)),
    reason=st.sampled_from(REASONS),
)
def test_deleting_the_first_kept_segment_too_is_caught_whatever_the_reason(
    state: PartitionState, yaml_text: str, bound: int | None, reason: str
) -> None:
    """Every pass looked at the first kept segment last (or stopped earlier for a reason that also holds for
    it), so no pass allows deleting it: the deletions suite must say which rule forbids it."""
    config = parse_config(yaml_text, source="property.yaml")
    before, after = _staged(state, config, bound)
    kept = after.partitions[0].segments
    assume(kept)
    rest = kept[1:]
    new_start = max(
        after.partitions[0].log_start_offset, rest[0].base_offset if rest else state.log_end_offset
    )
    extra = RetiredObject(kept[0].key, TP, 2, 0, 0, reason)
    edited = dataclasses.replace(
        after,
        partitions=(dataclasses.replace(after.partitions[0], segments=rest, log_start_offset=new_start),),
        retired=(*after.retired, extra),
    )

    suites = run_suites(
        _frames(before, edited, config, bound),
        suite_specs(),
        run_name="property",
        docs_dir=None,
        detail=False,
    )

    by_name = {suite.name: suite for suite in suites}
    assert by_name["retention.partitions"].failed == ()
    assert by_name["retention.deletions"].failed != ()


def test_a_run_id_that_reads_as_a_date_with_a_day_long_offset_still_validates() -> None:
    """GX reads a run name as a date when it is given no time: this run id (its hex suffix a timezone offset
    of more than a day) once failed a validation with a ValueError inside GX."""
    config = parse_config("topics:\n  t:\n    retention.ms: 10\n", source="t.yaml")
    state = PartitionState(TP, 0, 5, (_entry(0, 5, 100, 0),))
    before, after = _staged(state, config, None)

    suites = run_suites(
        _frames(before, after, config, None),
        suite_specs(),
        run_name="20261207T165552Z-4384ad3a",
        docs_dir=None,
        detail=False,
    )

    assert [suite.failed for suite in suites] == [() for _ in suites]
