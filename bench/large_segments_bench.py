"""Large segments (issue 33 target): a nothing-due ``run`` on a local lake of 10 GB against the same run on
a 1 GB lake, both of 256 MiB segments.

Builds two local lakes of one topic under ``--work-dir`` (default: a temporary directory under ``/tmp``:
the disk, not memory): P partitions x 2 segments of ``--segment-mib`` MiB each (the ``.log``, ``.index`` and
``.timeindex`` the project's own writer makes; records of 1 MiB values in batches of 16, a day before
``now``, so nothing is due under a 7-day retention). Each partition gets the same bytes (the two segment
files are built once and copied). Then, on each lake, one fresh process per step through
``bench/counted_cli.py`` (``scale_metadata.measure``):

* **adopt** — the bootstrap: reads every byte once (and records the files' etags, ``storage.local_etags``);
* **upgrade** — to manifest format 2 (then ``gc`` keeping one version);
* **run, nothing due** — ``--repeats`` times, each a fresh process with a later ``--now``.

A local lake's etag is the file's sha256; the persisted stat -> sha256 record lets a later process skip the
hashing while the file's stat is unchanged. A record is persisted only for a file older than
``local_etags.RACY_MARGIN_MS`` when it was hashed, so the bench waits that long after writing. Per step:
wall, CPU, peak RSS and the MB hashed. The target: the 10 GB lake's nothing-due run within 1 s of the 1 GB
lake's.

Usage::

    .venv/bin/python bench/large_segments_bench.py                       # 1 GB and 10 GB, 3 runs each
    .venv/bin/python bench/large_segments_bench.py --sizes-gib 1,2 --repeats 1 --segment-mib 64  # quick
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import scale_metadata
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import write_segment

MIB = 1 << 20
VALUE_BYTES = MIB
RECORDS_PER_BATCH = 16
SEGMENTS_PER_PARTITION = 2


def write_template(folder: Path, segment_mib: int) -> None:
    """The two segments of a partition (base offsets 0 and ``segment_mib``) into ``folder``."""
    value = b"v" * VALUE_BYTES
    for index in range(SEGMENTS_PER_PARTITION):
        base = index * segment_mib
        batches = []
        for first in range(base, base + segment_mib, RECORDS_PER_BATCH):
            ts = scale_metadata.START_MS + first
            records = [
                Record(first + i, ts, f"k{first + i}".encode(), value) for i in range(RECORDS_PER_BATCH)
            ]
            batches.append(build_batch(records))
        for name, data in write_segment(batches, base_offset=base).files().items():
            (folder / name).write_bytes(data)


def build_lake(root: Path, template: Path, partitions: int) -> None:
    """``partitions`` partition folders, each a copy of ``template``'s files."""
    for partition in range(partitions):
        folder = root / f"{scale_metadata.TOPIC}-{partition}"
        folder.mkdir(parents=True)
        for source in template.iterdir():
            shutil.copyfile(source, folder / source.name)


def measure_lake(lake: scale_metadata.LocalLake, work: Path, *, repeats: int) -> dict[str, Any]:
    config = work / "config.yaml"
    config.write_text(scale_metadata.CONFIG, encoding="utf-8")
    uri = ["--lake", lake.uri]
    steps: dict[str, Any] = {}
    now = scale_metadata.NOW_MS
    steps["adopt"] = vars(scale_metadata.measure(lake, ["adopt", *uri, "--now", str(now)], count=True))
    steps["upgrade"] = vars(scale_metadata.measure(lake, ["upgrade", *uri], count=True))
    scale_metadata.measure(lake, ["gc", *uri, "--execute", "--retain-manifests", "1"], count=False)
    runs = []
    for repeat in range(repeats):
        now += scale_metadata.MINUTE_MS
        run = ["run", *uri, "--config", str(config), "--engine", "inline", "--now", str(now)]
        runs.append(vars(scale_metadata.measure(lake, run, count=True)))
        steps[f"run, nothing due #{repeat + 1}"] = runs[-1]
    return {
        "steps": steps,
        "run_median_seconds": statistics.median(r["seconds"] for r in runs),
        "run_median_cpu_seconds": statistics.median(r["cpu_seconds"] for r in runs),
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        f"**Large segments** (local lake on {result['work_dir']}, {result['segment_mib']} MiB segments, "
        f"{SEGMENTS_PER_PARTITION} a partition; one fresh process per step; MB = 10^6 bytes)",
        "",
        "| lake | step | wall s | CPU s | peak RSS MB | MB read | MB hashed (local etags) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for lake in result["lakes"]:
        label = f"{lake['gib']} GiB ({lake['partitions']} × {SEGMENTS_PER_PARTITION} segments)"
        for name, step in lake["steps"].items():
            counts = step["counts"]
            read = sum(counts.get("bytes_read", {}).values()) / 1e6
            hashed = counts.get("local_hashed", {}).get("bytes", 0) / 1e6
            lines.append(
                f"| {label} | {name} | {step['seconds']:.2f} | {step['cpu_seconds']:.2f} | "
                f"{step['max_rss_mb']:.0f} | {read:,.1f} | {hashed:,.1f} |"
            )
            label = ""
    small, large = result["lakes"][0], result["lakes"][-1]
    gap = large["run_median_seconds"] - small["run_median_seconds"]
    lines.append("")
    lines.append(
        f"Nothing-due run, median wall: {small['run_median_seconds']:.2f} s ({small['gib']} GiB) against "
        f"{large['run_median_seconds']:.2f} s ({large['gib']} GiB): {gap:+.2f} s (target: within 1 s)."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes-gib", default="1,10", help="lake sizes in GiB, comma-separated")
    parser.add_argument("--segment-mib", type=int, default=256, help="segment size (MiB, a multiple of 16)")
    parser.add_argument("--repeats", type=int, default=3, help="nothing-due runs per lake (median)")
    parser.add_argument("--work-dir", default="/tmp", help="where to build the lakes (default: /tmp, disk)")
    parser.add_argument("--json", help="write the results as JSON to this file")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes_gib.split(",")]
    with tempfile.TemporaryDirectory(prefix="large-segments-", dir=args.work_dir) as work_dir:
        work = Path(work_dir)
        template = work / "template"
        template.mkdir()
        builder = multiprocessing.get_context("fork").Process(
            target=write_template, args=(template, args.segment_mib)
        )
        builder.start()  # in a child: the segments' bytes never swell this process
        builder.join()
        if builder.exitcode != 0:
            raise SystemExit(f"building the segments failed (exit {builder.exitcode})")
        lakes = []
        for gib in sizes:
            partitions = max(1, gib * 1024 // (args.segment_mib * SEGMENTS_PER_PARTITION))
            root = work / f"lake-{gib}g"
            build_lake(root, template, partitions)
            lakes.append((gib, partitions, scale_metadata.LocalLake(root, {})))
        time.sleep(scale_metadata_racy_margin_s() + 1)  # so that the first process can persist the etags
        measured = []
        for gib, partitions, lake in lakes:
            row = {"gib": gib, "partitions": partitions, **measure_lake(lake, work, repeats=args.repeats)}
            measured.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)  # progress: the lake just measured
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "work_dir": args.work_dir,
        "segment_mib": args.segment_mib,
        "lakes": measured,
        "machine": {"nproc": os.cpu_count(), "load_average": os.getloadavg()},
    }
    print(table(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


def scale_metadata_racy_margin_s() -> float:
    from kafka_segments.storage.local_etags import RACY_MARGIN_MS

    return RACY_MARGIN_MS / 1000


if __name__ == "__main__":
    sys.exit(main())
