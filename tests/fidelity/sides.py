"""The one harness of every comparison with Kafka's own code: its two sides, each on its own copy of the same
input. Kafka's side is the launcher named by ``KAFKA_ORACLE`` (``oracle genlog`` / ``clean`` / ``dump``:
Kafka's ``UnifiedLog``, ``LogCleanerManager`` and ``Cleaner``); the product's is its command line, in process
(``kafka-segments adopt``, ``run``, ``export``: what a user runs, without a Python start and a kernel
compilation per call). Tests that need the oracle are marked ``needs_oracle`` and skip without it.

Used by the differential suite (``fidelity.driver``, round after round) and, through ``side_by_side`` (one
round on a copied log directory) or the calls below, by ``tests/interop`` and ``tests/e2e``. Kafka's segments
are taken from ``oracle clean``'s own output (the listing ``oracle dump`` gives), and the product's export is
decoded by ``oracle dump`` only when its bytes differ from Kafka's (``export_listing``): a round on which both
sides agree starts one JVM.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kafka_segments.checkpoint import read_offset_checkpoint
from kafka_segments.cli.main import main as kafka_segments
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.storage import LocalStore
from kafka_segments.topic_partition import TopicPartition

from fidelity.generator import T0, Case, Round

TOPIC = "t"
TP = TopicPartition(TOPIC, 0)
PARTITION = TP.dir_name
ORACLE_ENV = "KAFKA_ORACLE"
CHECKPOINT_FILES = ("cleaner-offset-checkpoint", "log-start-offset-checkpoint")
ORACLE_TIMEOUT_S = 900
DAY = 86_400_000


class SideError(RuntimeError):
    """One side failed to run (the command, its exit status and what it printed)."""


def oracle_launcher() -> str | None:
    """The launcher named by ``KAFKA_ORACLE`` when it is an executable file."""
    launcher = os.environ.get(ORACLE_ENV, "")
    return launcher if launcher and os.access(launcher, os.X_OK) else None


needs_oracle = pytest.mark.skipif(
    oracle_launcher() is None,
    reason=f"set {ORACLE_ENV} to the kafka-oracle launcher (Kafka's own cleaner) to compare with it",
)


def require_launcher() -> str:
    """The launcher, in a test marked ``needs_oracle``."""
    launcher = oracle_launcher()
    if launcher is None:
        raise SideError(f"{ORACLE_ENV} does not name an executable kafka-oracle launcher")
    return launcher


# --- inputs -------------------------------------------------------------------------------------------------


def checkpoint_text(offset: int) -> str:
    """Kafka's checkpoint file format (``CheckpointFile``): version 0, one entry."""
    return f"0\n1\n{TOPIC} 0 {offset}\n"


def write_start(case: Case, log_dir: Path) -> None:
    """The log directory's checkpoint files, as a copied broker log dir would have them."""
    log_dir.mkdir(parents=True, exist_ok=True)
    if case.log_start_offset is not None:
        (log_dir / "log-start-offset-checkpoint").write_text(checkpoint_text(case.log_start_offset))
    if case.cleaner_checkpoint is not None:
        (log_dir / "cleaner-offset-checkpoint").write_text(checkpoint_text(case.cleaner_checkpoint))


def write_round(round_: Round, partition_dir: Path) -> None:
    """The round's new segments into ``partition_dir`` with the round's mtime. An empty segment file of the
    same name (the active segment Kafka rolls when retention deleted every segment) is replaced."""
    partition_dir.mkdir(parents=True, exist_ok=True)
    for base, data in round_.segments:
        path = partition_dir / f"{base:020d}.log"
        if path.exists() and path.stat().st_size:
            raise SideError(f"{path} already holds data")
        path.write_bytes(data)
        os.utime(path, (round_.mtime_s, round_.mtime_s))


def write_log_dir(
    root: Path, segments: Iterable[tuple[int, Iterable[bytes]]], *, cleaner_checkpoint: int | None = None
) -> Path:
    """``root/t-0/<base>.log`` for every (base offset, batches) of ``segments`` (a ``LogBuilder``'s
    ``chunks``), ``root/cleaner-offset-checkpoint`` when given, every file at ``T0``."""
    partition = root / PARTITION
    partition.mkdir(parents=True)
    for base, batches in segments:
        (partition / f"{base:020d}.log").write_bytes(b"".join(batches))
    if cleaner_checkpoint is not None:
        (root / "cleaner-offset-checkpoint").write_text(checkpoint_text(cleaner_checkpoint))
    set_mtimes(root, T0 // 1000)
    return root


def set_mtimes(root: Path, mtime_s: int) -> None:
    """Every file under ``root`` at ``mtime_s`` (Kafka reads segment mtimes: both sides must see the same)."""
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (mtime_s, mtime_s))


def config_yaml(props: Mapping[str, str], *, dedupe_buffer_size: int | None = None) -> str:
    """The product's configuration for topic ``t`` with Kafka's topic ``props`` (small segments through
    ``internal.segment.bytes``, as Kafka 4.1 asks for them) and, when given, the broker's dedupe buffer."""
    lines = (
        []
        if dedupe_buffer_size is None
        else ["broker:", f"  log.cleaner.dedupe.buffer.size: {dedupe_buffer_size}"]
    )
    lines += ["topics:", f"  {TOPIC}:"]
    for name, value in props.items():
        key = "internal.segment.bytes" if name == "segment.bytes" else name
        lines.append(f"    {key}: {json.dumps(value) if name == 'cleanup.policy' else value}")
    return "\n".join(lines) + "\n"


# --- Kafka's side -------------------------------------------------------------------------------------------


def _pyspark_jars() -> dict[str, str]:
    """``PYSPARK_JARS`` for the launcher (it finds its codecs there), unless already set: then the launcher
    runs from any directory."""
    if os.environ.get("PYSPARK_JARS"):
        return {}
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise SideError("pyspark is not installed: the oracle takes its codecs from pyspark's jars")
    return {"PYSPARK_JARS": str(Path(spec.origin).parent / "jars")}


ORACLE_JAVA_OPTS = "-Xmx2g -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""The JVM options of the launcher's calls unless ``ORACLE_JAVA_OPTS`` is set: its default heap, the C1
compiler only and the serial collector (one short run on small logs: about 12% less CPU per call than the
JVM's default tiered compilation and G1 threads, on the 90,000-record case too)."""


def oracle_call(launcher: str, *args: str) -> str:
    """One call of the launcher; its stdout."""
    env = {"ORACLE_JAVA_OPTS": ORACLE_JAVA_OPTS, **os.environ, **_pyspark_jars()}
    done = subprocess.run(
        [launcher, *args], capture_output=True, text=True, check=False, env=env, timeout=ORACLE_TIMEOUT_S
    )
    if done.returncode != 0:
        raise SideError(f"{launcher} {' '.join(args)} exited {done.returncode}: {done.stderr[-3000:]}")
    return done.stdout


def oracle_genlog(
    launcher: str,
    partition_dir: Path,
    *,
    records: int,
    value_bytes: int,
    codec: str,
    keys: int,
    segment_bytes: int,
    t0: int,
) -> None:
    """``oracle genlog``: ``records`` records over ``keys`` keys written by Kafka's own builder (the last
    record alone in the active segment); the files get the current time as mtime."""
    numbers = (records, value_bytes, codec, keys, segment_bytes, t0)
    oracle_call(launcher, "genlog", str(partition_dir), *(str(n) for n in numbers))


def oracle_clean(
    launcher: str,
    log_dir: Path,
    now: int,
    *,
    props: Mapping[str, str],
    dedupe_buffer_size: int | None = None,
    records: bool = True,
) -> dict[str, Any]:
    """One ``oracle clean`` of partition ``t-0`` of ``log_dir`` (modified in place) at ``now``; its document
    (``segments`` lists the records too unless ``records`` is false)."""
    args = ["clean", "--log-dir", str(log_dir), "--partition", PARTITION, "--now", str(now)]
    args += [arg for name, value in props.items() for arg in ("--prop", f"{name}={value}")]
    if dedupe_buffer_size is not None:
        args += ["--dedupe-buffer-size", str(dedupe_buffer_size)]
    if not records:
        args.append("--no-records")
    result: dict[str, Any] = json.loads(oracle_call(launcher, *args))
    return result


def oracle_dump(launcher: str, log_dir: Path) -> list[dict[str, Any]]:
    """Every segment of ``log_dir``'s partition decoded by Kafka's ``FileRecords``."""
    segments: list[dict[str, Any]] = json.loads(
        oracle_call(launcher, "dump", "--log-dir", str(log_dir), "--partition", PARTITION)
    )["segments"]
    return segments


def export_listing(launcher: str, log_dir: Path, kafka: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The segments of ``log_dir`` (an export) as ``oracle dump`` lists them, without their file times.

    ``kafka`` is Kafka's listing with records (``oracle clean``'s ``segments``). When every ``.log`` of
    ``log_dir`` has the name and the sha256 of Kafka's in the same order, ``oracle dump`` would decode the
    same bytes with the same ``FileRecords``: Kafka's listing is the dump, and no JVM starts. Otherwise
    (any difference: a comparison then needs the export's own decoding) ``oracle dump`` decodes it."""
    files = sorted((log_dir / PARTITION).glob("*.log"))
    ours = [(path.name, hashlib.sha256(path.read_bytes()).hexdigest()) for path in files]
    if ours == [(segment["file"], segment["sha256"]) for segment in kafka]:
        return without_mtimes(kafka)
    return without_mtimes(oracle_dump(launcher, log_dir))


def without_mtimes(segments: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Segments as ``oracle dump`` lists them, without their file times (an export writes its files now)."""
    return [{key: value for key, value in segment.items() if key != "mtime"} for segment in segments]


def kafka_txn_indexes(log_dir: Path, bases: Iterable[int]) -> dict[int, bytes]:
    """Base offset → ``.txnindex`` bytes (empty when there is none) of Kafka's segments at ``bases``."""
    return {base: _read_or_empty(log_dir / PARTITION / f"{base:020d}.txnindex") for base in bases}


# --- the product's side -------------------------------------------------------------------------------------


def _cli(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = kafka_segments(list(argv))
    if status != 0:
        said = (out.getvalue() + err.getvalue())[-3000:]
        raise SideError(f"kafka-segments {' '.join(argv)} exited {status}: {said}")
    return out.getvalue()


def product_adopt(lake: Path, now: int) -> None:
    _cli("adopt", "--lake", str(lake), "--now", str(now), "--json")


def product_run(lake: Path, config: Path, now: int, report: Path) -> dict[str, Any]:
    """``kafka-segments run`` at ``now``; the JSON report."""
    _cli(
        "run",
        "--lake",
        str(lake),
        "--config",
        str(config),
        "--now",
        str(now),
        "--json",
        "--report",
        str(report),
    )
    result: dict[str, Any] = json.loads(report.read_text())
    return result


def product_export(lake: Path, target: Path) -> None:
    _cli("export", "--lake", str(lake), "--to", str(target), "--json")


def product_txn_indexes(lake: Path, run_id: str) -> dict[int, bytes]:
    """Base offset → ``.txnindex`` bytes (empty when there is none) of every committed segment the run
    wrote (``<base>-<run id>.log``). Kafka's segments cleaned in an earlier round have their index rebuilt
    by recovery when the oracle loads the log again, so only this round's are compared."""
    state = resolve_manifest(LocalStore(lake)).partition(TP)
    written = [] if state is None else [s for s in state.segments if Path(s.key).stem.endswith(f"-{run_id}")]
    return {s.base_offset: _read_or_empty(lake / Path(s.key).with_suffix(".txnindex")) for s in written}


def _read_or_empty(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


def product_mtimes(lake: Path) -> dict[int, int]:
    """Base offset → last-modified ms of every committed segment (the mtime the lake keeps for it)."""
    state = resolve_manifest(LocalStore(lake)).partition(TP)
    return {} if state is None else {s.base_offset: s.last_modified_ms for s in state.segments}


# --- one round on a copied log directory --------------------------------------------------------------------


@dataclass(frozen=True)
class SideBySide:
    """What Kafka's cleaner and a run did to the same log directory."""

    kafka: dict[str, Any]
    """``oracle clean``'s document: ``stats``, ``end_offset``, ``checkpoint_after``, ``after`` ..."""
    run: dict[str, Any]
    """The run's JSON report."""
    kafka_segments: list[dict[str, Any]]
    exported_segments: list[dict[str, Any]]
    """Both sides' segments as ``oracle dump`` lists them, without their file times."""
    kafka_cleaner_checkpoint: dict[TopicPartition, int]
    exported_cleaner_checkpoint: dict[TopicPartition, int]

    @property
    def compaction(self) -> dict[str, Any]:
        """The run's report of partition ``t-0``'s compaction."""
        (partition,) = self.run["compaction"]["partitions"]
        found: dict[str, Any] = partition
        return found


def side_by_side(log_dir: Path, work: Path, *, now: int, props: Mapping[str, str]) -> SideBySide:
    """Clean a copy of ``log_dir`` (checkpoint files beside ``t-0/``) with Kafka's cleaner and another with
    ``adopt`` + ``run`` at ``now`` on a lake in a local directory, topic ``t`` configured with Kafka's
    ``props`` on both sides; then export the lake and decode it."""
    launcher = require_launcher()
    kafka_dir, lake, exported = work / "kafka", work / "lake", work / "exported"
    shutil.copytree(log_dir, kafka_dir)
    shutil.copytree(log_dir, lake)
    kafka = oracle_clean(launcher, kafka_dir, now, props=props)
    config = work / "config.yaml"
    config.write_text(config_yaml(props))
    product_adopt(lake, now)
    report = product_run(lake, config, now, work / "report.json")
    product_export(lake, exported)
    return SideBySide(
        kafka=kafka,
        run=report,
        kafka_segments=without_mtimes(kafka["segments"]),
        exported_segments=export_listing(launcher, exported, kafka["segments"]),
        kafka_cleaner_checkpoint=read_offset_checkpoint(kafka_dir / "cleaner-offset-checkpoint"),
        exported_cleaner_checkpoint=read_offset_checkpoint(exported / "cleaner-offset-checkpoint"),
    )
