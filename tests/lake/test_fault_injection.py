"""A failure at every write of a run — adopt, write a segment, stage, commit, checkpoint files, outcome, gc —
then ``recover``: the lake is exactly the old or the new committed state, every object a manifest lists
exists, the checkpoint files match the head, and running again converges to the new state.

The run under test adopts two newly uploaded segments and rewrites one live segment as a written object
(retiring the old one with ``file.delete.delay.ms`` = 0), then garbage-collects. A clean run is recorded
first; then for every mutating store call in it (``put``, ``delete``, ``delete_many``), a fresh lake runs the
same scenario with that call failing before it happens, and again with it happening and its response lost.
On a lake in format 1 (built with the previous release's writer) the run under test is the lake's first
commit in format 2: every partition's pieces, then the root. (A killed process at the commit itself:
``test_commit_kill.py``.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pytest
from forwarding_store import ForwardingStore
from kafka_segments.clock import wall_clock_ms
from kafka_segments.errors import KafkaSegmentsError, ObjectNotFoundError, TransientStoreError
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.adoption import adopt_objects
from kafka_segments.lake.checkpoint_files import checkpoint_files_match
from kafka_segments.lake.commit import commit_run
from kafka_segments.lake.format2 import PIECES_PREFIX
from kafka_segments.lake.gc import collect_garbage
from kafka_segments.lake.history import manifest_versions, read_head, read_manifest
from kafka_segments.lake.layout import try_parse_segment_key
from kafka_segments.lake.recover import recover
from kafka_segments.lake.roots import read_root
from kafka_segments.lake.staging import begin_run, build_manifest, retire, stage_manifest, stage_segment
from kafka_segments.segment.files import FileKind
from kafka_segments.segment.writer import SegmentFiles
from kafka_segments.state import MANIFEST_FORMAT_2, Manifest, PartitionState
from kafka_segments.storage import ObjectStore, PutMode, PutResult
from kafka_segments.storage.base import Overwrite
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment, upload_segment
from manifest_files import FORMAT_1, format_1_commits

pytestmark = pytest.mark.lake

ORDERS_0 = TopicPartition("orders", 0)
ORDERS_1 = TopicPartition("orders", 1)
MUTATIONS = ("put", "delete", "delete_many")


class InjectedFaultError(TransientStoreError):
    """The failure this test injects (a transient store error, as a network failure would give)."""


class StepFailingStore(ForwardingStore):
    """Counts mutating calls and fails the ``fail_at``-th one, before or after it takes effect."""

    def __init__(self, inner: ObjectStore, *, fail_at: int | None = None, after: bool = False) -> None:
        super().__init__(inner)
        self.fail_at = fail_at
        self.after = after
        self.steps: list[tuple[str, str]] = []

    def _step(self, operation: str, key: str, action: Callable[[], object]) -> object:
        self.steps.append((operation, key))
        failing = len(self.steps) == self.fail_at
        if failing and not self.after:
            raise InjectedFaultError(f"injected before {operation}", location=key)
        result = action()
        if failing:
            raise InjectedFaultError(f"injected after {operation} (lost response)", location=key)
        return result

    def put(self, key: str, data: bytes, *, mode: PutMode = Overwrite()) -> PutResult:  # noqa: B008
        result = self._step("put", key, lambda: self.inner.put(key, data, mode=mode))
        if not isinstance(result, PutResult):
            raise TypeError(result)
        return result

    def delete(self, key: str) -> None:
        self._step("delete", key, lambda: self.inner.delete(key))

    def delete_many(self, keys: Iterable[str]) -> None:
        wanted = list(keys)
        self._step("delete_many", ",".join(wanted[:3]), lambda: self.inner.delete_many(wanted))


@dataclass(frozen=True)
class Content:
    """A committed state as data: per partition the offsets and the segments' offsets and checksums."""

    partitions: tuple[tuple[str, int, int, tuple[tuple[int, int | None, str], ...]], ...]


def content(manifest: Manifest | None) -> Content:
    if manifest is None:
        return Content(())
    return Content(
        tuple(
            (
                str(state.topic_partition),
                state.log_start_offset,
                state.log_end_offset,
                tuple((s.base_offset, s.last_offset, s.sha256) for s in state.segments),
            )
            for state in manifest.partitions
        )
    )


def initial_lake(store: ObjectStore, clock: FakeClock, manifest_format: int = 1) -> list[SegmentFiles]:
    """Version 1 (orders-0: segments 0 and 6, orders-1: segment 0) in ``manifest_format`` (format 1: as the
    previous release wrote it, so that the run under test is the lake's migration to format 2), then two
    new uploads waiting."""
    first, second, third = make_segment(0), make_segment(6), make_segment(12)
    upload_segment(store, ORDERS_0, first)
    upload_segment(store, ORDERS_0, second)
    upload_segment(store, ORDERS_1, first)
    with format_1_commits() if manifest_format == FORMAT_1 else contextlib.nullcontext():
        report = adopt(store, now_ms=clock(), clock=clock)
    if report.committed_version != 1 or read_root(store, 1).format_version != manifest_format:
        raise AssertionError(report.to_text())
    upload_segment(store, ORDERS_0, third)
    upload_segment(store, ORDERS_1, second)
    return [first, second, third]


def the_run(store: ObjectStore, clock: FakeClock) -> Manifest:
    """Adopt what is new, rewrite orders-0's first segment as a written object, commit, gc."""
    run, base = begin_run(store, now_ms=clock(), operation="run", clock=clock)
    adopted = adopt_objects(store, base=base, run=run)
    states = {state.topic_partition: state for state in adopted.partitions}
    orders = states[ORDERS_0]
    old = orders.segments[0]
    data = store.get_range(old.key, start=0, end=old.size)
    new = stage_segment(
        store,
        run,
        topic_partition=ORDERS_0,
        base_offset=old.base_offset,
        files={FileKind.LOG: data},
        clock=clock,
    )
    states[ORDERS_0] = PartitionState(
        ORDERS_0,
        orders.log_start_offset,
        orders.log_end_offset,
        (new, *orders.segments[1:]),
        orders.cleaner_checkpoint,
        orders.open_transactions,
        run.run_id,
    )
    retired = retire(old, ORDERS_0, run, reason="compaction", delete_delay_ms=0)
    manifest = build_manifest(
        run, base=base, partitions=states.values(), newly_retired=[retired], present_keys=adopted.present_keys
    )
    stage_manifest(store, run, manifest)
    committed = commit_run(store, run.run_id, clock=clock)
    clock.advance(1)
    collect_garbage(
        store, now_ms=clock(), dry_run=False, retain_manifests=1, orphan_min_age_ms=0, clock=clock
    )
    return committed


def check_invariants(store: ObjectStore, allowed: tuple[Content, ...]) -> Manifest:
    head = read_head(store)
    assert content(head) in allowed
    assert head is not None
    assert checkpoint_files_match(store, head)
    for version in manifest_versions(store):
        for segment in read_manifest(store, version).live_segments():
            try:
                assert store.head(segment.key).size >= segment.size
            except ObjectNotFoundError:  # pragma: no cover - the failure message says which
                pytest.fail(f"version {version} lists {segment.key}, which is gone")
    return head


def written_orphans(store: ObjectStore, head: Manifest) -> list[str]:
    live = {key[: -len(".log")] for key in head.live_keys()}
    orphans = []
    for meta in store.list():
        name = try_parse_segment_key(meta.key)
        if name is not None and not name.is_plain and meta.key.rsplit(".", 1)[0] not in live:
            orphans.append(meta.key)
    return orphans


def unreferenced_pieces(store: ObjectStore) -> list[str]:
    """Manifest pieces (format 2) that no present version is made of."""
    referenced: set[str] = set()
    for version in manifest_versions(store):
        read_manifest(store, version, referenced=referenced)
    return [meta.key for meta in store.list(PIECES_PREFIX) if meta.key not in referenced]


def reference(
    store: ObjectStore, clock: FakeClock, manifest_format: int = 1
) -> tuple[Content, Content, list[tuple[str, str]]]:
    initial_lake(store, clock, manifest_format)
    old = content(read_head(store))
    recording = StepFailingStore(store)
    new = content(the_run(recording, clock))
    return old, new, recording.steps


Recorded = tuple[Content, Content, list[tuple[str, str]]]


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Recorded]:
    """The reference run on a lake in each manifest format."""
    from kafka_segments.storage import LocalStore

    return {
        manifest_format: reference(
            LocalStore(tmp_path_factory.mktemp("reference") / "lake"),
            FakeClock(wall_clock_ms()),
            manifest_format,
        )
        for manifest_format in (FORMAT_1, MANIFEST_FORMAT_2)
    }


@pytest.mark.parametrize("manifest_format", [FORMAT_1, MANIFEST_FORMAT_2])
def test_the_reference_run_writes_what_the_scenario_says(
    references: dict[int, Recorded], manifest_format: int
) -> None:
    old, new, steps = references[manifest_format]
    assert old != new
    operations = [operation for operation, _ in steps]
    # run record, the segment's .log, staged manifest, the commit, 2 checkpoint files, outcome; gc's deletes
    # and its record of the pass (``lake.gc_record``); and a chunk and a partition manifest for each of the
    # two partitions the run changes (on a format 1 lake: every partition, once, as its first commit writes
    # format 2)
    assert operations.count("put") == 12
    assert "delete_many" in operations
    assert len(steps) == STEPS[manifest_format], steps


@pytest.fixture
def clock() -> FakeClock:
    """Starts at the real wall time: objects' last-modified times (orphan ages) come from the real clock."""
    return FakeClock(wall_clock_ms())


STEPS = {FORMAT_1: 15, MANIFEST_FORMAT_2: 15}
"""Mutating calls of the reference run per manifest format (asserted above, so the parametrization below
covers all of them)."""


@pytest.mark.parametrize("after", [False, True], ids=["before", "lost-response"])
@pytest.mark.parametrize("step", range(1, STEPS[FORMAT_1] + 1))
def test_a_failure_at_any_write_leaves_the_old_or_the_new_state_and_a_rerun_converges(
    store: ObjectStore, clock: FakeClock, references: dict[int, Recorded], step: int, after: bool
) -> None:
    """On a format 1 lake: the run is its migration to format 2 (every partition's pieces, then the root)."""
    fail_and_converge(store, clock, references, manifest_format=FORMAT_1, step=step, after=after)


@pytest.mark.parametrize("after", [False, True], ids=["before", "lost-response"])
@pytest.mark.parametrize("step", range(1, STEPS[MANIFEST_FORMAT_2] + 1))
def test_the_same_on_a_format_2_lake_with_its_pieces_writes(
    local_store: ObjectStore, clock: FakeClock, references: dict[int, Recorded], step: int, after: bool
) -> None:
    """Format 2's commit writes the changed partitions' pieces before its root: each is a fault point too
    (on a local lake: the S3 store's faults are the same calls, covered by the migration run above)."""
    fail_and_converge(
        local_store, clock, references, manifest_format=MANIFEST_FORMAT_2, step=step, after=after
    )


def fail_and_converge(
    store: ObjectStore,
    clock: FakeClock,
    references: dict[int, Recorded],
    *,
    manifest_format: int,
    step: int,
    after: bool,
) -> None:
    old, new, steps = references[manifest_format]
    initial_lake(store, clock, manifest_format)
    faulty = StepFailingStore(store, fail_at=step, after=after)

    with contextlib.suppress(KafkaSegmentsError):  # the fault, or what the run made of it (state unknown …)
        the_run(faulty, clock)

    clock.advance(1)
    recover(store, abandon_after_ms=0, clock=clock)
    check_invariants(store, allowed=(old, new))

    the_run(store, clock)  # the rerun: a new run id, no fault
    clock.advance(1)
    recover(store, abandon_after_ms=0, clock=clock)
    collect_garbage(
        store, now_ms=clock(), dry_run=False, retain_manifests=1, orphan_min_age_ms=0, clock=clock
    )
    head = check_invariants(store, allowed=(new,))
    assert written_orphans(store, head) == []
    # pieces replaced by a commit go by age (the store's clock)
    collect_garbage(store, now_ms=wall_clock_ms() + 1, dry_run=False, retain_manifests=1, orphan_min_age_ms=0)
    assert unreferenced_pieces(store) == []
    assert steps[step - 1][0] in MUTATIONS
    again = collect_garbage(
        store, now_ms=clock(), dry_run=False, retain_manifests=1, orphan_min_age_ms=0, clock=clock
    )
    assert again.deleted_keys == ()
