"""The streamed bootstrap in manifest format 2 (``lake.bootstrap``, docs/metadata-format-2.md, "Adoption
without listing the lake"): the version it commits is the one ``adopt`` in format 1 then ``upgrade`` gives
(state by state, summary by summary, the same export and the same report), with ignored objects, a bad
segment and the bootstrap checkpoint files; its memory does not grow with the lake's entries; a crash
before the root's PUT leaves no version, and its pieces are swept once another run took the version; one
that loses the version raises the conflict."""

from __future__ import annotations

import io
import json
import tracemalloc
from dataclasses import replace
from pathlib import Path

import pytest
from forwarding_store import ForwardingStore
from kafka_segments.checkpoint import format_offset_checkpoint
from kafka_segments.errors import CommitConflictError
from kafka_segments.lake.adopt_run import adopt
from kafka_segments.lake.bootstrap import bootstrap
from kafka_segments.lake.bootstrap_report import BootstrapReport
from kafka_segments.lake.export import export_lake
from kafka_segments.lake.format2 import PIECES_PREFIX, piece_run_id
from kafka_segments.lake.gc import collect_garbage
from kafka_segments.lake.history import head_version, read_manifest
from kafka_segments.lake.layout import LOG_START_OFFSET_CHECKPOINT_KEY, manifest_key
from kafka_segments.lake.roots import read_root
from kafka_segments.lake.run_folder import read_outcome
from kafka_segments.lake.runs import RunOutcome
from kafka_segments.lake.transaction import LakeTransaction
from kafka_segments.lake.upgrade import upgrade
from kafka_segments.state import MANIFEST_FORMAT_2, MANIFEST_FORMAT_VERSION, PartitionState
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.storage.base import Overwrite, PutMode, PutResult
from kafka_segments.topic_partition import TopicPartition
from kit import FakeClock, make_segment, upload_segment
from s3_fixtures import new_s3_store

from lake.adoption_helpers import batch_position, flip_byte

pytestmark = pytest.mark.lake

RUN_ID = "bootstrap-run"


@pytest.fixture(params=["local", "s3"])
def lakes(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[ObjectStore, ObjectStore]:
    """Two fresh lakes on one backend: one bootstrapped in format 1 (then upgraded), one streamed."""
    if request.param == "local":
        return LocalStore(tmp_path / "one"), LocalStore(tmp_path / "two")
    server = request.getfixturevalue("s3_server")
    return new_s3_store(server), new_s3_store(server)


def _fill(store: ObjectStore) -> None:
    """Three partitions of a topic and one of another, with what adoption leaves alone and a damaged
    segment (its partition is quarantined), and a log start offset from a copied log directory."""
    for tp, bases in (
        (TopicPartition("orders", 0), (0, 6, 12)),
        (TopicPartition("orders", 1), (100, 106)),
        (TopicPartition("orders", 2), (0, 6)),
        (TopicPartition("audit", 0), (0,)),
    ):
        for base in bases:
            upload_segment(store, tp, make_segment(base))
    bad = make_segment(6)
    store.put("orders-2/00000000000000000006.log", flip_byte(bad.log, batch_position(bad.log, 1) + 20))
    store.put("orders-0/partition.metadata", b"version: 0\n")
    store.put("orders-007/00000000000000000000.log", make_segment(0).log)
    store.put("README.txt", b"a lake")
    store.put(
        LOG_START_OFFSET_CHECKPOINT_KEY,
        format_offset_checkpoint({TopicPartition("orders", 0): 8, TopicPartition("gone", 0): 3}),
    )


def _settled(states: tuple[PartitionState, ...]) -> tuple[PartitionState, ...]:
    """The states without the objects' modification times (two lakes written apart differ there only)."""
    return tuple(
        replace(s, segments=tuple(replace(e, last_modified_ms=0) for e in s.segments)) for s in states
    )


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_streamed_bootstrap_commits_what_adopt_then_upgrade_gives(
    lakes: tuple[ObjectStore, ObjectStore], tmp_path: Path
) -> None:
    old, new = lakes
    for lake in lakes:
        _fill(lake)
    before = adopt(
        old, now_ms=1_000, run_id=RUN_ID, clock=FakeClock(), manifest_format=MANIFEST_FORMAT_VERSION
    )
    upgrade(old, clock=FakeClock())
    streamed = adopt(new, now_ms=1_000, run_id=RUN_ID, clock=FakeClock(), manifest_format=MANIFEST_FORMAT_2)

    assert isinstance(streamed, BootstrapReport)
    assert (head_version(new), read_manifest(new, 1).format_version) == (1, MANIFEST_FORMAT_2)
    upgraded, bootstrapped = read_root(old, 2), read_root(new, 1)
    assert _settled(bootstrapped.load()) == _settled(upgraded.load())
    assert len(bootstrapped.partitions) == 3  # orders-2 quarantined
    for ours, theirs in zip(bootstrapped.partitions, upgraded.partitions, strict=True):
        assert ours.topic_partition == theirs.topic_partition
        assert ours.state_sha256 is not None
        assert ours.summary.log_start_offset == theirs.summary.log_start_offset
        assert ours.summary.live_sha256 == theirs.summary.live_sha256
        assert ours.chunks == theirs.chunks
    assert bootstrapped.partitions[1].summary.log_start_offset == 8  # from the checkpoint file
    assert {piece_run_id(meta.key) for meta in new.list(PIECES_PREFIX)} == {RUN_ID}
    export_lake(old, tmp_path / "old")
    export_lake(new, tmp_path / "new")
    assert _files(tmp_path / "new") == _files(tmp_path / "old")
    # the same report, to the byte, and streamed as the CLI prints it
    assert streamed.to_dict() == before.to_dict()
    assert streamed.to_text() == before.to_text()
    assert [q.topic_partition for q in streamed.quarantined] == [TopicPartition("orders", 2)]
    assert (
        len(streamed.ignored) == 4
    )  # partition.metadata, orders-007/, README.txt, gone-0's checkpoint entry
    out = io.StringIO()
    streamed.write_json(out, extra={"recover": {"runs": []}})
    expected = json.dumps({**before.to_dict(), "recover": {"runs": []}}, indent=2, ensure_ascii=False)
    assert out.getvalue() == expected
    out = io.StringIO()
    streamed.write_text(out)
    assert out.getvalue() == before.to_text()
    assert _settled(streamed.result.partitions) == _settled(before.result.partitions)


def test_a_lake_with_nothing_to_adopt_commits_nothing(local_store: LocalStore) -> None:
    local_store.put("README.txt", b"a lake")
    report = adopt(local_store, now_ms=1_000, clock=FakeClock(), manifest_format=MANIFEST_FORMAT_2)

    assert (report.committed_version, head_version(local_store)) == (None, None)
    assert "nothing to adopt, nothing committed" in report.to_text()
    assert list(local_store.list(PIECES_PREFIX)) == []


def _peak_bytes(tmp_path: Path, partitions: int, *, manifest_format: int) -> int:
    store = LocalStore(tmp_path / f"lake-{partitions}-format-{manifest_format}")
    segments = [make_segment(base, batches=1, records_per_batch=1) for base in range(8)]
    for partition in range(partitions):
        for segment in segments:
            upload_segment(store, TopicPartition("t", partition), segment, with_indexes=False)
    tracemalloc.start()
    try:
        report = adopt(store, now_ms=1_000, clock=FakeClock(), max_workers=2, manifest_format=manifest_format)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.committed_version == 1
    return peak


def _growth_per_partition(tmp_path: Path, *, manifest_format: int) -> float:
    """How much a bootstrap's peak grows per partition of 8 segments, from 4 to 20 partitions."""
    few = _peak_bytes(tmp_path, 4, manifest_format=manifest_format)
    many = _peak_bytes(tmp_path, 20, manifest_format=manifest_format)
    return (many - few) / 16


def test_the_streamed_bootstrap_holds_root_lines_and_the_listing_not_the_entries(tmp_path: Path) -> None:
    """Per partition of 8 segments, the streamed bootstrap's peak grows by its root line and its listed
    objects (~9 KB measured); format 1's, which holds every entry until the commit, by ~36 KB."""
    _peak_bytes(tmp_path, 1, manifest_format=MANIFEST_FORMAT_2)  # imports what a bootstrap needs
    streamed = _growth_per_partition(tmp_path, manifest_format=MANIFEST_FORMAT_2)
    whole = _growth_per_partition(tmp_path, manifest_format=MANIFEST_FORMAT_VERSION)

    assert 0 < streamed < 15_000
    assert streamed < whole / 2


class _CrashAtCommit(ForwardingStore):
    """Stops the process (an exception nothing catches) when the root of version 1 is put."""

    def put(self, key: str, data: bytes, *, mode: PutMode = Overwrite()) -> PutResult:  # noqa: B008 - as ForwardingStore's
        if key == manifest_key(1):
            raise SystemExit("killed before the commit")
        return super().put(key, data, mode=mode)


def test_a_crash_before_the_commit_leaves_no_version_and_gc_sweeps_its_pieces(
    store: ObjectStore, clock: FakeClock
) -> None:
    _fill(store)
    with pytest.raises(SystemExit):
        adopt(_CrashAtCommit(store), now_ms=1_000, run_id="crashed", clock=clock, manifest_format=2)

    assert head_version(store) is None
    left = {meta.key for meta in store.list(PIECES_PREFIX)}
    assert left
    assert {piece_run_id(key) for key in left} == {"crashed"}
    report = adopt(store, now_ms=1_000, run_id="again", clock=clock, manifest_format=2)
    assert report.committed_version == 1
    collect_garbage(store, dry_run=False, orphan_min_age_ms=0)  # the pieces' ages are the wall clock's

    assert {piece_run_id(meta.key) for meta in store.list(PIECES_PREFIX)} == {"again"}
    assert len(read_root(store, 1).load()) == 3


def test_a_bootstrap_that_loses_its_version_raises_the_conflict_and_leaves_pieces_for_gc(
    local_store: LocalStore, clock: FakeClock
) -> None:
    _fill(local_store)
    late = LakeTransaction.begin(local_store, now_ms=1_000, operation="adopt", run_id="late", clock=clock)
    adopt(local_store, now_ms=1_000, run_id="first", clock=clock, manifest_format=MANIFEST_FORMAT_2)

    with pytest.raises(CommitConflictError, match="version 1 was committed by run 'first'"):
        bootstrap(late, max_workers=2, unchanged_reason="nothing to adopt")

    outcome = read_outcome(local_store, "late")
    assert outcome is not None
    assert outcome.run_outcome is RunOutcome.LOST
    assert read_root(local_store, 1).run_id == "first"
    collect_garbage(local_store, dry_run=False, orphan_min_age_ms=0)
    assert {piece_run_id(meta.key) for meta in local_store.list(PIECES_PREFIX)} == {"first"}
