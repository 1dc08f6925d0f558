"""Shared pieces of the Spark tests: lakes, the moto environment, comparing two runs' documents."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from compaction_lake import segment_keys
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS, EmbeddedS3
from kafka_segments.lake.codec import manifest_to_json
from kafka_segments.lake.run_folder import read_staged_manifest
from kafka_segments.pipeline.stages import PLAN, STAGED, read_run_json
from kafka_segments.storage import ObjectStore

PANDAS_WARNING = "ignore:PySpark does not yet fully support pandas:FutureWarning"
"""pyspark 4.3 warns on import that pandas 3 is not fully supported (the jobs use no pandas)."""

WALL_CLOCK_FIELDS = frozenset({"committed_at_ms", "delete_after_ms", "last_modified_ms", "retired_at_ms"})
"""Manifest and report fields that are wall-clock times of the lake's own writes (not the run's logical
``now``): a retired object's ``delete_after_ms`` is its retirement's time plus ``file.delete.delay.ms``."""


@dataclass(frozen=True, slots=True)
class Lake:
    """A lake's store (for the test and the driver), its URI (what executors open) and the environment a
    process needs to open that URI."""

    store: ObjectStore
    uri: str
    environ: dict[str, str]


def s3_environ(server: EmbeddedS3) -> dict[str, str]:
    """The ``AWS_*`` settings a process (or an executor) needs to reach the session's moto server."""
    return {
        "AWS_ENDPOINT_URL": server.endpoint_url,
        "AWS_ACCESS_KEY_ID": EMBEDDED_CREDENTIALS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": EMBEDDED_CREDENTIALS["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": DEFAULT_REGION,
    }


MEASURED_FIELDS = frozenset({"times", "max-clean-time-secs"})
"""A compaction round's seconds per phase (``CleanerStats.times``) and the longest round's whole seconds
(the ``max-clean-time-secs`` gauge): measured, so never required equal between runs (a fresh Spark worker's
first round may take a second where the inline one took none)."""


def normalized(
    document: Any,
    run_ids: frozenset[str] = frozenset(),
    *,
    wall_clock: bool = False,
    prefixes: Iterable[str] = (),
) -> Any:
    """``document`` with every run id replaced by ``<run>``, every lake prefix in ``prefixes`` (two copies of
    one lake) by ``<lake>`` and measured durations by ``<time>`` (with ``wall_clock``, the wall-clock time
    fields too): two runs of the same lake compare equal when they did the same."""
    if isinstance(document, dict):
        return {
            key: "<time>"
            if (wall_clock and key in WALL_CLOCK_FIELDS) or key in MEASURED_FIELDS
            else normalized(value, run_ids, wall_clock=wall_clock, prefixes=prefixes)
            for key, value in document.items()
        }
    if isinstance(document, list):
        return [normalized(item, run_ids, wall_clock=wall_clock, prefixes=prefixes) for item in document]
    if isinstance(document, str):
        for run_id in run_ids:
            document = document.replace(run_id, "<run>")
        for prefix in prefixes:
            document = document.replace(prefix, "<lake>")
        return document
    return document


def staged_documents(store: ObjectStore, run_id: str, ids: frozenset[str]) -> dict[str, Any]:
    """What ``execute_run`` staged for ``run_id``: its engine, and its plan.json, staged manifest and staged
    report with the run ids in ``ids`` normalized (``manifest`` is ``None`` when nothing changed)."""
    report = dict(read_run_json(store, run_id, STAGED)["report"])
    engine = report.pop("engine")
    changed = read_run_json(store, run_id, STAGED)["changed"]
    manifest = json.loads(manifest_to_json(read_staged_manifest(store, run_id))) if changed else None
    return {
        "engine": engine,
        "plan": normalized(read_run_json(store, run_id, PLAN), ids),
        "manifest": normalized(manifest, ids),
        "report": normalized(report, ids),
    }


def written_by(store: ObjectStore, run_id: str) -> dict[str, bytes]:
    keys = segment_keys(meta.key for meta in store.list())
    return {key: store.get(key) for key in keys if f"-{run_id}." in key}
