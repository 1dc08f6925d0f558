"""``kafka-segments run`` (compaction and retention in one commit) and ``delete-records`` as real processes on
a lake in ministack's S3 (an implementation independent of moto; ``tests/ministack_fixtures.py``), reached
through ``AWS_ENDPOINT_URL`` as a user would. Skipped, naming why, when ministack is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS
from kafka_segments.lake.history import read_head
from kafka_segments.lake.reader import read_segment
from kafka_segments.storage import s3_probe
from kafka_segments.topic_partition import TopicPartition
from kit import T0
from lake.retention_helpers import upload_fifteen_records
from ministack_fixtures import new_ministack_store

pytestmark = pytest.mark.e2e

CLI = Path(sys.executable).parent / "kafka-segments"
CONFIG = """\
topics:
  t:
    retention.ms: 10000
    file.delete.delay.ms: 0
  c:
    cleanup.policy: compact
    min.cleanable.dirty.ratio: 0.01
    file.delete.delay.ms: 0
"""


def cli(*args: str, endpoint: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_ACCESS_KEY_ID=EMBEDDED_CREDENTIALS["aws_access_key_id"],
        AWS_SECRET_ACCESS_KEY=EMBEDDED_CREDENTIALS["aws_secret_access_key"],
        AWS_DEFAULT_REGION=DEFAULT_REGION,
        AWS_ENDPOINT_URL=endpoint,
    )
    return subprocess.run(
        [str(CLI), *args], capture_output=True, text=True, timeout=180, check=False, env=env
    )


def test_run_and_delete_records_on_ministack(ministack_server: str, tmp_path: Path) -> None:
    store = new_ministack_store(ministack_server)
    upload_fifteen_records(store, ts=10)  # t: every record past retention.ms
    upload_fifteen_records(store, ts=T0 - 1000, tp=TopicPartition("c", 0), keyed=True)  # c: 3 keys
    upload_fifteen_records(store, ts=T0 - 1000, tp=TopicPartition("d", 0))  # d: for delete-records
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    lake = f"s3://{store.bucket}/{store.prefix.rstrip('/')}"

    common = ["--lake", lake, "--config", str(config), "--now", str(T0)]
    ran = cli("run", *common, "--json", endpoint=ministack_server)

    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["committed_version"] == 1  # adoption, compaction and retention in one commit
    assert report["compaction"]["totals"]["cleaned"] == 1
    assert report["compaction"]["totals"]["messages_written"] == 3  # the latest record of each key
    assert report["plan"]["totals"]["by_reason"]["retention.ms"]["segments"] == 3

    request = tmp_path / "delete.json"
    request.write_text('{"version": 1, "partitions": [{"topic": "d", "partition": 0, "offset": 7}]}')
    deleted = cli("delete-records", *common, "--offset-json-file", str(request), endpoint=ministack_server)

    assert deleted.returncode == 0, deleted.stderr
    head = read_head(store)
    assert head is not None
    assert head.version == 2
    starts = {state.topic_partition: state.log_start_offset for state in head.partitions}
    assert starts[TopicPartition("t", 0)] == 15
    assert starts[TopicPartition("d", 0)] == 7
    for entry in head.live_segments():
        read_segment(store, entry)  # every segment the head lists is there and reads back
    assert not [m.key for m in store.list(s3_probe.PROBE_PREFIX)]  # the probes cleaned up
