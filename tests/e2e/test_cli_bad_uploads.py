"""Issue 20 as a user meets it: one bad upload (a segment whose offsets run past ``Long.MAX_VALUE``, a batch
whose header claims 2^31-1 records around 10) quarantines its partition in ``kafka-segments adopt`` and
``run`` (exit 1, one line on stderr, the object and byte position in the report, no traceback) while the
other partitions are adopted and committed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_harness import cli
from kafka_segments.lake.history import read_head
from kafka_segments.storage import LocalStore
from kafka_segments.topic_partition import TopicPartition
from kit import make_segment, upload_segment
from unit.bad_batches import OVERFLOW_BASE, lying_count_batch, overflowing_batch

pytestmark = pytest.mark.e2e

NOW = "2025-11-21T04:40:00Z"
CONFIG = "topics:\n  orders:\n    cleanup.policy: compact\n"

CASES = {
    "offsets-past-long-max": (
        OVERFLOW_BASE,
        lambda: overflowing_batch(OVERFLOW_BASE),
        "batch offsets out of range",
    ),
    "lying-records-count": (0, lying_count_batch, "records count 2147483647 cannot fit the batch"),
}


def _lake(tmp_path: Path, base: int, make: Callable[[], bytes]) -> tuple[Path, str]:
    root = tmp_path / "lake"
    store = LocalStore(root)
    key = f"orders-0/{base:020d}.log"
    store.put(key, make())
    upload_segment(store, TopicPartition("orders", 1), make_segment(0))
    return root, key


def _committed_partitions(root: Path) -> list[str]:
    head = read_head(LocalStore(root))
    assert head is not None
    return [str(p.topic_partition) for p in head.partitions]


@pytest.mark.parametrize(("base", "make", "reason"), list(CASES.values()), ids=list(CASES))
def test_adopt_quarantines_the_bad_upload_and_commits_the_rest(
    tmp_path: Path, base: int, make: Callable[[], bytes], reason: str
) -> None:
    root, key = _lake(tmp_path, base, make)

    result = cli("adopt", "--lake", str(root), "--now", NOW)

    assert result.returncode == 1
    assert result.stderr == "kafka-segments adopt: 1 partition(s) quarantined: orders-0\n"
    assert f"{key} at byte 0: CorruptRecordError: {reason}" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert _committed_partitions(root) == ["orders-1"]
    described = cli("describe", "--lake", str(root))
    assert described.returncode == 0, described.stderr
    assert "1 partition(s) of 1 topic(s), 1 segment(s)," in described.stdout
    assert " bytes, 6 records; " in described.stdout


@pytest.mark.parametrize(("base", "make", "reason"), list(CASES.values()), ids=list(CASES))
def test_run_quarantines_the_bad_upload_and_later_runs_go_on(
    tmp_path: Path, base: int, make: Callable[[], bytes], reason: str
) -> None:
    root, key = _lake(tmp_path, base, make)
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    common = ["--lake", str(root), "--config", str(config), "--now", NOW]

    for _ in range(2):  # the first run and the next one: neither is stalled
        result = cli("run", *common, "--json")

        assert result.returncode == 1
        errors = [line for line in result.stderr.splitlines() if not line.startswith("[run] ")]
        assert errors == ["kafka-segments run: 1 partition(s) quarantined and left alone: orders-0"]
        assert "Traceback" not in result.stdout + result.stderr
        (item,) = json.loads(result.stdout)["adoption"]["quarantined"]
        assert (item["key"], item["partition"]) == (key, 0)
        assert item["reason"].startswith(reason)
        assert "at byte 0" in item["reason"]
        assert _committed_partitions(root) == ["orders-1"]


def test_dump_names_a_count_the_records_do_not_fill(tmp_path: Path) -> None:
    # 12 claimed around 10 records fits the batch's bytes, so adoption takes it; the first full decode
    # names the lie: the object, the batch's byte position and offset, claimed and found
    root = tmp_path / "lake"
    key = "orders-0/00000000000000000000.log"
    LocalStore(root).put(key, lying_count_batch(claimed=12))
    assert cli("adopt", "--lake", str(root), "--now", NOW).returncode == 0

    result = cli("dump", "--lake", str(root), "--topic", "orders", "--partition", "0")

    assert result.returncode == 1
    assert result.stderr == (
        f"kafka-segments dump: {root / key} at byte 0 (offset 0): record 10: varint at 170 runs past the end "
        "of the buffer (the batch header claims 12 records, its records stream holds 10)\n"
    )
