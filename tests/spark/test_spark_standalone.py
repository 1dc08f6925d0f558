"""The retention job on a real Spark standalone cluster: a master and a worker started from the pyspark wheel
on loopback (``sbin/spark-daemon.sh`` with the Master/Worker classes: the wheel has no start-master.sh), the
job submitted in client mode with the spec's ``--py-files`` and no AWS setting in its ``conf`` (the worker's
own environment has none either: the driver hands its settings to the executors with each task), on a moto
lake. It stages what the inline engine stages."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import pytest
from kafka_segments.pipeline.engines.spark_submit import retention_job_spec, run_spark_submit
from kafka_segments.pipeline.stages import execute_run, prepare_run
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock
from lake.retention_helpers import config, record_size, upload_fifteen_records
from spark_helpers import Lake, staged_documents
from spark_startup import QUICK_JVM_OPTIONS

pytestmark = pytest.mark.spark

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
CONFIG = f"""\
topics:
  t:
    retention.ms: 10000
  u:
    retention.bytes: {10 * record_size()}
"""


def free_ports(count: int) -> list[int]:
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]


def daemon_env(tmp_path: Path) -> dict[str, str]:
    """The daemons' environment: loopback, their files under ``tmp_path``, and no AWS or PySpark settings
    (executors must get them from the job's configuration); the quick JVM (``spark_startup``)."""
    import pyspark

    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYSPARK_"))}
    env.update(
        SPARK_HOME=str(Path(pyspark.__file__).parent),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_MASTER_HOST="127.0.0.1",
        SPARK_PID_DIR=str(tmp_path / "pids"),
        SPARK_LOG_DIR=str(tmp_path / "logs"),
        SPARK_WORKER_DIR=str(tmp_path / "work"),
        SPARK_IDENT_STRING="kafka-segments-test",
        SPARK_DAEMON_JAVA_OPTS=QUICK_JVM_OPTIONS,
    )
    return env


def daemon(env: dict[str, str], action: str, cls: str, *args: str) -> None:
    script = Path(env["SPARK_HOME"]) / "sbin" / "spark-daemon.sh"
    subprocess.run(
        [str(script), action, cls, "1", *args], env=env, check=True, capture_output=True, timeout=60
    )


def daemon_pid(env: dict[str, str], cls: str) -> int | None:
    pid_file = Path(env["SPARK_PID_DIR"]) / f"spark-{env['SPARK_IDENT_STRING']}-{cls}-1.pid"
    return int(pid_file.read_text()) if pid_file.exists() else None


def alive_workers(webui: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{webui}/json/", timeout=2) as response:
            return int(json.load(response).get("aliveworkers", 0))
    except OSError:
        return 0


def stop(env: dict[str, str], cls: str) -> None:
    """Stop one daemon we started (by its pid file) and wait until its process is gone."""
    pid = daemon_pid(env, cls)
    daemon(env, "stop", cls)
    deadline = time.monotonic() + 30
    while pid is not None and time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    """A master and one worker (2 cores) on loopback; the master URL once the worker is ALIVE."""
    port, master_ui, worker_port, worker_ui = free_ports(4)
    env = daemon_env(tmp_path)
    master = f"spark://127.0.0.1:{port}"
    try:
        daemon(
            env, "start", MASTER, "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(master_ui)
        )
        daemon(
            env,
            "start",
            WORKER,
            "--host",
            "127.0.0.1",
            "--port",
            str(worker_port),
            "--webui-port",
            str(worker_ui),
            "--cores",
            "2",
            "--memory",
            "1g",
            master,
        )
        deadline = time.monotonic() + 90
        while alive_workers(master_ui) < 1:
            if time.monotonic() > deadline:
                logs = "\n".join(p.read_text()[-2000:] for p in sorted((tmp_path / "logs").glob("*.out")))
                pytest.fail(f"the standalone worker did not register with the master:\n{logs}")
            time.sleep(0.5)
        yield master
    finally:
        stop(env, WORKER)
        stop(env, MASTER)


def test_the_retention_job_on_a_standalone_cluster_stages_what_inline_stages(
    cluster: str, lake_s3: Lake, tmp_path: Path
) -> None:
    store, clock = lake_s3.store, FakeClock()
    for tp in (TopicPartition("t", 0), TopicPartition("t", 1)):
        upload_fifteen_records(store, ts=10, tp=tp)
    upload_fifteen_records(store, ts=T0, tp=TopicPartition("u", 0))
    config_file = tmp_path / "config.yaml"
    config_file.write_text(CONFIG)
    inline = prepare_run(store, now_ms=T0, offsets=None, dry_run=False, clock=clock).run_id
    on_cluster = prepare_run(store, now_ms=T0, offsets=None, dry_run=False, clock=clock).run_id
    execute_run(store, config(CONFIG), inline, clock=clock)
    spec = retention_job_spec(
        lake=lake_s3.uri, run_id=on_cluster, config_path=str(config_file), environ=lake_s3.environ
    )
    spec = replace(spec, conf={**spec.conf, "spark.executor.extraJavaOptions": QUICK_JVM_OPTIONS})

    result = run_spark_submit(spec, master=cluster)

    assert result.summary is not None
    assert f"run {on_cluster}: staged a new manifest (engine spark)" in result.summary
    ids = frozenset({inline, on_cluster})
    expected, staged = staged_documents(store, inline, ids), staged_documents(store, on_cluster, ids)
    assert (expected.pop("engine"), staged.pop("engine")) == ("inline", "spark")
    assert staged == expected
    assert staged["plan"]["plan"]["totals"]["segments_deleted"] == 7  # t: 2 x 3 by time; u: [0-4] by size
