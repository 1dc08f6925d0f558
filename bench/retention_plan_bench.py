"""Retention planning benchmark: P partitions x S segments planned from the manifest (issue 4, item 12).

Synthesizes a committed lake (manifest version 1 only, written with the real codec and commit call; no
segment objects exist and none is read), a consumer-offset snapshot and a configuration, then measures, in
one run:

* **reference: json.loads** — parsing the manifest bytes into Python objects, nothing else: the floor of
  any plan that starts from a JSON manifest;
* **GET the head manifest** — the store's LIST of manifest versions + GET of the head (no decoding);
* **decode** — ``manifest_from_json`` of the same bytes (strict parsing, checks, value objects);
* **read + decode the head** — ``resolve_manifest``: the two above;
* **configuration**, **snapshot** — parsing the YAML and resolving each topic; ``snapshot_from_json``;
* **consumed index** — ``ConsumedIndex``: KIP-211 expiry of every committed offset of the snapshot;
* **plan_retention** — every pass over every partition, from the decoded manifest;
* **total plan from the lake** — what a user's ``plan`` does besides adoption: parse the configuration,
  read the snapshot JSON, read + decode the head manifest, resolve each topic's config, plan.

Each step is timed (best of ``--repeats`` rounds; each round runs every step once, so ratios compare runs
made side by side), then run once more under ``tracemalloc`` for its peak (timing and memory runs are
separate: tracemalloc slows allocation-heavy code down several times). The process's max RSS is reported,
and a fresh child process does the total step once to report the RSS that planning alone needs. A scaling
table plans 25/50/100 % of the partitions and of the segments per partition.

Usage::

    .venv/bin/python bench/retention_plan_bench.py                  # 1,000 partitions x 100 segments
    .venv/bin/python bench/retention_plan_bench.py --store s3       # the same on moto's S3 server
    .venv/bin/python bench/retention_plan_bench.py --quick          # 20 x 10, for the smoke test
    .venv/bin/python bench/retention_plan_bench.py --json out.json

Results go to ``bench/RESULTS.md`` by hand (copy the printed tables).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import hashlib
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_segments.config import TopicConfig, parse_config
from kafka_segments.demo import DEFAULT_REGION, EMBEDDED_CREDENTIALS, embedded_s3_server
from kafka_segments.lake.codec import manifest_from_json
from kafka_segments.lake.commit import commit_manifest
from kafka_segments.lake.history import head_version
from kafka_segments.lake.layout import manifest_key, segment_key
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.offsets.snapshot_codec import snapshot_from_json, snapshot_to_json
from kafka_segments.retention.consumed import ConsumedIndex
from kafka_segments.retention.plan import RetentionPlan, plan_retention
from kafka_segments.state import (
    CommittedOffset,
    GroupOffsets,
    GroupType,
    Manifest,
    OffsetSnapshot,
    OpenTransaction,
    PartitionState,
    SegmentEntry,
    SegmentOrigin,
    sort_partitions,
)
from kafka_segments.storage import LocalStore, ObjectStore, S3Store
from kafka_segments.topic_partition import TopicPartition

BUCKET = "retention-plan-bench"
NOW_MS = 1_763_700_000_000
MINUTE_MS = 60_000
HOUR_MS = 3_600_000
DAY_MS = 86_400_000
MIB = 1 << 20
ADOPT_RUN = "20251120T000000Z-0a1b2c3d"
REQUIRED_GROUP = "billing-audit"
SEED = 20251121


@dataclass(frozen=True)
class TopicSpec:
    """One synthetic topic: its settings, and the shape of its partitions' logs."""

    name: str
    settings: dict[str, Any]
    span_days: float
    """How far back the oldest segment's records go (x 0.6..1.4 per partition)."""
    segment_mib: int
    record_bytes: int
    log_start_share: float
    """Share of partitions whose log start offset a DeleteRecords moved into a later segment."""


TOPICS = (
    TopicSpec("orders", {"retention.ms": 7 * DAY_MS}, 10, 64, 600, 0.03),
    TopicSpec("clicks", {"retention.ms": -1, "retention.bytes": 1 << 30}, 12, 16, 300, 0.03),
    TopicSpec(
        "payments",
        {
            "retention.ms": 30 * DAY_MS,
            "retention.commitoffset.enable": True,
            "retention.commitoffset.ms": HOUR_MS,
        },
        20,
        32,
        800,
        0.03,
    ),
    TopicSpec("audit", {"retention.ms": -1}, 60, 128, 1000, 0.3),
    TopicSpec("inventory", {"cleanup.policy": "compact"}, 30, 32, 400, 0.1),
    TopicSpec("metrics", {"retention.ms": DAY_MS, "retention.bytes": 256 * MIB}, 3, 8, 200, 0.03),
    TopicSpec(
        "shipments",
        {
            "retention.ms": 14 * DAY_MS,
            "retention.commitoffset.enable": True,
            "retention.commitoffset.ms": 6 * HOUR_MS,
            "kafka_segments.consumed.required.groups": [REQUIRED_GROUP],
        },
        14,
        32,
        700,
        0.03,
    ),
    TopicSpec("sessions", {"cleanup.policy": "compact,delete", "retention.ms": 3 * DAY_MS}, 5, 16, 250, 0.03),
    TopicSpec("notifications", {}, 9, 64, 500, 0.03),
    TopicSpec(
        "telemetry",
        {
            "retention.bytes": 2 << 30,
            "retention.commitoffset.enable": True,
            "retention.commitoffset.ms": 12 * HOUR_MS,
        },
        6,
        32,
        300,
        0.03,
    ),
)


@dataclass(frozen=True)
class Shape:
    partitions: int
    segments: int
    groups: int
    repeats: int
    store: str
    child: bool

    @property
    def entries(self) -> int:
        return self.partitions * self.segments


# ------------------------------------------------------------------------------------------- synthesis


def config_text(topics: Sequence[TopicSpec]) -> str:
    """The YAML configuration (topics without settings of their own get the broker defaults)."""
    lines = ["broker:", "  offsets.retention.minutes: 10080", "topics:"]
    for spec in topics:
        if spec.settings:
            lines.append(f"  {spec.name}:")
            lines.extend(f"    {name}: {json.dumps(value)}" for name, value in spec.settings.items())
    return "\n".join(lines) + "\n"


def partition_counts(partitions: int, topics: int) -> list[int]:
    return [partitions // topics + (index < partitions % topics) for index in range(topics)]


def segment_entry(
    tp: TopicPartition, base: int, *, records: int, size: int, start_ms: int, end_ms: int
) -> SegmentEntry:
    key = segment_key(tp, base)
    empty = records == 0
    return SegmentEntry(
        key=key,
        base_offset=base,
        last_offset=None if empty else base + records - 1,
        size=size,
        sha256=hashlib.sha256(key.encode()).hexdigest(),
        etag='"' + hashlib.md5(key.encode()).hexdigest() + '"',
        record_count=records,
        batch_count=0 if empty else max(1, size // (16 * 1024)),
        max_timestamp_ms=-1 if empty else end_ms,
        first_batch_max_timestamp_ms=-1 if empty else start_ms,
        last_modified_ms=end_ms + 2_000,
        origin=SegmentOrigin.ADOPTED,
        run_id=ADOPT_RUN,
    )


def synth_partition(
    spec: TopicSpec, tp: TopicPartition, *, segments: int, rng: random.Random
) -> PartitionState:
    """``segments`` contiguous segments whose records reach back ``span`` days; the last is the active one."""
    span_ms = int(spec.span_days * DAY_MS * rng.uniform(0.6, 1.4))
    step_ms = span_ms // segments
    base = rng.randrange(0, 50_000_000)
    entries = []
    for index in range(segments):
        end_ms = NOW_MS - (segments - 1 - index) * step_ms - rng.randrange(0, step_ms // 10 + 1)
        if index == segments - 1:
            end_ms = NOW_MS - rng.randrange(1_000, 5 * MINUTE_MS)
            if segments > 1 and rng.random() < 0.02:  # a freshly rolled, empty active segment
                entries.append(segment_entry(tp, base, records=0, size=0, start_ms=end_ms, end_ms=end_ms))
                break
        share = rng.uniform(0.05, 0.9) if index == segments - 1 else rng.uniform(0.92, 1.0)
        size = int(spec.segment_mib * MIB * share)
        records = max(1, size // spec.record_bytes)
        entries.append(
            segment_entry(tp, base, records=records, size=size, start_ms=end_ms - step_ms, end_ms=end_ms)
        )
        base += records
    log_start = entries[0].base_offset
    if segments > 2 and rng.random() < spec.log_start_share:  # DeleteRecords into segment k
        k = rng.randint(1, min(10, segments - 2))
        log_start = entries[k].base_offset + rng.randrange(entries[k].record_count)
    open_transactions = ()
    if rng.random() < 0.01:
        open_transactions = (
            OpenTransaction(rng.randrange(1000, 9999), 0, max(log_start, base - rng.randrange(1, 100))),
        )
    return PartitionState(
        topic_partition=tp,
        log_start_offset=log_start,
        log_end_offset=base,
        segments=tuple(entries),
        cleaner_checkpoint=(log_start + base) // 2
        if "compact" in spec.settings.get("cleanup.policy", "")
        else None,
        open_transactions=open_transactions,
        run_id=ADOPT_RUN,
    )


def synth_manifest(shape: Shape, topics: Sequence[TopicSpec]) -> Manifest:
    rng = random.Random(SEED)
    states = [
        synth_partition(spec, TopicPartition(spec.name, partition), segments=shape.segments, rng=rng)
        for spec, count in zip(topics, partition_counts(shape.partitions, len(topics)), strict=True)
        for partition in range(count)
    ]
    return Manifest(
        version=1,
        parent_version=None,
        run_id=ADOPT_RUN,
        operation="adopt",
        committed_at_ms=NOW_MS - HOUR_MS,
        now_ms=NOW_MS - HOUR_MS,
        partitions=sort_partitions(states),
    )


GROUP_KINDS = (
    "stable",
    "stable",
    "stable",
    "stable",
    "stable",
    "stable",
    "kip848",
    "empty-old",
    "empty",
    "standalone",
)
"""The mix of 10 consecutive groups: 6 classic Stable (subscribed, never expire), 1 KIP-848, 1 Empty for 10
days (its offsets expired), 1 Empty for 2 days (offsets kept, not subscribed), 1 standalone (Empty, no
protocol type; commit times of 1..12 days ago: some expired)."""


def synth_group(
    index: int, topics: Sequence[str], states: dict[str, list[PartitionState]], rng: random.Random
) -> GroupOffsets:
    kind = GROUP_KINDS[index % len(GROUP_KINDS)]
    mine = sorted({topics[index % len(topics)], *rng.sample(list(topics), rng.randint(0, 2))})
    group_id = REQUIRED_GROUP if index == 0 else f"{kind}-{index:03d}"
    if index == 0 and "shipments" in states:
        mine = sorted({*mine, "shipments"})
    lagging = index % 4 == 0
    commit_age = rng.randrange(1, 12) * DAY_MS if kind == "standalone" else rng.randrange(1, 10) * MINUTE_MS
    offsets = []
    for topic in mine:
        for state in states[topic]:
            low, high = state.log_start_offset, state.log_end_offset
            offset = (
                low + int((high - low) * rng.uniform(0.3, 0.8))
                if lagging
                else max(low, high - rng.randrange(500))
            )
            offsets.append(
                CommittedOffset(topic, state.topic_partition.partition, offset, NOW_MS - commit_age)
            )
    empty_since = {
        "empty-old": NOW_MS - 10 * DAY_MS,
        "empty": NOW_MS - 2 * DAY_MS,
        "standalone": NOW_MS - commit_age,  # a simple consumer's group has no members: Empty
    }.get(kind)
    return GroupOffsets(
        group_id=group_id,
        state="Empty" if empty_since else "Stable",
        protocol_type=None if kind == "standalone" else "consumer",
        state_timestamp_ms=empty_since or NOW_MS - DAY_MS,
        subscribed_topics=tuple(mine) if kind in ("stable", "kip848") else (),
        offsets=tuple(offsets),
        group_type=GroupType.CONSUMER if kind == "kip848" else GroupType.CLASSIC,
    )


def synth_snapshot(manifest: Manifest, *, groups: int) -> OffsetSnapshot:
    rng = random.Random(SEED + 1)
    states: dict[str, list[PartitionState]] = {}
    for state in manifest.partitions:
        states.setdefault(state.topic_partition.topic, []).append(state)
    topics = sorted(states)
    members = tuple(synth_group(index, topics, states, rng) for index in range(groups))
    return OffsetSnapshot(taken_at_ms=NOW_MS - MINUTE_MS, source="file", groups=members)


# ------------------------------------------------------------------------------------------- the lake


class CountingStore:
    """Counts store calls; a segment body read is a get / get_range of a ``.log`` key. Every call it does
    not count goes to ``inner``."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner
        self.body_reads = 0
        self.gets = 0
        self.lists = 0

    def get(self, key: str) -> bytes:
        self.gets += 1
        self.body_reads += key.endswith(".log")
        return self.inner.get(key)

    def get_range(self, key: str, *, start: int, end: int, if_match: str | None = None) -> bytes:
        self.gets += 1
        self.body_reads += key.endswith(".log")
        return self.inner.get_range(key, start=start, end=end, if_match=if_match)

    def list(self, prefix: str = "") -> Iterator[Any]:
        self.lists += 1
        return self.inner.list(prefix)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@dataclass(frozen=True)
class Lake:
    store: ObjectStore
    uri: str
    endpoint: str | None


@contextlib.contextmanager
def open_lake(kind: str, workdir: Path) -> Iterator[Lake]:
    if kind == "local":
        yield Lake(LocalStore(workdir / "lake"), str(workdir / "lake"), None)
        return
    os.environ.setdefault("AWS_ACCESS_KEY_ID", EMBEDDED_CREDENTIALS["aws_access_key_id"])
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", EMBEDDED_CREDENTIALS["aws_secret_access_key"])
    with embedded_s3_server() as server:
        server.client().create_bucket(Bucket=BUCKET)
        store = S3Store(BUCKET, "lake", endpoint_url=server.endpoint_url, region=DEFAULT_REGION)
        yield Lake(store, f"s3://{BUCKET}/lake", server.endpoint_url)


def store_for(uri: str, endpoint: str | None) -> ObjectStore:
    if uri.startswith("s3://"):
        bucket, _, prefix = uri[len("s3://") :].partition("/")
        return S3Store(bucket, prefix, endpoint_url=endpoint, region=DEFAULT_REGION)
    return LocalStore(uri)


def get_head_bytes(store: ObjectStore) -> bytes:
    version = head_version(store)
    if version is None:
        raise SystemExit("no manifest in the lake")
    return store.get(manifest_key(version))


def topic_configs(config_yaml: str, topics: Sequence[str]) -> list[TopicConfig]:
    """Parse the configuration file's text and resolve each topic's effective configuration."""
    config = parse_config(config_yaml, source="bench.yaml")
    return [config.for_topic(topic) for topic in topics]


def plan_from_lake(store: ObjectStore, config_yaml: str, snapshot_json: bytes) -> RetentionPlan:
    """A user's plan minus adoption: configuration, snapshot, head manifest, per-topic configs, plan."""
    snapshot = snapshot_from_json(snapshot_json, location="snapshot.json")
    manifest = resolve_manifest(store)
    configs = topic_configs(config_yaml, manifest.topics)
    return plan_retention(manifest.partitions, configs, now_ms=NOW_MS, snapshot=snapshot)


# ------------------------------------------------------------------------------------------- measuring


def timed_once(action: Callable[[], Any]) -> float:
    gc.collect()
    start = time.perf_counter()
    result = action()
    seconds = time.perf_counter() - start
    del result
    return seconds


def best_of(action: Callable[[], Any], repeats: int) -> list[float]:
    return [timed_once(action) for _ in range(repeats)]


def round_robin(actions: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[float]]:
    """Every action once per round, ``repeats`` rounds: a ratio compares runs made side by side (the
    machine's load changes between rounds more than within one)."""
    samples: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(repeats):
        for name, action in actions.items():
            samples[name].append(timed_once(action))
    return samples


def traced(action: Callable[[], Any]) -> tuple[int, int]:
    """(tracemalloc peak, bytes still held by the result) of one run, relative to before it."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    result = action()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return peak - before, current - before


def max_rss_bytes() -> int:
    """``getrusage``'s max RSS (KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def peak_rss_bytes() -> int:
    """The peak RSS of this program image: ``VmHWM`` where ``/proc`` has it, else ``max_rss_bytes``.

    A child started from a big parent inherits the parent's ``ru_maxrss`` across fork + exec on Linux;
    ``VmHWM`` belongs to the new address space, so it is the child's own peak.
    """
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return max_rss_bytes()


def plan_summary(plan: RetentionPlan) -> dict[str, Any]:
    segments: Counter[str] = Counter()
    partitions: Counter[str] = Counter()
    size: Counter[str] = Counter()
    for partition in plan.partitions:
        reasons = set()
        for deletion in partition.deletions:
            segments[deletion.reason.value] += 1
            size[deletion.reason.value] += deletion.segment.size
            reasons.add(deletion.reason.value)
        partitions.update(reasons)
    return {
        "partitions": len(plan.partitions),
        "partitions_changed": sum(p.changed for p in plan.partitions),
        "segments_deleted": sum(segments.values()),
        "bytes_deleted": sum(size.values()),
        "by_reason": {
            reason: {"segments": segments[reason], "partitions": partitions[reason], "bytes": size[reason]}
            for reason in ("log-start-offset", "retention.bytes", "consumed", "retention.ms")
        },
        "consumed_status": dict(Counter(p.consumed.status.value for p in plan.partitions)),
        "unread_loss_groups": sum(len(p.unread_loss) for p in plan.partitions),
    }


def scaled(states: Sequence[PartitionState], *, partitions: float, segments: float) -> list[PartitionState]:
    """A share of the partitions (the same share of every topic: 1 or 2 of every 4 in manifest order), each
    cut to its newest share of segments."""
    quarters = round(4 * partitions)
    chosen = [state for index, state in enumerate(states) if index % 4 < quarters] or list(states[:1])
    if segments >= 1:
        return chosen
    cut = []
    for state in chosen:
        kept = state.segments[-max(1, round(len(state.segments) * segments)) :]
        start = max(state.log_start_offset, kept[0].base_offset)
        cut.append(dataclasses.replace(state, segments=kept, log_start_offset=start))
    return cut


def scaling(
    manifest: Manifest, configs: list[TopicConfig], snapshot: OffsetSnapshot, repeats: int
) -> list[dict[str, Any]]:
    rows = []
    for partitions, segments in ((0.25, 1.0), (0.5, 1.0), (1.0, 0.25), (1.0, 0.5), (1.0, 1.0)):
        states = scaled(manifest.partitions, partitions=partitions, segments=segments)
        entries = sum(len(state.segments) for state in states)
        samples = best_of(
            lambda s=states: plan_retention(s, configs, now_ms=NOW_MS, snapshot=snapshot), repeats
        )
        rows.append(
            {
                "partitions": len(states),
                "segments": entries,
                "seconds": min(samples),
                "us_per_segment": min(samples) / entries * 1e6,
            }
        )
    return rows


def child_run(lake: Lake, config_path: Path, snapshot_path: Path) -> dict[str, Any]:
    """The total step once, in a fresh process: its time and max RSS (before the work, and at the end)."""
    command = [sys.executable, __file__, "--child-lake", lake.uri, "--child-config", str(config_path)]
    command += ["--child-snapshot", str(snapshot_path)]
    if lake.endpoint:
        command += ["--child-endpoint", lake.endpoint]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def child_main(args: argparse.Namespace) -> int:
    store = CountingStore(store_for(args.child_lake, args.child_endpoint))
    config_yaml = Path(args.child_config).read_text(encoding="utf-8")
    snapshot_json = Path(args.child_snapshot).read_bytes()
    before = peak_rss_bytes()
    start = time.perf_counter()
    plan = plan_from_lake(store, config_yaml, snapshot_json)
    seconds = time.perf_counter() - start
    report = {
        "seconds": seconds,
        "max_rss_before": before,
        "max_rss": peak_rss_bytes(),
        "segments_deleted": sum(len(p.deletions) for p in plan.partitions),
        "body_reads": store.body_reads,
    }
    print(json.dumps(report))
    return 0


STEPS = (
    ("reference", "reference: `json.loads` of the manifest bytes"),
    ("get", "GET the head manifest (LIST + GET, no decoding)"),
    ("decode", "decode (`manifest_from_json`)"),
    ("read", "read + decode the head (`resolve_manifest`)"),
    ("config", "configuration: parse the YAML, resolve each topic"),
    ("snapshot", "read the offsets snapshot (`snapshot_from_json`)"),
    ("index", "consumed index (`ConsumedIndex`, KIP-211 over the snapshot)"),
    ("plan", "`plan_retention` over every partition"),
    ("total", "total plan from the lake (config + snapshot + manifest + plan)"),
)


@dataclass(frozen=True)
class Inputs:
    """What planning starts from: the committed manifest, the snapshot and the configuration."""

    manifest: Manifest
    snapshot: OffsetSnapshot
    config_yaml: str
    snapshot_json: bytes
    configs: list[TopicConfig]


def synthesize(shape: Shape) -> Inputs:
    topics = TOPICS[: min(len(TOPICS), shape.partitions)]
    manifest = synth_manifest(shape, topics)
    snapshot = synth_snapshot(manifest, groups=shape.groups)
    config_yaml = config_text(TOPICS)
    configs = topic_configs(config_yaml, manifest.topics)
    return Inputs(manifest, snapshot, config_yaml, snapshot_to_json(snapshot), configs)


def step_actions(store: CountingStore, inputs: Inputs, data: bytes) -> dict[str, Callable[[], Any]]:
    manifest, snapshot, configs = inputs.manifest, inputs.snapshot, inputs.configs
    location = store.location(manifest_key(manifest.version))
    retention_ms = sorted({config.offsets_retention_ms for config in configs})
    return {
        "reference": lambda: json.loads(data),
        "get": lambda: get_head_bytes(store),
        "decode": lambda: manifest_from_json(data, location=location),
        "read": lambda: resolve_manifest(store),
        "config": lambda: topic_configs(inputs.config_yaml, manifest.topics),
        "snapshot": lambda: snapshot_from_json(inputs.snapshot_json, location="snapshot.json"),
        "index": lambda: [ConsumedIndex(snapshot, now_ms=NOW_MS, retention_ms=ms) for ms in retention_ms],
        "plan": lambda: plan_retention(manifest.partitions, configs, now_ms=NOW_MS, snapshot=snapshot),
        "total": lambda: plan_from_lake(store, inputs.config_yaml, inputs.snapshot_json),
    }


def step_results(
    samples: dict[str, list[float]], memory: dict[str, tuple[int, int]], entries: int
) -> dict[str, Any]:
    reference = min(samples["reference"])
    return {
        name: {
            "seconds": min(values),
            "all_seconds": values,
            "us_per_segment": min(values) / entries * 1e6,
            "vs_reference": min(values) / reference,
            "tracemalloc_peak_bytes": memory[name][0],
            "retained_bytes": memory[name][1],
        }
        for name, values in samples.items()
    }


def run(shape: Shape) -> dict[str, Any]:
    load_before = os.getloadavg()
    phases: dict[str, float] = {}
    clock = time.perf_counter()
    inputs = synthesize(shape)
    manifest = inputs.manifest
    phases["synthesis"] = time.perf_counter() - clock
    with (
        tempfile.TemporaryDirectory(prefix="retention-plan-bench-") as tmp,
        open_lake(shape.store, Path(tmp)) as lake,
    ):
        clock = time.perf_counter()
        commit_manifest(lake.store, manifest)
        config_path, snapshot_path = Path(tmp) / "bench.yaml", Path(tmp) / "snapshot.json"
        config_path.write_text(inputs.config_yaml, encoding="utf-8")
        snapshot_path.write_bytes(inputs.snapshot_json)
        phases["write the lake"] = time.perf_counter() - clock
        store = CountingStore(lake.store)
        data = get_head_bytes(store)
        actions = step_actions(store, inputs, data)
        clock = time.perf_counter()
        samples = round_robin(actions, shape.repeats)
        phases["timed steps"] = time.perf_counter() - clock
        clock = time.perf_counter()
        memory = {name: traced(action) for name, action in actions.items()}
        phases["tracemalloc runs"] = time.perf_counter() - clock
        once = CountingStore(lake.store)
        plan = plan_from_lake(once, inputs.config_yaml, inputs.snapshot_json)
        calls = {"lists": once.lists, "gets": once.gets, "body_reads": store.body_reads + once.body_reads}
        clock = time.perf_counter()
        scale = scaling(manifest, inputs.configs, inputs.snapshot, shape.repeats)
        phases["scaling"] = time.perf_counter() - clock
        clock = time.perf_counter()
        child = child_run(lake, config_path, snapshot_path) if shape.child else None
        phases["fresh process"] = time.perf_counter() - clock
    return {
        "shape": dataclasses.asdict(shape) | {"entries": shape.entries, "topics": len(manifest.topics)},
        "manifest_bytes": len(data),
        "snapshot_offsets": sum(len(group.offsets) for group in inputs.snapshot.groups),
        "steps": step_results(samples, memory, shape.entries),
        "store_calls": calls,
        "body_reads": calls["body_reads"] + (child["body_reads"] if child else 0),
        "plan": plan_summary(plan),
        "scaling": scale,
        "max_rss_bytes": max_rss_bytes(),
        "child": child,
        "phase_seconds": phases,
        "machine": {
            "python": platform.python_version(),
            "nproc": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
        },
    }


# ------------------------------------------------------------------------------------------- reporting


def mb(value: float) -> str:
    return f"{value / 1e6:,.1f}"


def steps_table(result: dict[str, Any]) -> list[str]:
    shape = result["shape"]
    lines = [
        f"**Retention planning** ({shape['partitions']:,} partitions x {shape['segments']} segments = "
        f"{shape['entries']:,} segment entries, {shape['topics']} topics, {shape['groups']} groups with "
        f"{result['snapshot_offsets']:,} committed offsets; manifest {mb(result['manifest_bytes'])} MB; "
        f"{shape['store']} store; best of {shape['repeats']})",
        "",
        "| step | seconds | µs/segment | vs reference | tracemalloc peak MB | retained MB |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, label in STEPS:
        step = result["steps"][name]
        lines.append(
            f"| {label} | {step['seconds']:.3f} | {step['us_per_segment']:.2f} | {step['vs_reference']:.2f}x "
            f"| {mb(step['tracemalloc_peak_bytes'])} | {mb(step['retained_bytes'])} |"
        )
    return lines


def plan_table(result: dict[str, Any]) -> list[str]:
    plan = result["plan"]
    lines = [
        f"**Plan** ({plan['partitions_changed']:,} of {plan['partitions']:,} partitions changed, "
        f"{plan['segments_deleted']:,} segments = {plan['bytes_deleted'] / 1e9:,.1f} GB deleted)",
        "",
        "| pass | segments deleted | partitions | GB |",
        "|---|---:|---:|---:|",
    ]
    for reason, row in plan["by_reason"].items():
        lines.append(
            f"| {reason} | {row['segments']:,} | {row['partitions']:,} | {row['bytes'] / 1e9:,.1f} |"
        )
    status = ", ".join(f"{name} {count:,}" for name, count in sorted(plan["consumed_status"].items()))
    lines += [
        "",
        f"Consumed retention per partition: {status}; unread-loss warnings: {plan['unread_loss_groups']:,}",
    ]
    return lines


def scaling_table(result: dict[str, Any]) -> list[str]:
    lines = [
        "**Scaling** (`plan_retention` only, from the decoded manifest; the consumed index is built inside)",
        "",
        "| partitions | segment entries | seconds | µs/segment | µs/partition |",
        "|---:|---:|---:|---:|---:|",
    ]
    for row in result["scaling"]:
        lines.append(
            f"| {row['partitions']:,} | {row['segments']:,} | {row['seconds']:.3f} "
            f"| {row['us_per_segment']:.2f} | {row['seconds'] / row['partitions'] * 1e6:.1f} |"
        )
    return lines


def memory_lines(result: dict[str, Any]) -> list[str]:
    calls, machine = result["store_calls"], result["machine"]
    lines = [
        f"Segment bodies read, all steps: {result['body_reads']}; store calls of one plan from the lake: "
        f"{calls['lists']} LIST, {calls['gets']} GET (the head manifest)",
        f"Max RSS of this process (synthesis included): {mb(result['max_rss_bytes'])} MB",
        "Phases (s): " + ", ".join(f"{name} {value:.1f}" for name, value in result["phase_seconds"].items()),
        f"Load average (1 min) before / after: {machine['load_average_before'][0]:.2f} / "
        f"{machine['load_average_after'][0]:.2f}",
    ]
    child = result["child"]
    if child is not None:
        lines.append(
            f"Fresh process, total plan from the lake once: {child['seconds']:.3f} s, max RSS "
            f"{mb(child['max_rss_before'])} MB after imports -> {mb(child['max_rss'])} MB "
            f"(+{mb(child['max_rss'] - child['max_rss_before'])} MB)"
        )
    return lines


def report(result: dict[str, Any]) -> str:
    return "\n".join(
        [*steps_table(result), "", *plan_table(result), "", *scaling_table(result), "", *memory_lines(result)]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--segments", type=int, default=100, help="segments per partition")
    parser.add_argument("--groups", type=int, default=50, help="consumer groups in the snapshot")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per step (the best is reported)")
    parser.add_argument("--store", choices=("local", "s3"), default="local")
    parser.add_argument("--no-child", action="store_true", help="skip the fresh-process RSS measurement")
    parser.add_argument("--quick", action="store_true", help="20 partitions x 10 segments, 1 repeat")
    parser.add_argument("--json", help="write the results as JSON to this file")
    for hidden in ("--child-lake", "--child-config", "--child-snapshot", "--child-endpoint"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_lake:
        return child_main(args)
    if args.quick:
        args.partitions, args.segments, args.repeats = 20, 10, 1
    if args.partitions < 1 or args.segments < 1:
        parser.error("--partitions and --segments must be at least 1")
    shape = Shape(args.partitions, args.segments, args.groups, args.repeats, args.store, not args.no_child)
    result = run(shape)
    print(report(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=2)
    return 0 if result["body_reads"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
