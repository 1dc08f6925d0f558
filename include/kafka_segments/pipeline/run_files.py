"""A run's own documents in its folder (``_kafka_segments/runs/<run id>/``): its plan and its report."""

from __future__ import annotations

import json

from kafka_segments.lake.layout import run_prefix
from kafka_segments.storage.base import ObjectStore, Overwrite


def run_file_key(run_id: str, name: str) -> str:
    return run_prefix(run_id) + name


def write_run_file(store: ObjectStore, run_id: str, name: str, document: object) -> str:
    """Write ``document`` as JSON to the run's folder; return the key."""
    key = run_file_key(run_id, name)
    data = json.dumps(document, indent=2, sort_keys=False).encode() + b"\n"
    store.put(key, data, mode=Overwrite())
    return key
