"""``pipeline.engines.spark_submit``: the library archive executors import, a job spec complete enough for any
launcher (the CLI, Airflow's SparkSubmitOperator), the ``spark-submit`` command line, and a failing job
reported with its own one-line reason."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from kafka_segments.pipeline.engines.spark_submit import (
    RETENTION_JOB_NAME,
    SPARK_JOBS_ENV,
    SparkJobError,
    SparkJobNotFoundError,
    library_archive,
    retention_job_spec,
    run_spark_submit,
    spark_jobs_dir,
    spark_submit_argv,
)
from kafka_segments.storage import LocalStore
from kafka_segments.user_cache import CACHE_DIR_ENV
from lake.retention_helpers import upload_fifteen_records

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
ENVIRON = {
    "AWS_ENDPOINT_URL": "http://127.0.0.1:9999",
    "AWS_ACCESS_KEY_ID": "key",
    "AWS_SECRET_ACCESS_KEY": "secret",
    "AWS_DEFAULT_REGION": "us-east-1",
    "HOME": "/home/someone",
}


@pytest.fixture(autouse=True)
def archive_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(cache))
    monkeypatch.delenv(SPARK_JOBS_ENV, raising=False)
    return cache


def test_the_library_archive_is_built_once_per_content(tmp_path: Path) -> None:
    first = library_archive(cache_dir=tmp_path / "a")
    mtime = first.stat().st_mtime_ns
    again = library_archive(cache_dir=tmp_path / "a")
    elsewhere = library_archive(cache_dir=tmp_path / "b")

    assert again == first
    assert again.stat().st_mtime_ns == mtime  # reused, not rewritten
    assert elsewhere.read_bytes() == first.read_bytes()  # deterministic
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [first.name]  # no temporary left
    names = zipfile.ZipFile(first).namelist()
    assert "kafka_segments/__init__.py" in names
    assert "kafka_segments/py.typed" in names
    assert "kafka_segments/retention/" in names  # a namespace package: zipimport needs its entry
    assert "kafka_segments/pipeline/engines/spark_submit.py" in names
    assert not [name for name in names if name.endswith(".pyc") or "__pycache__" in name]


def test_executors_import_the_library_from_the_archive(tmp_path: Path) -> None:
    archive = library_archive(cache_dir=tmp_path)
    code = (
        "import kafka_segments.retention.plan as plan, kafka_segments.pipeline.engines as runners;"
        "print(plan.__file__); print(runners.__file__)"
    )
    env = {**os.environ, "PYTHONPATH": str(archive)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=60
    )
    assert [line.split(".zip")[0] + ".zip" for line in out.stdout.split()] == [str(archive)] * 2


def test_the_retention_job_spec_is_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = retention_job_spec(lake="lake", run_id="r-1", config_path="c.yaml", environ=ENVIRON)

    assert spec.name == RETENTION_JOB_NAME
    assert spec.application == str(REPO / "spark_jobs" / "retention_job.py")
    assert spec.application_args == (
        "--lake",
        str(tmp_path / "lake"),
        "--run-id",
        "r-1",
        "--config",
        str(tmp_path / "c.yaml"),
    )
    assert [Path(p).parent for p in spec.py_files] == [tmp_path / "cache" / "spark"]
    assert dict(spec.env) == {
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
        **{k: v for k, v in ENVIRON.items() if k.startswith("AWS_")},
    }
    secrets = [v for k, v in ENVIRON.items() if k.startswith("AWS_")]
    assert secrets
    assert not [k for k in spec.conf if k.startswith("spark.executorEnv.")]  # the driver passes them instead
    assert not [v for v in spec.conf.values() if v in secrets]
    assert spec.conf["spark.pyspark.python"] == sys.executable
    assert spec.conf["spark.ui.enabled"] == "false"


def test_the_spec_keeps_what_the_environment_sets_and_s3_uris() -> None:
    environ = {"PYSPARK_PYTHON": "/opt/python3", "SPARK_LOCAL_IP": "10.0.0.5"}
    spec = retention_job_spec(lake="s3://bucket/lake", run_id="r-2", config_path=None, environ=environ)

    assert spec.application_args == ("--lake", "s3://bucket/lake", "--run-id", "r-2")
    assert (spec.env["PYSPARK_PYTHON"], spec.env["SPARK_LOCAL_IP"]) == ("/opt/python3", "10.0.0.5")
    assert spec.conf["spark.pyspark.python"] == "/opt/python3"
    assert not [k for k in {**spec.env, **spec.conf} if "AWS_" in k]


def test_a_missing_jobs_folder_or_script_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SPARK_JOBS_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(SparkJobNotFoundError, match=SPARK_JOBS_ENV) as missing:
        spark_jobs_dir()
    assert missing.value.location == str(tmp_path / "nowhere")

    monkeypatch.setenv(SPARK_JOBS_ENV, str(tmp_path))
    assert spark_jobs_dir() == tmp_path
    with pytest.raises(SparkJobNotFoundError, match="script is missing") as no_script:
        retention_job_spec(lake="s3://b/l", run_id="r", config_path=None, environ={})
    assert no_script.value.location == str(tmp_path / "retention_job.py")


def test_the_spark_submit_command_line() -> None:
    spec = retention_job_spec(lake="s3://bucket/lake", run_id="r-3", config_path=None, environ=ENVIRON)
    argv = spark_submit_argv(spec, master="spark://127.0.0.1:7077")

    assert argv[0] == str(Path(sys.executable).parent / "spark-submit")
    assert argv[1:7] == [
        "--master",
        "spark://127.0.0.1:7077",
        "--name",
        RETENTION_JOB_NAME,
        "--py-files",
        spec.py_files[0],
    ]
    confs = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--conf"]
    assert confs == [f"{k}={v}" for k, v in sorted(spec.conf.items())]
    assert argv[-5:] == [spec.application, "--lake", "s3://bucket/lake", "--run-id", "r-3"]
    # what `ps` shows: no AWS setting, and so never the secret key
    secret = ENVIRON["AWS_SECRET_ACCESS_KEY"]
    assert not [arg for arg in argv if "AWS_" in arg or arg.rpartition("=")[2] == secret]


def test_a_failing_job_raises_with_its_own_one_line_reason(tmp_path: Path) -> None:
    """The job checks the run before Spark starts: an unprepared run exits 1 with a one-line reason."""
    upload_fifteen_records(LocalStore(tmp_path / "lake"))
    spec = retention_job_spec(lake=str(tmp_path / "lake"), run_id="never-prepared", config_path=None)
    lines: list[str] = []

    with pytest.raises(SparkJobError) as failed:
        run_spark_submit(spec, master="local[1]", progress=lines.append)

    error = failed.value
    assert error.exit_code == 1
    assert f"{RETENTION_JOB_NAME}: " in error.reason
    assert "never-prepared" in error.reason
    assert "no run 'never-prepared' in this lake" in error.reason
    assert error.location == f"{spec.application} on local[1]"
    assert error.output_tail[-1] == lines[-1]
    restored = pickle.loads(pickle.dumps(error))  # errors cross process boundaries (Airflow, executors)
    assert (restored.exit_code, restored.output_tail, str(restored)) == (1, error.output_tail, str(error))
