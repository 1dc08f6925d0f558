"""What a run costs when one partition of many changed (issue 33, "Proof"): objects and bytes it reads and
writes, counted through ``CountingStore`` on a local lake and on S3 (moto over HTTP).

Two lakes of one topic, ``PARTITIONS`` = 10 and 40 partitions of ``SEGMENTS`` tiny segments each, are
committed by a first run; then one new segment lands in partition 0 only and a second run (nothing due:
it adopts that segment and commits) is counted. Comparing the two lakes gives the *marginal* cost of an
unchanged partition: what the run pays for a partition it does not change.

* What holds today and must keep holding: the run reads no byte of an unchanged partition's segments,
  writes no segment object, and writes the same few metadata objects whatever the lake's size.
* What manifest format 1 breaks (``xfail(strict=True)``: the day format 2 lands, they pass, and the strict
  xfail fails loudly until the marker is removed): a commit rewrites every partition's segment entries
  (~440 bytes a segment) instead of one root line per unchanged partition (docs/metadata-format-2.md), and
  every run reads them all; and a run lists the whole lake, every segment of every partition, where a
  format 2 run lists each partition after its newest segment (``lake.tail_listing``). The listing is
  counted for the run alone (its gc is counted apart), for the run that adopts the new segment and for a
  run with nothing to do after it. gc, with the record of its last complete pass (``lake.gc_record``),
  lists the tails too, not every segment (``lake.gc_listing``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import pytest
from counting_store import META, METADATA_AREAS, READ_KINDS, RUNS, SEGMENTS, Call, Counts, counting_store
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.pipeline.run_gc import collect_run_garbage
from kafka_segments.segment.writer import SegmentFiles
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock, ThreadRunner, make_segment, upload_segment
from manifest_files import FORMAT_1, format_1_commits
from s3_fixtures import new_s3_store

from lake.retention_helpers import config, run, topic_yaml

pytestmark = pytest.mark.lake

TOPIC = "t"
CHANGED = TopicPartition(TOPIC, 0)
"""The partition that gets a new segment."""
PARTITIONS = (4, 12)
SEGMENTS_PER_PARTITION = 10
"""The segments of each unchanged partition: enough that format 1's cost of an unchanged partition (its
segment entries, ~440 bytes each, in every copy of the manifest) is well above the budgets below."""
CHANGED_SEGMENTS = 2
"""The segments of the changed partition, the same in every lake: what its own new pieces cost (format 2
rewrites its last chunk) does not depend on the lake's size."""
RECORDS_PER_SEGMENT = 2
ROOT_LINE_BYTES = 1024
"""The most a version's metadata may grow by per partition it did not change: one line of the root
(docs/metadata-format-2.md: ~850 bytes with its summary), with room to spare."""
ROOT_READS = 6
"""How many times a run may read each unchanged partition's root line: the base's root, once by each stage
that needs it (recover, execute, commit; each may run in a process of its own, as the DAG's tasks do), and
gc's retained versions' roots (the base's and the new one)."""
RUN_METADATA_LINES = 4
"""Root-line budgets a run may write per unchanged partition to all of ``_kafka_segments/`` (the version,
and per-partition lines of its run folder's plan and report)."""
LISTED_PER_PARTITION = 2
"""The most objects a run's listing may show per unchanged partition: its folder (in the listing of the top
level) and its newest segment's ``.log`` (its tail); a whole listing shows its ``SEGMENTS_PER_PARTITION``."""
LIST_REQUESTS_PER_PARTITION = 1
"""The list requests a run may make per unchanged partition: the listing of its tail."""
GC_LISTED_PER_PARTITION = 4
"""The most objects gc's listing may show per unchanged partition: a run's two, and its partition manifest
and chunk in the listing of ``_kafka_segments/``; a whole listing shows ``SEGMENTS_PER_PARTITION`` more."""
METADATA_OBJECTS = 4
"""The most metadata objects a commit of one changed partition writes: format 1 writes one (the new
version); format 2 a root, a partition manifest and a chunk or two."""
NOW_MS = T0 + 3_600_000
"""An hour after the records: nothing is due under the default retention (7 days)."""


@dataclass(frozen=True)
class RunCost:
    """What the second run of a lake of ``partitions`` partitions did, through the counting store."""

    partitions: int
    manifest_format: int
    counts: Counts
    """The run that adopts the new segment, and its gc."""
    calls: tuple[Call, ...]
    run_counts: Counts
    """That run alone, without its gc."""
    gc_counts: Counts
    """Its gc alone (after the first run's gc, which recorded a complete pass)."""
    idle_counts: Counts
    """A run after it with nothing to do (without gc)."""
    adopted: bool
    """Whether the head after the run holds the new segment of partition 0."""

    @property
    def read_keys(self) -> list[str]:
        return [call.key for call in self.calls if call.kind in READ_KINDS]


def segments(count: int) -> list[SegmentFiles]:
    return [
        make_segment(index * RECORDS_PER_SEGMENT, batches=1, records_per_batch=RECORDS_PER_SEGMENT)
        for index in range(count)
    ]


def build_lake(store: ObjectStore, partitions: int) -> None:
    """``partitions`` partitions of tiny segments (``.log`` only, Kafka's plain names, as a sync of a broker's
    log directory leaves them), uploaded concurrently: ``CHANGED_SEGMENTS`` in partition 0,
    ``SEGMENTS_PER_PARTITION`` in the others."""
    uploads = [(CHANGED, files) for files in segments(CHANGED_SEGMENTS)] + [
        (TopicPartition(TOPIC, partition), files)
        for partition in range(1, partitions)
        for files in segments(SEGMENTS_PER_PARTITION)
    ]
    ThreadRunner(max_workers=8).map(
        lambda upload: upload_segment(store, upload[0], upload[1], with_indexes=False), uploads
    )


def measure(store: ObjectStore, partitions: int, manifest_format: int) -> RunCost:
    clock = FakeClock(NOW_MS)
    cfg = config(topic_yaml())
    build_lake(store, partitions)
    # Format 1: every commit in the previous release's format, on purpose (each one would write format 2).
    commits = format_1_commits if manifest_format == FORMAT_1 else nullcontext
    with commits():
        run(store, cfg, now_ms=NOW_MS, clock=clock)  # the lake's first version: everything adopted
    new_base = CHANGED_SEGMENTS * RECORDS_PER_SEGMENT
    new_segment = make_segment(new_base, batches=1, records_per_batch=RECORDS_PER_SEGMENT)
    upload_segment(store, CHANGED, new_segment, with_indexes=False)
    counting = counting_store(store)
    clock.advance(60_000)
    with commits():
        run(counting, cfg, now_ms=clock.now_ms, clock=clock, gc=False)
        run_counts = counting.counts()
        gc_counting = counting_store(counting)
        collect_run_garbage(gc_counting, cfg, dry_run=False, clock=clock)
    state = resolve_manifest(store).partition(CHANGED)
    adopted = state is not None and state.segments[-1].base_offset == new_base
    idle = counting_store(store)
    clock.advance(60_000)
    with commits():
        run(idle, cfg, now_ms=clock.now_ms, clock=clock, gc=False)
    return RunCost(
        partitions,
        manifest_format,
        counting.counts(),
        counting.calls,
        run_counts,
        gc_counting.counts(),
        idle.counts(),
        adopted,
    )


@pytest.fixture(
    scope="module",
    params=[("local", 1), ("local", 2), ("s3", 1), ("s3", 2)],
    ids=["local-format1", "local-format2", "s3-format1", "s3-format2"],
)
def costs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[RunCost]:
    """The second run's cost on a lake of each size in ``PARTITIONS``, on one backend, in one manifest
    format (format 1: every commit in it, built on purpose with ``format_1_commits``)."""
    backend, manifest_format = request.param

    def new_store() -> ObjectStore:
        if backend == "local":
            return LocalStore(Path(tmp_path_factory.mktemp("run-cost")) / "lake")
        return new_s3_store(request.getfixturevalue("s3_server"))

    return [measure(new_store(), partitions, manifest_format) for partitions in PARTITIONS]


def format_1_breaks(request: pytest.FixtureRequest, costs: list[RunCost], reason: str) -> None:
    """Format 1 fails this test by design (strictly: it must fail); format 2 must pass it."""
    if costs[0].manifest_format == 1:
        request.applymarker(pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason))


def marginal(
    costs: list[RunCost],
    amount: Callable[[Counts], int],
    counts: Callable[[RunCost], Counts] = lambda cost: cost.counts,
) -> float:
    """What each unchanged partition added to ``amount`` (of ``counts``, default: the run and its gc)
    between the smallest and the largest lake."""
    small, large = costs[0], costs[-1]
    return (amount(counts(large)) - amount(counts(small))) / (large.partitions - small.partitions)


def metadata_written(counts: Counts) -> int:
    """Bytes of the version's metadata written (format 1: the manifest; format 2: root and pieces)."""
    return counts.written(*METADATA_AREAS)


def metadata_read(counts: Counts) -> int:
    return counts.read(*METADATA_AREAS)


def lake_metadata_written(counts: Counts) -> int:
    """Bytes written to ``_kafka_segments/``: the version, the run's folder and anything else there."""
    return counts.written(*METADATA_AREAS, RUNS, META)


def metadata_objects(counts: Counts) -> int:
    return sum(counts.calls(kind="put", area=area) for area in METADATA_AREAS)


def figures(costs: list[RunCost], per_partition: float | None = None) -> str:
    """The measured figures, for assertion messages."""
    marginal_text = "" if per_partition is None else f"{per_partition:,.0f} B per unchanged partition; "
    return marginal_text + "; ".join(
        f"{cost.partitions} partitions: version metadata written {metadata_written(cost.counts):,} B in "
        f"{metadata_objects(cost.counts)} objects, read {metadata_read(cost.counts):,} B; "
        f"{lake_metadata_written(cost.counts):,} B written to _kafka_segments/, {cost.counts.read():,} B "
        "read in all"
        for cost in costs
    )


def unchanged_partition_key(key: str) -> bool:
    """Whether ``key`` is an object of a partition the run has no reason to touch (not ``CHANGED``'s)."""
    folder = key.split("/", 1)[0]
    return "/" in key and folder.startswith(f"{TOPIC}-") and folder != CHANGED.dir_name


def test_the_run_adopts_the_new_segment(costs: list[RunCost]) -> None:
    assert [cost.adopted for cost in costs] == [True] * len(costs)


def test_the_run_reads_no_segment_of_an_unchanged_partition(costs: list[RunCost]) -> None:
    for cost in costs:
        assert [key for key in cost.read_keys if unchanged_partition_key(key)] == []
        # The counting sees segment reads: the new segment's are there.
        assert any(key.startswith(f"{CHANGED.dir_name}/") for key in cost.read_keys)


def test_the_run_writes_no_segment_and_the_same_few_metadata_objects(costs: list[RunCost]) -> None:
    for cost in costs:
        written = [call.key for call in cost.calls if call.kind == "put" and call.area == SEGMENTS]
        assert [key for key in written if "/" in key] == []  # in no partition's folder
    objects = [metadata_objects(cost.counts) for cost in costs]
    assert 1 <= objects[0] <= METADATA_OBJECTS, figures(costs)
    assert objects == [objects[0]] * len(costs), figures(costs)


def test_the_version_a_commit_writes_grows_by_a_root_line_per_unchanged_partition(
    costs: list[RunCost], request: pytest.FixtureRequest
) -> None:
    format_1_breaks(request, costs, "format 1 rewrites the whole manifest on every commit")
    per_partition = marginal(costs, metadata_written)
    assert per_partition <= ROOT_LINE_BYTES, figures(costs, per_partition)


def test_the_metadata_a_run_reads_grows_by_a_few_root_lines_per_unchanged_partition(
    costs: list[RunCost], request: pytest.FixtureRequest
) -> None:
    format_1_breaks(request, costs, "format 1: a run reads every partition's segment entries")
    per_partition = marginal(costs, metadata_read)
    assert per_partition <= ROOT_READS * ROOT_LINE_BYTES, figures(costs, per_partition)


def test_everything_a_run_writes_to_the_lake_metadata_grows_by_a_few_lines_per_unchanged_partition(
    costs: list[RunCost], request: pytest.FixtureRequest
) -> None:
    format_1_breaks(
        request, costs, "format 1: the run's folder copies the whole manifest besides the new version"
    )
    per_partition = marginal(costs, lake_metadata_written)
    assert per_partition <= RUN_METADATA_LINES * ROOT_LINE_BYTES, figures(costs, per_partition)


def objects_listed(counts: Counts) -> int:
    return sum(counts.listed.values())


def list_requests(counts: Counts) -> int:
    return counts.calls(kind="list")


def assert_lists_per_partition(
    costs: list[RunCost], counts: Callable[[RunCost], Counts], *, objects_budget: int
) -> None:
    """What ``counts`` listed grows by at most ``objects_budget`` objects and one list request per unchanged
    partition."""
    listed = marginal(costs, objects_listed, counts)
    requests = marginal(costs, list_requests, counts)
    shown = ", ".join(
        f"{cost.partitions} partitions: {objects_listed(counts(cost))} objects in "
        f"{list_requests(counts(cost))} list requests"
        for cost in costs
    )
    assert listed <= objects_budget, f"{listed:.1f} objects listed per unchanged partition; {shown}"
    assert requests <= LIST_REQUESTS_PER_PARTITION, f"{requests:.1f} list requests per partition; {shown}"


@pytest.mark.parametrize("which", ["adopting", "idle"])
def test_a_run_lists_each_unchanged_partition_s_tail_not_its_segments(
    costs: list[RunCost], request: pytest.FixtureRequest, which: str
) -> None:
    format_1_breaks(request, costs, "format 1: a run lists the whole lake")

    def counts(cost: RunCost) -> Counts:
        return cost.run_counts if which == "adopting" else cost.idle_counts

    assert_lists_per_partition(costs, counts, objects_budget=LISTED_PER_PARTITION)


def test_gc_lists_each_unchanged_partition_s_tail_not_its_segments(
    costs: list[RunCost], request: pytest.FixtureRequest
) -> None:
    format_1_breaks(request, costs, "format 1: gc lists the whole lake")
    assert_lists_per_partition(costs, lambda cost: cost.gc_counts, objects_budget=GC_LISTED_PER_PARTITION)
