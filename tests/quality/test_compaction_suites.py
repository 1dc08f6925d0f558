"""The compaction suites themselves: Kafka's own cleaning rounds (and the deletion passes after them) over any
keyed log pass every suite, run after run — the property that keeps the gate from crying wolf — and the
rules that the manifest codec already enforces still fail in GX when handed a log that breaks them.

The suites run here without Data Docs and with verdicts only (``detail=False``): about half a second each."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.config import Config
from kafka_segments.errors import ManifestFormatError
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.codec import manifest_from_json, manifest_to_json
from kafka_segments.lake.layout import staged_manifest_key
from kafka_segments.lake.run_folder import INPUT_MANIFEST, PLAN, read_run_json, run_file_key
from kafka_segments.pipeline.stages import commit_staged, execute_run, prepare_run
from kafka_segments.segment.writer import write_segment
from kafka_segments.storage import LocalStore, ObjectStore
from kit import FakeClock, upload_segment
from lake.retention_helpers import config
from segment_quality.gx_runtime import run_suites
from segment_quality.staged.compaction import read_retired_output, round_claims
from segment_quality.staged.frames import QualityFrames, frames_of, quality_frames
from segment_quality.staged.retention import PLANNED, PlanEntry
from segment_quality.suites import suite_specs
from unit.compaction_helpers import LogBuilder

from quality.compaction_lake import C0, compaction_config, staged_compaction_run, upload_keyed_log
from quality.helpers import NOW, partition_of, with_partition

pytestmark = pytest.mark.quality

OLD = 10


def _failed(frames: QualityFrames) -> list[str]:
    suites = run_suites(frames, suite_specs(), run_name="property", docs_dir=None, detail=False)
    return [f"{suite.name}/{outcome.invariant}" for suite in suites for outcome in suite.failed]


def _stage(store: ObjectStore, cfg: Config, clock: FakeClock, *, now_ms: int) -> str:
    request = prepare_run(store, now_ms=now_ms, offsets=None, dry_run=False, clock=clock)
    execute_run(store, cfg, request.run_id, clock=clock)
    return request.run_id


# ------------------------------------------------------------------------------------------------- property

Step = tuple[str, int, int]
"""(kind, key or producer id, timestamp): rec / tomb / txn / commit / abort / roll."""

steps = st.tuples(
    st.sampled_from(["rec", "rec", "rec", "tomb", "txn", "commit", "abort", "roll", "roll"]),
    st.integers(0, 3),
    st.sampled_from([OLD, NOW]),
)


def _append(log: LogBuilder, plan: list[Step], open_txns: set[int]) -> None:
    for kind, key, ts in plan:
        producer = 100 + key % 2
        if kind == "rec":
            log.rec(key, ts, timestamp=ts)
        elif kind == "tomb":
            log.tomb(key, timestamp=ts)
        elif kind == "txn":
            log.txn(producer, [key], timestamp=ts)
            open_txns.add(producer)
        elif kind in {"commit", "abort"} and producer in open_txns:
            (log.commit if kind == "commit" else log.abort)(producer, timestamp=ts)
            open_txns.discard(producer)
        elif kind == "roll":
            log.roll()


def _upload_from(store: ObjectStore, log: LogBuilder, base: int) -> None:
    """Upload the builder's segments from offset ``base`` on (the ones not uploaded yet)."""
    for first, batches in log.chunks:
        if first >= base and batches:
            upload_segment(store, C0, write_segment(batches, base_offset=first))


@st.composite
def yaml_texts(draw: st.DrawFn) -> str:
    policy = draw(st.sampled_from(["compact", "compact,delete"]))
    return (
        "topics:\n  c:\n"
        f"    cleanup.policy: {policy}\n"
        f"    retention.ms: {draw(st.sampled_from([-1, 1000, 10_000_000]))}\n"
        f"    min.cleanable.dirty.ratio: {draw(st.sampled_from([0.01, 0.5]))}\n"
        f"    delete.retention.ms: {draw(st.sampled_from([0, 86_400_000]))}\n"
        f"    retention.bytes: {draw(st.sampled_from([-1, 300]))}\n"
        f"    min.compaction.lag.ms: {draw(st.sampled_from([0, 500_000]))}\n"
    )


@settings(max_examples=4, deadline=None)
@given(
    first=st.lists(steps, min_size=2, max_size=14),
    second=st.lists(steps, min_size=1, max_size=8),
    yaml_text=yaml_texts(),
)
def test_kafkas_cleaning_rounds_pass_every_suite_run_after_run(
    first: list[Step], second: list[Step], yaml_text: str
) -> None:
    """Two runs over a random keyed log (records, tombstones, transactions left open or closed, rolls), the
    second after more segments arrived: what the real run path stages passes every suite both times."""
    cfg = config(yaml_text)
    clock = FakeClock()
    log, open_txns = LogBuilder(timestamp=OLD), set[int]()
    _append(log, first, open_txns)
    with tempfile.TemporaryDirectory() as folder:
        store = LocalStore(Path(folder))
        _upload_from(store, log, 0)
        adopt(store, now_ms=NOW, clock=clock)
        for index, now_ms in enumerate((NOW, NOW + 60_000)):
            if index:
                log.roll()
                uploaded = log.next_offset
                _append(log, second, open_txns)
                _upload_from(store, log, uploaded)
            run_id = _stage(store, cfg, clock, now_ms=now_ms)
            frames = quality_frames(store, run_id, config=cfg)

            assert not frames.staged or _failed(frames) == []  # nothing staged: zero rows, nothing to check

            commit_staged(store, run_id, require_validation=False, clock=clock)


# ------------------------------------------------------------------------------------------------- scenarios


def test_output_may_outgrow_its_input_by_the_rebuild_allowance(tmp_path: Path, clock: FakeClock) -> None:
    """KIP-534 in ``MemoryRecords.filterTo``: a first round stamps each tombstone batch with its delete
    horizon and rebuilds it with ``baseTimestamp = horizon``; the records' timestamp deltas (to an old
    timestamp) no longer fit one varint byte, so unique tombstones come out bigger than they went in — and
    still pass."""
    store = LocalStore(tmp_path / "lake")
    tombstones = tuple(tuple((o, f"k{o}", None) for o in range(base, base + 5)) for base in (0, 5, 10))
    upload_keyed_log(store, C0, (*tombstones, ((15, "k15", "v"),)))
    adopt(store, now_ms=NOW, clock=clock)
    cfg = config("topics:\n  c:\n    cleanup.policy: compact\n")
    run_id = _stage(store, cfg, clock, now_ms=NOW)

    frames = quality_frames(store, run_id, config=cfg)

    row = {name: values[0] for name, values in frames.compaction.items()}
    assert row["compaction_status"] == "cleaned"
    assert row["records_before_round"] == row["records_after_round"] == 15
    assert row["bytes_before_round"] < row["bytes_after_round"] <= row["bytes_allowed_after_round"]
    assert _failed(frames) == []


@pytest.fixture
def staged(local_store: LocalStore, clock: FakeClock) -> tuple[LocalStore, str]:
    return local_store, staged_compaction_run(local_store, clock)


def _frames_with_c0_segments(store: LocalStore, run_id: str, edit: str) -> QualityFrames:
    """The run's frames with ``c-0``'s staged segments edited in memory (``reversed`` or ``overlapping``),
    past the codec, which refuses such a manifest outright."""
    before_key, after_key = run_file_key(run_id, INPUT_MANIFEST), staged_manifest_key(run_id)
    before = manifest_from_json(store.get(before_key), location=before_key)
    after = manifest_from_json(store.get(after_key), location=after_key)
    output, active = partition_of(after, C0).segments
    segments = (
        (active, output) if edit == "reversed" else (dataclasses.replace(output, last_offset=8), active)
    )
    edited = with_partition(after, C0, segments=segments)
    with pytest.raises(ManifestFormatError, match="overlaps the previous segment"):
        manifest_from_json(manifest_to_json(edited), location=after_key)
    plan = {state.topic_partition: PlanEntry(PLANNED, None) for state in before.partitions}
    claims = round_claims(read_run_json(store, run_id, PLAN))
    written = read_retired_output(store, before, edited)
    return frames_of(
        before, edited, plan, config=compaction_config(), now_ms=NOW, claims=claims, written=written
    )


def test_segments_out_of_order_are_caught(staged: tuple[LocalStore, str]) -> None:
    assert _failed(_frames_with_c0_segments(*staged, "reversed")) == [
        "compaction.segments/segments-in-base-offset-order",
        "compaction.segments/segments-do-not-overlap",
    ]


def test_overlapping_segments_are_caught(staged: tuple[LocalStore, str]) -> None:
    assert _failed(_frames_with_c0_segments(*staged, "overlapping")) == [
        "compaction.segments/segments-do-not-overlap",
        "compaction.segments/written-segment-below-the-round-end",
    ]
