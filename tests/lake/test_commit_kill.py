"""A process killed (SIGKILL) at the commit itself, on both backends.

Right before the manifest PUT the run has not committed and can still commit; right after it the run has
committed, and only the idempotent steps after the commit are left (``commit_run`` finishes them)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kafka_segments.demo import DEFAULT_REGION
from kafka_segments.lake import commit_run, read_head, resolve_commit
from kafka_segments.lake.checkpoint_files import checkpoint_files_match
from kafka_segments.lake.layout import CHECKPOINT_KEYS, staged_manifest_key
from kafka_segments.lake.run_folder import read_outcome, read_run
from kafka_segments.lake.runs import Outcome
from kafka_segments.storage import LocalStore, ObjectStore, S3Store
from kit import FakeClock

from lake.commit_child import stage_appending_run

pytestmark = pytest.mark.lake

TESTS = Path(__file__).resolve().parents[1]
INCLUDE = TESTS.parent / "include"
CHILD = Path(__file__).with_name("commit_child.py")


def _child_env(store: ObjectStore, *, run_id: str, kill_at: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(INCLUDE), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    env.update(KS_RUN_ID=run_id, KS_KILL_AT=kill_at)
    if isinstance(store, LocalStore):
        env.update(KS_LAKE="local", KS_ROOT=str(store.root))
    else:
        assert isinstance(store, S3Store)
        assert store.endpoint_url is not None
        # The credentials of the embedded server are in os.environ (the s3_server fixture sets them).
        env.update(
            KS_LAKE="s3",
            KS_BUCKET=store.bucket,
            KS_PREFIX=store.prefix,
            KS_ENDPOINT=store.endpoint_url,
            KS_REGION=DEFAULT_REGION,
        )
    return env


def _run_child_until_killed(store: ObjectStore, *, run_id: str, kill_at: str) -> None:
    result = subprocess.run(
        [sys.executable, str(CHILD)],
        env=_child_env(store, run_id=run_id, kill_at=kill_at),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == -signal.SIGKILL, (result.returncode, result.stdout, result.stderr)


def _committed_base(store: ObjectStore, clock: FakeClock) -> None:
    run, _ = stage_appending_run(store, clock=clock)
    commit_run(store, run.run_id, clock=clock)
    store.delete_many(CHECKPOINT_KEYS)  # so that what a killed commit leaves behind shows


def test_killed_right_before_the_commit_put_leaves_the_old_head(store: ObjectStore, clock: FakeClock) -> None:
    _committed_base(store, clock)
    old_head = read_head(store)

    _run_child_until_killed(store, run_id="killed-before-put", kill_at="before-put")

    assert read_head(store) == old_head
    run = read_run(store, "killed-before-put")
    assert run.base_version == 1
    assert store.head(staged_manifest_key(run.run_id)).size > 0
    resolution = resolve_commit(store, run.run_id)
    assert (resolution.version, resolution.committed, resolution.taken_by) == (2, False, None)
    assert read_outcome(store, run.run_id) is None

    committed = commit_run(store, run.run_id, clock=clock)

    assert (committed.version, committed.run_id) == (2, run.run_id)
    assert read_head(store) == committed
    assert checkpoint_files_match(store, committed)


def test_killed_right_after_the_commit_put_has_committed(store: ObjectStore, clock: FakeClock) -> None:
    _committed_base(store, clock)

    _run_child_until_killed(store, run_id="killed-after-put", kill_at="after-put")

    head = read_head(store)
    assert head is not None
    assert (head.version, head.run_id) == (2, "killed-after-put")
    for key in head.live_keys():
        assert store.head(key).size > 0
    assert resolve_commit(store, "killed-after-put").committed
    assert read_outcome(store, "killed-after-put") is None  # the steps after the commit never ran
    assert not checkpoint_files_match(store, head)

    assert commit_run(store, "killed-after-put", clock=clock) == head

    assert checkpoint_files_match(store, head)
    outcome = read_outcome(store, "killed-after-put")
    assert outcome is not None
    assert (outcome.outcome, outcome.version) == (Outcome.COMMITTED, 2)
