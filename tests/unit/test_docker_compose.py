"""docker-compose.yaml cannot be started here (no Docker engine), so its structure is checked instead."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yaml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
DOCKERFILE = (ROOT / "docker" / "Dockerfile").read_text()
PINNED = re.compile(r"^[\w./-]+:(?!latest$)[\w.-]*\d[\w.-]*$")


def test_the_stack_has_every_component() -> None:
    assert {
        "postgres",
        "minio",
        "minio-init",
        "spark-master",
        "spark-worker",
        "airflow-init",
        "airflow-api-server",
        "airflow-scheduler",
        "airflow-dag-processor",
        "airflow-triggerer",
    } <= set(SERVICES)


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_images_are_pinned(name: str) -> None:
    assert PINNED.match(SERVICES[name]["image"]), SERVICES[name]["image"]


def test_dockerfile_base_image_is_pinned_and_installs_the_lock() -> None:
    base = re.search(r"^FROM (\S+)", DOCKERFILE, re.MULTILINE)
    assert base is not None
    assert PINNED.match(base.group(1))
    assert "--require-hashes -r requirements.lock" in DOCKERFILE
    assert "openjdk-17" in DOCKERFILE


def test_project_services_share_one_image_built_from_the_dockerfile() -> None:
    project = [s for s in SERVICES.values() if "build" in s]
    assert {s["image"] for s in project} == {"kafka-segments:0.1.0"}
    assert all(s["build"]["dockerfile"] == "docker/Dockerfile" for s in project)
    for name in ("spark-master", "spark-worker", "airflow-scheduler", "airflow-api-server"):
        assert "build" in SERVICES[name], name


def test_dependencies_name_existing_services() -> None:
    for name, service in SERVICES.items():
        for dependency in service.get("depends_on", {}):
            assert dependency in SERVICES, f"{name} depends on unknown {dependency}"


def test_airflow_environment_matches_the_image_and_services() -> None:
    env = SERVICES["airflow-scheduler"]["environment"]
    workdir = re.search(r"^WORKDIR (\S+)", DOCKERFILE, re.MULTILINE)
    assert workdir is not None
    assert env["AIRFLOW__CORE__DAGS_FOLDER"] == f"{workdir.group(1)}/dags"
    assert "COPY dags ./dags" in DOCKERFILE
    assert "postgres:5432" in env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"]
    assert env["AWS_ENDPOINT_URL"] == "http://minio:9000"
    assert "spark://spark-master" in env["AIRFLOW_CONN_SPARK_DEFAULT"]
    assert "airflow-api-server:8080" in env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"]


def test_the_lake_bucket_is_created() -> None:
    bucket = re.match(
        r"s3://([^/]+)", SERVICES["airflow-scheduler"]["environment"]["AIRFLOW_VAR_KAFKA_SEGMENTS_LAKE"]
    )
    assert bucket is not None
    assert f"lake/{bucket.group(1)}" in SERVICES["minio-init"]["entrypoint"]


def test_the_lock_has_the_postgres_driver() -> None:
    lock = (ROOT / "requirements.lock").read_text()
    assert re.search(r"^psycopg2-binary==", lock, re.MULTILINE)
    assert re.search(r"^apache-airflow-providers-postgres==", lock, re.MULTILINE)
