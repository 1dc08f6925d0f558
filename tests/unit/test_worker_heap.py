"""A Spark Python worker's heap is frozen after its first round (``engines.tasks.freeze_worker_heap``):
PySpark's daemon runs a full ``gc.collect()`` after every task of a reused worker, and over a heap holding
numba and boto3 that walk cost ~0.15 s of CPU per task (issue 22, point 4)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit

PROBE = """
import gc, json, time
import boto3  # a worker's heap: boto3's models, numba's registries and a kernel
from kafka_segments.pipeline.engines import tasks
from kafka_segments.records.builder import build_batch
from kafka_segments.records.fast import scan_header_table
from kafka_segments.records.record import Record
scan_header_table(build_batch([Record(0, 0, b"k", b"v")]))

def collect_s():
    start = time.process_time()
    gc.collect()
    return time.process_time() - start

walked = collect_s()
tasks.freeze_worker_heap()
frozen = gc.get_freeze_count()
tasks.freeze_worker_heap()  # once per process
print(json.dumps({"frozen": frozen, "again": gc.get_freeze_count(), "walked_s": walked,
                  "collect_s": collect_s()}))
"""


def test_the_worker_heap_is_frozen_once_and_a_full_collection_no_longer_walks_it() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.splitlines()[-1])

    assert result["frozen"] > 100_000  # the modules, numba's registries, the kernel
    assert result["again"] == result["frozen"]
    assert result["collect_s"] < result["walked_s"] / 5  # what PySpark's daemon pays after each task
