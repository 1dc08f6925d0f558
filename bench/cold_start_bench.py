"""Cold start: how long a fresh Python process takes to reach its first kernel call, and to have called
every kernel of a run — issue 22, point 3.

Each sample is a fresh process; times are from its spawn: the imports, the first kernel call
(``scan_header_table`` of one batch) and a whole tiny run (``cli.warm``: ``run`` and ``export`` over every
codec), plus the process's CPU time (``os.wait4``) and how many kernels numba compiled in it (its
dispatchers' cache misses: 0 means every kernel was loaded). The rows:

* **installed**: the package as installed (the source tree this bench imports), its kernels cached beside
  the sources, as ``scripts/setup`` leaves them (one untimed process first fills that cache if it is not);
* **archive, empty cache**: the package from the Spark job's library archive without kernels
  (``spark_submit.library_archive`` on an empty cache) and an empty ``$KAFKA_SEGMENTS_CACHE_DIR``: every
  kernel is compiled (what each Python worker of a new executor paid before archives carried kernels);
* **archive, warm cache**: the same archive with the cache the previous row filled (a Spark worker on a
  host where ``cli.warm --archive`` ran);
* **archive with kernels, empty cache**: the archive the job ships now (built again after the previous
  rows compiled its kernels, so it carries them), copied to a fresh folder and imported with a fresh, empty
  ``$KAFKA_SEGMENTS_CACHE_DIR`` for every sample: a new executor's Python worker.

The children keep a bytecode cache (``PYTHONPYCACHEPREFIX``, filled by the first process) as a user's Python
does; the package itself, imported from a zip, is compiled from source in every archive row (``zipimport``
reads no bytecode cache). Rows take turns, so each repeat measures them back to back.

    .venv/bin/python bench/cold_start_bench.py                 # 3 repeats of each warm row
    .venv/bin/python bench/cold_start_bench.py --repeats 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import kafka_segments
from kafka_segments.pipeline.engines.spark_submit import library_archive
from kafka_segments.user_cache import CACHE_DIR_ENV

CHILD = """
import json, sys, tempfile, time
from pathlib import Path
start = time.time()
import numpy as np
from kafka_segments.records.fast import scan_header_table
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
imported = time.time()
scan_header_table(build_batch([Record(0, 0, b"k", b"v")]))
first = time.time()

def compiled():
    from numba.core.registry import CPUDispatcher
    kernels = {id(v): v for name, module in list(sys.modules.items()) if name.endswith("_kernels")
               and name.startswith("kafka_segments.records.fast.") for v in vars(module).values()
               if isinstance(v, CPUDispatcher)}
    return sum(sum(k.stats.cache_misses.values()) for k in kernels.values())

compiled_first = compiled()
from kafka_segments.cli.warm import warm
with tempfile.TemporaryDirectory() as work:
    warm(Path(work))
done = time.time()
import kafka_segments
print(json.dumps({"start": start, "imported": imported, "first_kernel": first, "run": done,
                  "compiled_first": compiled_first, "compiled_run": compiled(),
                  "package": kafka_segments.__file__}))
"""
TIMES = ("imported", "first_kernel", "run")
ROWS = ("installed", "archive, empty cache", "archive, warm cache", "archive with kernels, empty cache")


def sample(env: dict[str, str], *, from_archive: Path | None) -> dict[str, Any]:
    """One fresh process: its times from the spawn, its CPU seconds, the kernels it compiled."""
    with tempfile.TemporaryFile("w+") as out:
        spawned = time.time()
        child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        output = out.read()
    if child.returncode != 0:
        raise SystemExit(f"the child failed: {output[-3000:]}")
    times = json.loads(output.splitlines()[-1])
    where = str(from_archive if from_archive is not None else Path(kafka_segments.__file__).parent)
    if where not in times["package"]:
        raise SystemExit(f"the child imported {times['package']}, not {where}")
    return {
        **{name: times[name] - spawned for name in TIMES},
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "compiled_first": times["compiled_first"],
        "compiled_run": times["compiled_run"],
    }


def child_env(work: Path, *, archive: Path | None, cache: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", CACHE_DIR_ENV)}
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    if archive is not None:  # first on the path: the package comes from the archive (``sample`` checks it)
        env["PYTHONPATH"] = os.pathsep.join([str(archive), os.environ.get("PYTHONPATH", "")])
    if cache is not None:
        env[CACHE_DIR_ENV] = str(cache)
    return env


def measure(work: Path, repeats: int) -> dict[str, list[dict[str, Any]]]:
    driver_cache = work / "driver-cache"  # the archive rows' "install": the user's cache of the driver's host
    os.environ[CACHE_DIR_ENV] = str(driver_cache)  # where library_archive looks for the archive's kernels
    plain = library_archive(cache_dir=work / "spark")
    samples: dict[str, list[dict[str, Any]]] = {row: [] for row in ROWS}
    sample(child_env(work, archive=None, cache=None), from_archive=None)  # bytecode, installed kernels
    samples[ROWS[1]].append(sample(child_env(work, archive=plain, cache=driver_cache), from_archive=plain))
    shipped = library_archive(cache_dir=work / "spark")
    if shipped == plain:
        raise SystemExit("the archive carries no kernels after a run compiled them")
    for repeat in range(repeats):
        executor = work / f"executor-{repeat}"  # a fresh copy and a fresh, empty cache, as a new executor
        executor.mkdir()
        copy = Path(shutil.copy(shipped, executor))
        runs = {
            ROWS[0]: (child_env(work, archive=None, cache=None), None),
            ROWS[2]: (child_env(work, archive=plain, cache=driver_cache), plain),
            ROWS[3]: (child_env(work, archive=copy, cache=executor / "cache"), copy),
        }
        for row, (env, archive) in runs.items():
            samples[row].append(sample(env, from_archive=archive))
    return samples


def table(samples: dict[str, list[dict[str, Any]]], load: tuple[float, float]) -> str:
    medians = {
        row: {k: statistics.median(s[k] for s in runs) for k in runs[0]} for row, runs in samples.items()
    }
    lines = [
        f"**Cold start** (fresh processes; load average {load[0]:.2f} before, {load[1]:.2f} after; "
        f"medians of {len(samples[ROWS[0]])}, the empty-cache archive row: one sample)",
        "",
        "| package from | imports s | first kernel call s | whole tiny run s | CPU s | kernels compiled: "
        "first call / run |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row, m in medians.items():
        lines.append(
            f"| {row} | {m['imported']:.2f} | {m['first_kernel']:.2f} | {m['run']:.2f} | {m['cpu_s']:.2f} "
            f"| {m['compiled_first']:.0f} / {m['compiled_run']:.0f} |"
        )
    base, shipped = medians[ROWS[0]], medians[ROWS[3]]
    extra = {k: shipped[k] - base[k] for k in ("first_kernel", "run", "cpu_s")}
    lines += [
        "",
        f"archive with kernels, empty cache - installed: first kernel call {extra['first_kernel']:+.2f} s, "
        f"whole run {extra['run']:+.2f} s, CPU {extra['cpu_s']:+.2f} s",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3, help="samples of each warm row")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    before = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="cold-start-"))
    try:
        samples = measure(work, args.repeats)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(table(samples, (before, os.getloadavg()[0])))
    if args.json:
        args.json.write_text(json.dumps({"samples": samples, "load_average": before}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
