"""Fixtures of the Spark tests: one local SparkSession (``local[2]``) for the whole session, configured as
``spark-submit`` configures a job (``spark_submit.job_conf``: the workers' Python, no UI) plus, for the tests
that map library functions on a bare ``SparkRunner``, ``spark.executorEnv.AWS_*`` pointing at the session's
moto server (a job's driver passes them with its tasks instead: ``SparkRunner(environ=...)``), lakes on a
local directory and on S3, and the environment of a ``kafka-segments`` or ``spark-submit`` process. Every
Spark JVM of the session starts with ``spark_startup.QUICK_JVM_OPTIONS`` (``SPARK_SUBMIT_OPTS``).

``spark_jobs/`` is put on ``sys.path`` so the tests import the job's modules as ``spark-submit`` runs them.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from kafka_segments.demo import EmbeddedS3
from kafka_segments.pipeline.engines.spark_submit import job_conf
from kafka_segments.storage import LocalStore
from kafka_segments.user_cache import CACHE_DIR_ENV
from s3_fixtures import BUCKET, new_s3_store
from spark_helpers import Lake, s3_environ
from spark_startup import SUBMIT_OPTS_ENV, with_quick_jvm

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPARK_JOBS = Path(__file__).resolve().parents[2] / "spark_jobs"
if str(SPARK_JOBS) not in sys.path:
    sys.path.insert(0, str(SPARK_JOBS))


@pytest.fixture(scope="session", autouse=True)
def _quick_jvm() -> Iterator[None]:
    """``SPARK_SUBMIT_OPTS`` with ``QUICK_JVM_OPTIONS`` for the session: every ``spark-submit`` this process
    or its children start (the session's Spark, jobs, the benchmark's sessions)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SUBMIT_OPTS_ENV, with_quick_jvm(os.environ)[SUBMIT_OPTS_ENV])
        yield


@pytest.fixture(scope="session")
def spark(s3_server: EmbeddedS3, _quick_jvm: None) -> Iterator[SparkSession]:
    """The session's local Spark (``local[2]``, loopback, quiet, two shuffle partitions), executors pointed
    at moto."""
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("AWS_") and key not in {"PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"}
    }
    environ.update(s3_environ(s3_server))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SPARK_LOCAL_IP", "127.0.0.1")
        mp.setenv("PYSPARK_PYTHON", sys.executable)
        mp.setenv("PYSPARK_DRIVER_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        # Two shuffle partitions, not 200: the data frames of the tests are a few hundred rows.
        builder = SparkSession.builder.master("local[2]").appName("kafka-segments-tests")
        builder = builder.config("spark.sql.shuffle.partitions", "2")
        executors = {f"spark.executorEnv.{key}": value for key, value in s3_environ(s3_server).items()}
        for key, value in {**job_conf(environ), **executors}.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        try:
            yield session
        finally:
            session.stop()
            # py4j's client closes its connection from __del__ at interpreter exit and logs that at INFO,
            # after pytest has closed the streams ("--- Logging error ---"): nothing to say by then.
            logging.getLogger("py4j").setLevel(logging.WARNING)


@pytest.fixture(params=["local", "s3"])
def lake(request: pytest.FixtureRequest, tmp_path: Path) -> Lake:
    """A fresh lake on a local directory and on S3 (moto over HTTP)."""
    if request.param == "local":
        root = tmp_path / "lake"
        return Lake(LocalStore(root), str(root), {})
    lake_on_s3: Lake = request.getfixturevalue("lake_s3")
    return lake_on_s3


@pytest.fixture(scope="session")
def archive_cache_dir(kafka_segments_cache: Path) -> Path:
    """Where the tests' library archives and their kernels are cached (never the user's cache folder)."""
    return kafka_segments_cache


@pytest.fixture(autouse=True)
def _archive_cache(archive_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(archive_cache_dir))


@pytest.fixture(scope="session")
def process_env(s3_server: EmbeddedS3, archive_cache_dir: Path, _quick_jvm: None) -> dict[str, str]:
    """The environment of a ``kafka-segments`` or ``spark-submit`` process: moto's settings, loopback Spark,
    the quick JVM, and the library archive cached in the session's temporary folder."""
    env = with_quick_jvm({k: v for k, v in os.environ.items() if not k.startswith("AWS_")})
    env.update(s3_environ(s3_server))
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env[CACHE_DIR_ENV] = str(archive_cache_dir)
    return env


@pytest.fixture
def lake_s3(s3_server: EmbeddedS3) -> Lake:
    """A fresh lake on S3 (moto over HTTP)."""
    store = new_s3_store(s3_server)
    return Lake(store, f"s3://{BUCKET}/{store.prefix.rstrip('/')}", s3_environ(s3_server))
