"""kafka-segments against Kafka's own log cleaner, side by side, each as a user runs it (issue 22).

For every input log directory (``vs_kafka_inputs.py``: ``oracle genlog`` logs of 100 B and 1 KiB values x
none / lz4 / zstd, keys 20% distinct, and one written by kafka-python's builder), each repeat runs, on a
fresh copy of the same directory (same mtimes, same ``now``, ``cleanup.policy=compact``, 1 GiB segments):

* **Kafka**: ``oracle clean`` (the launcher ``KAFKA_ORACLE`` names): one cold JVM (``-Xmx2g``) loads the log
  (``UnifiedLog`` recovery) and runs one ``Cleaner.clean`` round. Its JSON gives ``clean_secs``; the JVM's
  wall time, CPU time and peak RSS come from ``os.wait4``.
* **kafka-segments**: ``kafka-segments run --engine inline`` (the console script, a fresh process) on the copy
  as a local lake: recover, adopt the segments, clean, plan, commit, gc. Its JSON report gives the round's
  read / clean / write times; wall, CPU and peak RSS come from ``os.wait4``. With ``--s3`` also on the same
  log uploaded to moto's S3 server (``moto_server`` in its own process, on the other core), whose overhead
  is reported against the local run (the Kafka reference stays the local log dir).

The sides run round-robin (the order alternates between repeats) and the medians are reported. The product's
numba kernels are loaded from their cache, warmed by an untimed run on a tiny input per codec first. After
each product run its committed state is exported (``kafka-segments export``, untimed) and every ``.log`` is
compared with Kafka's by sha256. Without ``KAFKA_ORACLE`` the script says so and measures the product alone
on the kafka-python input.

    .venv/bin/python bench/vs_kafka_cleaner.py                     # 1,000,000 records, 3 repeats
    .venv/bin/python bench/vs_kafka_cleaner.py --records 100000 --repeats 1 --s3
    .venv/bin/python bench/vs_kafka_cleaner.py --transactional 1024,lz4  # and a transactional producer's log
    .venv/bin/python bench/vs_kafka_cleaner.py --quick             # 2,000 records (the smoke test)
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from vs_kafka_inputs import (  # bench/ is sys.path[0] when run as a script
    NOW_MS,
    PARTITION,
    SEGMENT_BYTES,
    TOPIC,
    InputSpec,
    fresh_copy,
    input_dir,
)

ROOT = Path(__file__).resolve().parents[1]
CLI = Path(sys.executable).with_name("kafka-segments")
DATA_DIR = ROOT / "bench" / "data" / "vs_kafka"
ORACLE_ENV = "KAFKA_ORACLE"
BUCKET = "vs-kafka"
CONFIG = f"topics:\n  {TOPIC}:\n    cleanup.policy: compact\n    segment.bytes: {SEGMENT_BYTES}\n"
KAFKA_PROPS = ["--prop", "cleanup.policy=compact", "--prop", f"segment.bytes={SEGMENT_BYTES}"]


@dataclass(frozen=True)
class Measured:
    """A child process's wall time, CPU time (user + system) and peak RSS, from ``os.wait4``."""

    wall_s: float
    cpu_s: float
    rss_mb: float


def measure(argv: list[str], *, stdout: Path, env: dict[str, str] | None = None) -> Measured:
    """Run ``argv`` (stdout to the file ``stdout``); stop the bench if it fails."""
    with stdout.open("wb") as out, stdout.with_suffix(".stderr").open("wb") as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err, cwd=ROOT, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        said = stdout.with_suffix(".stderr").read_text(errors="replace")[-3000:]
        raise SystemExit(f"{' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}: {said}")
    return Measured(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def log_digests(partition_dir: Path) -> dict[str, str]:
    """File name -> sha256 of every ``.log`` of a partition directory."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(partition_dir.glob("*.log"))}


def kafka_side(launcher: str, log_dir: Path, work: Path) -> dict[str, Any]:
    """One ``oracle clean`` on a fresh copy of ``log_dir``."""
    copy = fresh_copy(log_dir, work / "kafka")
    argv = [launcher, "clean", "--log-dir", str(copy), "--partition", PARTITION, "--now", str(NOW_MS)]
    measured = measure([*argv, *KAFKA_PROPS, "--no-records"], stdout=work / "kafka.json")
    result = json.loads((work / "kafka.json").read_text())
    if not result.get("eligible"):
        raise SystemExit(f"Kafka did not clean {log_dir}: {json.dumps(result)[:2000]}")
    return {
        **asdict(measured),
        "clean_s": result["clean_secs"],
        "load_s": result["load_secs"],
        "messages_written": result["stats"]["messages_written"],
        "logs": {segment["file"]: segment["sha256"] for segment in result["segments"]},
    }


@dataclass(frozen=True)
class Lake:
    """Where a product run's lake lives: a local copy, or moto's S3 (``endpoint``) under a fresh prefix."""

    endpoint: str | None = None

    def prepare(self, log_dir: Path, work: Path, serial: int) -> str:
        if self.endpoint is None:
            return str(fresh_copy(log_dir, work / "lake"))
        client, prefix = self.client(), f"run-{serial}"
        for path in sorted(p for p in log_dir.rglob("*.log")):
            client.upload_file(str(path), BUCKET, f"{prefix}/{path.relative_to(log_dir)}")
        return f"s3://{BUCKET}/{prefix}"

    def client(self) -> Any:
        import boto3
        from kafka_segments.demo import DEFAULT_REGION

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=DEFAULT_REGION)

    def env(self, pycache: Path) -> dict[str, str]:
        """The product's environment: Python's bytecode cache in ``pycache`` (as a user's Python keeps
        one), and for S3 the endpoint."""
        env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
        if self.endpoint is None:
            return env
        from kafka_segments.demo import DEFAULT_REGION

        return {**env, "AWS_ENDPOINT_URL": self.endpoint, "AWS_DEFAULT_REGION": DEFAULT_REGION}

    def discard(self, lake: str) -> None:
        if self.endpoint is None:
            return
        client, prefix = self.client(), lake.removeprefix(f"s3://{BUCKET}/")
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=f"{prefix}/")
        for page in pages:
            keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
            if keys:
                client.delete_objects(Bucket=BUCKET, Delete={"Objects": keys})


def product_side(log_dir: Path, work: Path, lake_at: Lake, serial: int) -> dict[str, Any]:
    """One ``kafka-segments run --engine inline`` on a fresh lake holding ``log_dir``; then its export."""
    lake = lake_at.prepare(log_dir, work, serial)
    config, report = work / "config.yaml", work / "report.json"
    config.write_text(CONFIG)
    argv = [str(CLI), "run", "--lake", lake, "--config", str(config), "--now", str(NOW_MS), "--engine"]
    env = lake_at.env(work.parent / "pycache")
    measured = measure([*argv, "inline", "--json", "--report", str(report)], stdout=work / "run.out", env=env)
    result = json.loads(report.read_text())
    export = work / "export"
    shutil.rmtree(export, ignore_errors=True)
    measure(
        [str(CLI), "export", "--lake", lake, "--to", str(export), "--json"], stdout=work / "x.out", env=env
    )
    lake_at.discard(lake)
    cleaned = [p for p in result["compaction"]["partitions"] if p["status"] == "cleaned"]
    if result["outcome"] != "committed" or not cleaned:
        raise SystemExit(f"kafka-segments did not clean {log_dir}: {json.dumps(result)[:2000]}")
    phases = {name: sum(p["stats"]["times"][name] for p in cleaned) for name in ("read_s", "clean_s")}
    phases |= {name: sum(p["stats"]["times"][name] for p in cleaned) for name in ("write_s", "total_s")}
    return {
        **asdict(measured),
        **phases,
        "messages_written": result["compaction"]["totals"]["messages_written"],
        "logs": log_digests(export / PARTITION),
    }


def median(samples: list[dict[str, Any]], name: str) -> float:
    return statistics.median(sample[name] for sample in samples)


def summarize(spec: InputSpec, size: int, sides: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Medians per side, and whether every product run wrote Kafka's ``.log`` bytes."""
    kafka = sides.get("kafka", [])
    summary: dict[str, Any] = {"input": spec.label, "spec": asdict(spec), "bytes": size, "samples": sides}
    for side, samples in sides.items():
        names = [name for name in samples[0] if isinstance(samples[0][name], (int, float))]
        summary[side] = {name: median(samples, name) for name in names}
        if side != "kafka" and kafka:
            summary[side]["identical"] = all(s["logs"] == kafka[0]["logs"] for s in samples)
    return summary


def bench_input(spec: InputSpec, log_dir: Path, args: argparse.Namespace, lakes: dict[str, Lake]) -> Any:
    size = sum(p.stat().st_size for p in (log_dir / PARTITION).glob("*.log"))
    work = args.work_dir / spec.folder
    sides: dict[str, list[dict[str, Any]]] = {}
    order = (["kafka"] if args.launcher else []) + list(lakes)
    for repeat in range(args.repeats):
        for side in order if repeat % 2 == 0 else order[::-1]:
            print(f"  {spec.label}: repeat {repeat + 1}, {side}", file=sys.stderr, flush=True)
            if side == "kafka":
                sample = kafka_side(args.launcher, log_dir, work)
            else:
                sample = product_side(log_dir, work, lakes[side], serial=len(sides.get(side, [])))
            sides.setdefault(side, []).append(sample)
    return summarize(spec, size, sides)


def fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def markdown(results: list[dict[str, Any]], header: str) -> str:
    lines = [
        header,
        "",
        "| input | MB | Kafka clean s | Kafka JVM wall s | JVM CPU s | JVM peak RSS MB | product round s "
        "(read / clean / write) | product `run` wall s | run CPU s | run peak RSS MB | run / JVM wall | "
        "round / clean | `.log` bytes identical |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        k, p = r.get("kafka"), r["local"]
        round_ = f"{p['total_s']:.2f} ({p['read_s']:.2f} / {p['clean_s']:.2f} / {p['write_s']:.2f})"
        cells = [r["input"], fmt(r["bytes"] / 1e6, 0)]
        cells += [
            fmt(k and k["clean_s"]),
            fmt(k and k["wall_s"]),
            fmt(k and k["cpu_s"]),
            fmt(k and k["rss_mb"], 0),
        ]
        cells += [round_, fmt(p["wall_s"]), fmt(p["cpu_s"]), fmt(p["rss_mb"], 0)]
        cells += [
            f"{p['wall_s'] / k['wall_s']:.2f}x" if k else "—",
            f"{p['total_s'] / k['clean_s']:.2f}x" if k else "—",
        ]
        cells.append(("yes" if p["identical"] else "**no**") if k else "— (no oracle)")
        lines.append("| " + " | ".join(cells) + " |")
    if any("s3" in r for r in results):
        lines += ["", "**On moto's S3** (server in its own process; the same Kafka reference)", ""]
        lines += [
            "| input | `run` wall local s | `run` wall S3 s | S3 overhead s | round on S3 s (read / clean "
        ]
        lines[-1] += "/ write) | run peak RSS MB | `.log` bytes identical |"
        lines.append("|---|---:|---:|---:|---|---:|---|")
        for r in results:
            p, s = r["local"], r["s3"]
            round_ = f"{s['total_s']:.2f} ({s['read_s']:.2f} / {s['clean_s']:.2f} / {s['write_s']:.2f})"
            same = ("yes" if s["identical"] else "**no**") if "identical" in s else "—"
            cells = [r["input"], fmt(p["wall_s"]), fmt(s["wall_s"]), fmt(s["wall_s"] - p["wall_s"]), round_]
            lines.append("| " + " | ".join([*cells, fmt(s["rss_mb"], 0), same]) + " |")
    return "\n".join(lines)


def specs(args: argparse.Namespace) -> list[InputSpec]:
    shapes = [(size, codec) for codec in args.codecs for size in args.value_sizes]
    genlog = (
        [InputSpec(args.records, size, codec, "genlog") for size, codec in shapes] if args.launcher else []
    )
    clients = [InputSpec(args.records, args.kafka_python[0], args.kafka_python[1], "kafka-python")]
    if args.transactional:
        clients.append(InputSpec(args.records, *args.transactional, "transactional"))
    return [*genlog, *clients]


def warm_up(args: argparse.Namespace, lakes: dict[str, Lake]) -> None:
    """One untimed product run per codec on a tiny input: numba's cache loaded (or compiled) once."""
    for codec in sorted({*args.codecs, args.kafka_python[1], *args.transactional[1:]}):
        tiny = InputSpec(2_000, 100, codec, "kafka-python")
        log_dir = input_dir(tiny, args.data_dir, launcher=None, cwd=ROOT)
        start = time.perf_counter()
        product_side(log_dir, args.work_dir / "warm-up", lakes["local"], serial=0)
        print(f"warm-up ({codec}): {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--value-sizes", type=lambda s: [int(v) for v in s.split(",")], default=[100, 1024])
    parser.add_argument("--codecs", type=lambda s: s.split(","), default=["none", "lz4", "zstd"])
    parser.add_argument("--kafka-python", type=lambda s: (int(s.split(",")[0]), s.split(",")[1]))
    parser.add_argument(
        "--transactional",
        type=lambda s: (int(s.split(",")[0]), s.split(",")[1]),
        default=(),
        metavar="VALUE_BYTES,CODEC",
        help="also a log of one transactional producer in Kafka's framing (our writer), e.g. 1024,lz4",
    )
    parser.add_argument("--s3", action="store_true", help="also run the product on moto's S3")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="where the inputs are kept")
    parser.add_argument("--work-dir", type=Path, help="where the copies go (default: DATA_DIR/work)")
    parser.add_argument("--json", type=Path, default=DATA_DIR / "vs_kafka_cleaner.json")
    parser.add_argument("--quick", action="store_true", help="2,000 records, 100 B none, 1 repeat")
    args = parser.parse_args(argv)
    if args.quick:
        args.records, args.repeats, args.value_sizes, args.codecs = 2_000, 1, [100], ["none"]
    args.kafka_python = args.kafka_python or (100, "lz4")
    args.work_dir = args.work_dir or args.data_dir / "work"
    launcher = os.environ.get(ORACLE_ENV, "")
    args.launcher = launcher if launcher and os.access(launcher, os.X_OK) else None
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.launcher is None:
        print(
            f"{ORACLE_ENV} is not set: Kafka's cleaner is not run; the product alone, on kafka-python's input"
        )
    load_before = os.getloadavg()
    started = dt.datetime.now(dt.UTC)
    lakes = {"local": Lake()}
    with moto_lake(args.s3) as endpoint:
        if endpoint is not None:
            lakes["s3"] = Lake(endpoint)
        warm_up(args, lakes)
        results: list[dict[str, Any]] = []
        for spec in specs(args):
            log_dir = input_dir(spec, args.data_dir, launcher=args.launcher, cwd=ROOT)
            results.append(bench_input(spec, log_dir, args, lakes))
            table = write_report(args, results, started=started, load_before=load_before)
    print(table)
    return 0 if all(r["local"].get("identical", True) for r in results) else 1


def write_report(
    args: argparse.Namespace, results: list[dict[str, Any]], *, started: dt.datetime, load_before: Any
) -> str:
    """The JSON report and the table so far (rewritten after each input: a stopped run keeps them)."""
    load = f"load average {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after"
    header = (
        f"**kafka-segments `run` vs Kafka's cleaner** ({args.records:,} records, median of {args.repeats}; "
    )
    table = markdown(results, header + f"{started:%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, {load})")
    report = {"date": started.isoformat(), "load_before": load_before, "load_after": os.getloadavg()}
    report |= {
        "records": args.records,
        "repeats": args.repeats,
        "oracle": bool(args.launcher),
        "results": results,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1))
    args.json.with_suffix(".md").write_text(table + "\n")
    return table


def moto_lake(enabled: bool) -> Any:
    """moto's server in its own process with the bench's bucket (``compaction_bench.moto_process``)."""
    from contextlib import contextmanager, nullcontext

    if not enabled:
        return nullcontext(None)
    from compaction_bench import moto_process
    from kafka_segments.demo import EMBEDDED_CREDENTIALS

    os.environ.setdefault("AWS_ACCESS_KEY_ID", EMBEDDED_CREDENTIALS["aws_access_key_id"])
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", EMBEDDED_CREDENTIALS["aws_secret_access_key"])

    cpus = os.sched_getaffinity(0)

    @contextmanager
    def started() -> Any:
        with moto_process() as endpoint:
            os.sched_setaffinity(0, cpus)  # moto stays on its core; both sides may use every core
            Lake(endpoint).client().create_bucket(Bucket=BUCKET)
            yield endpoint

    return started()


if __name__ == "__main__":
    raise SystemExit(main())
