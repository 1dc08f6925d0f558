"""``kafka-segments run --engine spark`` on a Spark standalone cluster as users run one: a master and two
workers, each a process of its own started with the pyspark wheel's ``bin/spark-class`` on loopback (one
core and 1 GiB each, their own work folders), the lake on S3 (moto over HTTP), the job submitted by the
command a user runs (``--spark-master spark://…``) in client mode with the library shipped as the job's
archive (``--py-files``). The job's cluster settings are the launcher's ``spark-defaults.conf``
(``$SPARK_CONF_DIR``), as a user's: it takes both workers' cores and waits for both executors before its
first task. Neither the daemons' environment nor the job's ``conf`` has an AWS setting: the driver hands its
settings to the executors with each task.

The run (compaction and retention on ``run_lake``'s lake, two partitions quarantined) reports what
``--engine inline`` reports on an identical copy of the lake and commits the same manifest; each worker ran
an executor of the job that fetched the library archive and ran tasks."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_harness import cli, cli_in_process
from kafka_segments.demo import EmbeddedS3
from kafka_segments.lake.codec import manifest_to_json
from kafka_segments.lake.reader import resolve_manifest
from kafka_segments.pipeline.engines.library_archive import library_archive
from kafka_segments.pipeline.engines.spark_submit import RETENTION_JOB_NAME
from kafka_segments.storage import S3Store
from kafka_segments.user_cache import CACHE_DIR_ENV
from kit import T0, stop_process
from run_lake import LAKE_CONFIG, fill, write_offsets
from s3_fixtures import BUCKET, new_s3_store
from spark_helpers import PANDAS_WARNING, normalized, s3_environ
from spark_startup import QUICK_JVM_OPTIONS

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings(PANDAS_WARNING)]

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
WORKERS = 2
JOB_DEFAULTS = f"""\
spark.cores.max {WORKERS}
spark.scheduler.minRegisteredResourcesRatio 1.0
spark.executor.extraJavaOptions {QUICK_JVM_OPTIONS}
"""
"""The launcher's ``spark-defaults.conf``: every worker's core, no task before every executor is there (a
first executor would otherwise take every task of a small job), the quick JVM for the executors."""
START_SECONDS = 120
STAGED_ONLY = ("engine", "labels", "report_key", "validation")
"""What only the staged pipeline's report has: its engine and labels, where it wrote the report in the run's
folder, and the validation stage's result."""


@dataclass(frozen=True, slots=True)
class Cluster:
    """A running standalone cluster: its master URL and web UI port, each worker's work folder, and the
    ``$SPARK_CONF_DIR`` of the jobs' launcher."""

    master: str
    master_ui: int
    work_dirs: tuple[Path, ...]
    conf_dir: Path


def free_ports(count: int) -> list[int]:
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


def daemon_env(cache_dir: Path) -> dict[str, str]:
    """The daemons' environment: loopback, no AWS, PySpark or Spark configuration settings (executors must
    get them from the job), the tests' library cache (``CACHE_DIR_ENV``), the quick JVM
    (``spark_startup``)."""
    import pyspark

    dropped = ("AWS_", "PYSPARK_", "SPARK_CONF_DIR")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(
        SPARK_HOME=str(Path(pyspark.__file__).parent),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_DAEMON_JAVA_OPTS=QUICK_JVM_OPTIONS,
    )
    env[CACHE_DIR_ENV] = str(cache_dir)
    return env


def spark_class(env: dict[str, str], cls: str, args: list[str], log: Path) -> subprocess.Popen[bytes]:
    """``bin/spark-class CLS ARGS`` (it execs the JVM: the process is the daemon), its output in ``log``."""
    script = Path(env["SPARK_HOME"]) / "bin" / "spark-class"
    with log.open("wb") as out:
        return subprocess.Popen([str(script), cls, *args], env=env, stdout=out, stderr=subprocess.STDOUT)


def master_state(master_ui: int) -> dict[str, Any]:
    """The master's status document (its web UI's ``/json/``); empty while it does not answer."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{master_ui}/json/", timeout=2) as response:
            state: dict[str, Any] = json.load(response)
    except OSError:
        return {}
    return state


def wait_for_workers(master_ui: int, processes: list[subprocess.Popen[bytes]], logs: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while master_state(master_ui).get("aliveworkers", 0) < WORKERS:
        if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
            tails = "\n".join(f"{p.name}: {p.read_text()[-2000:]}" for p in sorted(logs.glob("*.log")))
            pytest.fail(f"the standalone cluster did not start {WORKERS} workers:\n{tails}")
        time.sleep(0.5)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, archive_cache_dir: Path) -> Iterator[Cluster]:
    """A master and ``WORKERS`` workers (one core, 1 GiB each) on loopback, once every worker is ALIVE."""
    folder = tmp_path_factory.mktemp("standalone")
    env = daemon_env(archive_cache_dir)
    port, master_ui, *worker_ports = free_ports(2 + 2 * WORKERS)
    master = f"spark://127.0.0.1:{port}"
    conf_dir = folder / "conf"
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text(JOB_DEFAULTS)
    args = ["--host", "127.0.0.1", "--port", str(port), "--webui-port", str(master_ui)]
    processes = [spark_class(env, MASTER, args, folder / "master.log")]
    try:
        work_dirs = []
        for index in range(WORKERS):
            work_dir = folder / f"worker-{index}"
            own_port, own_ui = worker_ports[2 * index : 2 * index + 2]
            args = ["--host", "127.0.0.1", "--port", str(own_port), "--webui-port", str(own_ui)]
            args += ["--cores", "1", "--memory", "1g", "--work-dir", str(work_dir), master]
            processes.append(spark_class(env, WORKER, args, folder / f"worker-{index}.log"))
            work_dirs.append(work_dir)
        wait_for_workers(master_ui, processes, folder)
        yield Cluster(master, master_ui, tuple(work_dirs), conf_dir)
    finally:
        for process in reversed(processes):
            stop_process(process, timeout=30)  # a worker stops its executors first


def executor_work(app_dir: Path, sources: str) -> tuple[int, tuple[str, ...]]:
    """How many tasks a worker's executors of one application (its folder ``app_dir`` in the worker's work
    folder) started, by their logs, and the library archives (``sources*.zip``) they fetched."""
    tasks = sum(log.read_text().count("Running task") for log in app_dir.glob("*/stderr"))
    return tasks, tuple(sorted(archive.name for archive in app_dir.glob(f"*/{sources}*.zip")))


def lake_uri(store: S3Store) -> str:
    return f"s3://{BUCKET}/{store.prefix.rstrip('/')}"


def test_a_run_on_a_standalone_cluster_reports_what_inline_reports(
    cluster: Cluster, s3_server: EmbeddedS3, process_env: dict[str, str], tmp_path: Path
) -> None:
    on_cluster, inline = new_s3_store(s3_server), new_s3_store(s3_server)
    fill(on_cluster)
    fill(inline)
    config_file = tmp_path / "config.yaml"
    config_file.write_text(LAKE_CONFIG)
    snapshot = write_offsets(tmp_path / "offsets.json")
    common = ["run", "--config", str(config_file), "--now", str(T0), "--offsets", str(snapshot), "--json"]
    env = {**process_env, "SPARK_CONF_DIR": str(cluster.conf_dir)}

    on_spark = ["--lake", lake_uri(on_cluster), "--engine", "spark", "--spark-master", cluster.master]

    ran = cli(*common, *on_spark, env=env, timeout=600)

    assert ran.returncode == 1, ran.stderr  # the two quarantined partitions, as inline
    assert f"[run] execute: spark-submit {RETENTION_JOB_NAME} on {cluster.master}" in ran.stderr
    report = json.loads(ran.stdout)
    assert (report["outcome"], report["engine"], report["committed_version"]) == ("committed", "spark", 1)
    reference = cli_in_process(*common, "--lake", lake_uri(inline), aws=s3_environ(s3_server))
    assert reference.returncode == 1, reference.stderr
    expected = json.loads(reference.stdout)
    run_ids = frozenset({report["run_id"], expected["run_id"]})
    prefixes = [on_cluster.prefix.rstrip("/"), inline.prefix.rstrip("/")]

    def same(document: Any) -> Any:
        return normalized(document, run_ids, wall_clock=True, prefixes=prefixes)

    staged = {key: report.pop(key) for key in STAGED_ONLY}
    assert (staged["labels"]["engine"], staged["validation"]["success"]) == ("spark", True)
    for document in (report, expected):
        document["gc"]["now_ms"] = "<time>"  # when gc ran (its clock is the wall clock's, not --now)
    assert same(report) == same(expected)
    assert same(json.loads(manifest_to_json(resolve_manifest(on_cluster)))) == same(
        json.loads(manifest_to_json(resolve_manifest(inline)))
    )
    apps = master_state(cluster.master_ui)["completedapps"]
    assert [(app["name"], app["state"]) for app in apps] == [
        (f"{RETENTION_JOB_NAME} {report['run_id']}", "FINISHED")
    ]
    sources = library_archive().name.split(".")[0]  # kafka_segments-<digest of the library's sources>
    done = [executor_work(work_dir / apps[0]["id"], sources) for work_dir in cluster.work_dirs]
    assert [tasks > 0 for tasks, _ in done] == [True] * WORKERS, done  # each worker's executor ran tasks
    assert [len(archives) for _, archives in done] == [1] * WORKERS, done  # and fetched the archive
    assert len({archives for _, archives in done}) == 1, done  # the job's one archive
