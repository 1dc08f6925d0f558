"""docker-compose.yaml cannot be started here (no Docker engine), so it is checked against what the code
expects instead: the DAG contract's Variables and Connections (names from ``orchestration.settings``), the
Spark master the connection names, the S3 endpoint the lake needs in tasks, the driver and the executors,
paths that exist in the image and in this checkout, and pinned images."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from kafka_segments.config import load_config
from orchestration import settings as contract
from orchestration.demo_stack import TASK_PRELOAD_SETTINGS

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yaml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
DOCKERFILE = (ROOT / "docker" / "Dockerfile").read_text()
PINNED = re.compile(r"^[\w./-]+:(?!latest$)[\w.-]*\d[\w.-]*$")
AIRFLOW_SERVICES = (
    "airflow-init",
    "airflow-api-server",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
)
SPARK_HOSTS = ("airflow-scheduler", "spark-master", "spark-worker")
"""Where a Spark JVM runs: the driver (tasks run in the scheduler with the LocalExecutor), master, worker."""


def env(service: str) -> dict[str, str]:
    return {key: str(value) for key, value in SERVICES[service].get("environment", {}).items()}


def workdir() -> PurePosixPath:
    found = re.search(r"^WORKDIR (\S+)", DOCKERFILE, re.MULTILINE)
    assert found is not None
    return PurePosixPath(found.group(1))


def mounts(service: str) -> dict[PurePosixPath, Path]:
    """Bind mounts of a service: container path → host path in this checkout."""
    found = {}
    for volume in SERVICES[service].get("volumes", []):
        source, target, *_ = volume.split(":")
        if source.startswith("./"):
            found[PurePosixPath(target)] = ROOT / source
    return found


def host_path(service: str, container_path: str) -> Path | None:
    """Where a container path of ``service`` comes from in this checkout (``None``: not mounted)."""
    path = PurePosixPath(container_path)
    for target, source in mounts(service).items():
        if path == target or target in path.parents:
            return source / path.relative_to(target)
    return None


def connection(service: str, conn_id: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(env(service)[f"AIRFLOW_CONN_{conn_id.upper()}"])
    return document


# -------------------------------------------------------------------------------------------- components


def test_the_stack_has_every_component() -> None:
    assert {
        "postgres",
        "minio",
        "minio-init",
        "demo-lake",
        "spark-master",
        "spark-worker",
        *AIRFLOW_SERVICES,
    } <= set(SERVICES)


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_images_are_pinned(name: str) -> None:
    assert PINNED.match(SERVICES[name]["image"]), SERVICES[name]["image"]


def test_dockerfile_base_image_is_pinned_installs_the_lock_and_copies_the_project() -> None:
    base = re.search(r"^FROM (\S+)", DOCKERFILE, re.MULTILINE)
    assert base is not None
    assert PINNED.match(base.group(1))
    assert "--require-hashes -r requirements.lock" in DOCKERFILE
    assert "openjdk-17" in DOCKERFILE
    for folder in ("include", "dags", "plugins", "spark_jobs", "scripts", "config"):
        assert f"COPY {folder} ./{folder}" in DOCKERFILE, folder
        assert (ROOT / folder).is_dir(), folder


def test_project_services_share_one_image_built_from_the_dockerfile() -> None:
    project = [s for s in SERVICES.values() if "build" in s]
    assert {s["image"] for s in project} == {"kafka-segments:0.1.0"}
    assert all(s["build"]["dockerfile"] == "docker/Dockerfile" for s in project)
    for name in ("demo-lake", *SPARK_HOSTS, *AIRFLOW_SERVICES):
        assert SERVICES[name]["image"] == "kafka-segments:0.1.0", name


def test_dependencies_name_existing_services() -> None:
    for name, service in SERVICES.items():
        for dependency in service.get("depends_on", {}):
            assert dependency in SERVICES, f"{name} depends on unknown {dependency}"


def test_bind_mounts_exist_in_the_checkout_and_land_in_the_project_folder() -> None:
    for name in SERVICES:
        for target, source in mounts(name).items():
            assert source.exists(), f"{name}: {source} does not exist"
            assert workdir() in target.parents, f"{name}: {target} is outside {workdir()}"


def test_every_project_container_shares_the_code_and_config() -> None:
    expected = {workdir() / folder for folder in ("dags", "plugins", "include", "spark_jobs", "config")}
    for name in ("demo-lake", *SPARK_HOSTS, *AIRFLOW_SERVICES):
        assert expected <= set(mounts(name)), name


# ------------------------------------------------------------------------------------------ DAG contract


@pytest.mark.parametrize("service", AIRFLOW_SERVICES)
def test_every_variable_and_connection_the_orchestration_reads_is_set(service: str) -> None:
    environment = env(service)
    for variable in (contract.LAKE_VARIABLE, contract.CONFIG_VARIABLE, contract.OFFSETS_SOURCE_VARIABLE):
        assert environment.get(f"AIRFLOW_VAR_{variable.upper()}"), variable
    for conn_id in (contract.AWS_CONN_ID, contract.SPARK_CONN_ID):
        assert f"AIRFLOW_CONN_{conn_id.upper()}" in environment, conn_id


def test_dag_and_plugin_folders_are_the_mounted_ones() -> None:
    for name in AIRFLOW_SERVICES:
        environment = env(name)
        assert host_path(name, environment["AIRFLOW__CORE__DAGS_FOLDER"]) == ROOT / "dags"
        assert host_path(name, environment["AIRFLOW__CORE__PLUGINS_FOLDER"]) == ROOT / "plugins"


def test_the_config_variable_names_a_valid_mounted_file() -> None:
    path = env("airflow-scheduler")[f"AIRFLOW_VAR_{contract.CONFIG_VARIABLE.upper()}"]
    source = host_path("airflow-scheduler", path)
    assert source is not None, f"{path} is not mounted"
    assert source.is_file()
    load_config(source)  # raises ConfigError when invalid


def test_the_spark_connection_names_the_master_service_and_port() -> None:
    spark = connection("airflow-scheduler", contract.SPARK_CONN_ID)
    assert spark["conn_type"] == "spark"
    assert spark["host"] == "spark://spark-master"
    master = SERVICES["spark-master"]["command"]
    assert master[master.index("--host") + 1] == "spark-master"
    assert str(spark["port"]) == master[master.index("--port") + 1]
    worker = SERVICES["spark-worker"]["command"]
    assert f"spark://spark-master:{spark['port']}" in worker
    assert spark.get("extra", {}).get("deploy-mode", "client") == "client"  # python apps: client mode only


def test_the_lake_is_in_the_bucket_minio_init_creates_and_demo_lake_fills() -> None:
    lake = env("airflow-scheduler")[f"AIRFLOW_VAR_{contract.LAKE_VARIABLE.upper()}"]
    bucket = re.match(r"s3://([^/]+)", lake)
    assert bucket is not None
    assert f"lake/{bucket.group(1)}" in SERVICES["minio-init"]["entrypoint"]
    command = SERVICES["demo-lake"]["command"]
    assert command[command.index("--lake") + 1] == lake
    assert host_path("demo-lake", str(workdir() / command[1])) == ROOT / "scripts" / "demo_airflow.py"


def test_the_aws_connection_and_environment_reach_minio() -> None:
    minio_port = SERVICES["minio"]["ports"][0].split(":")[-1]
    endpoint = f"http://minio:{minio_port}"
    aws = connection("airflow-scheduler", contract.AWS_CONN_ID)
    assert aws["conn_type"] == "aws"
    assert aws["extra"]["endpoint_url"] == endpoint
    minio = env("minio")
    assert (aws["login"], aws["password"]) == (minio["MINIO_ROOT_USER"], minio["MINIO_ROOT_PASSWORD"])
    # the library in tasks, the Spark driver and the executors read the standard AWS settings
    for name in ("airflow-scheduler", "spark-worker", "demo-lake"):
        environment = env(name)
        assert environment["AWS_ENDPOINT_URL"] == endpoint, name
        assert environment["AWS_ACCESS_KEY_ID"] == aws["login"], name
        assert environment["AWS_SECRET_ACCESS_KEY"] == aws["password"], name
        assert environment["AWS_DEFAULT_REGION"] == aws["extra"]["region_name"], name


def test_driver_and_executors_use_the_same_python() -> None:
    pythons = {env(name).get("PYSPARK_PYTHON") for name in (*SPARK_HOSTS, *AIRFLOW_SERVICES)}
    assert pythons == {"/usr/local/bin/python"}  # the python:3.11 base image's interpreter, with the lock
    assert env("airflow-scheduler")["PYSPARK_DRIVER_PYTHON"] == "/usr/local/bin/python"


@pytest.mark.parametrize("service", SPARK_HOSTS)
def test_each_spark_host_binds_and_advertises_its_own_service_name(service: str) -> None:
    """Not loopback (other containers could not reach it) and not 0.0.0.0 (the driver would advertise it)."""
    assert env(service)["SPARK_LOCAL_IP"] == service


def test_task_workers_reach_the_execution_api_of_the_api_server() -> None:
    url = env("airflow-scheduler")["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"]
    command = shlex.split(" ".join(SERVICES["airflow-api-server"]["command"]))
    port = command[command.index("--port") + 1]
    assert url == f"http://airflow-api-server:{port}/execution/"
    published = [entry.split(":")[-2:] for entry in SERVICES["airflow-api-server"]["ports"]]
    assert [port, port] in published
    assert "postgres:5432" in env("airflow-scheduler")["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]


def test_the_lock_has_the_postgres_driver() -> None:
    lock = (ROOT / "requirements.lock").read_text()
    assert re.search(r"^psycopg2-binary==", lock, re.MULTILINE)
    assert re.search(r"^apache-airflow-providers-postgres==", lock, re.MULTILINE)


def test_the_scheduler_forks_its_tasks_from_a_fork_server_with_the_tasks_imports_loaded() -> None:
    """The settings of the embedded stack (``demo_stack.TASK_PRELOAD_SETTINGS``), on the scheduler only: the
    one Airflow service that forks task processes."""
    for name in SERVICES:
        preload = {key: env(name)[key] for key in TASK_PRELOAD_SETTINGS if key in env(name)}
        assert preload == (TASK_PRELOAD_SETTINGS if name == "airflow-scheduler" else {}), name
