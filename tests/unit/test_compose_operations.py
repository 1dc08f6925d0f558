"""What makes the docker-compose stack operable (it cannot be started here: no Docker engine): it is valid by
the Compose specification's own JSON schema, every Airflow service shares one set of keys from ``.env``,
task logs are readable from the UI, every long-lived service has a healthcheck, Airflow does not wait for
the demo job, and the image installs the runtime lock only and does not run as root."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_TEXT = (ROOT / "docker-compose.yaml").read_text()
COMPOSE: dict[str, Any] = yaml.safe_load(COMPOSE_TEXT)
SERVICES: dict[str, Any] = COMPOSE["services"]
DOCKERFILE = (ROOT / "docker" / "Dockerfile").read_text()
AIRFLOW_SERVICES = ("airflow-api-server", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer")
ONE_SHOT = ("minio-init", "demo-lake", "airflow-init")
KEYS = {
    "AIRFLOW__CORE__FERNET_KEY": "AIRFLOW_FERNET_KEY",
    "AIRFLOW__API__SECRET_KEY": "AIRFLOW_API_SECRET_KEY",
    "AIRFLOW__API_AUTH__JWT_SECRET": "AIRFLOW_JWT_SECRET",
}
"""Airflow's setting → the ``.env`` variable it comes from."""
JOB_TYPES = {
    "airflow-scheduler": "SchedulerJob",
    "airflow-dag-processor": "DagProcessorJob",
    "airflow-triggerer": "TriggererJob",
}


def env(service: str) -> dict[str, str]:
    return {key: str(value) for key, value in SERVICES[service].get("environment", {}).items()}


def test_the_compose_file_is_valid_by_the_compose_specification_schema() -> None:
    schema = json.loads((ROOT / "tests" / "data" / "compose-spec.json").read_text())
    Draft7Validator.check_schema(schema)
    errors = sorted(Draft7Validator(schema).iter_errors(COMPOSE), key=lambda error: list(error.path))
    assert not errors, [f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors]


def test_the_schema_check_catches_a_wrong_compose_file() -> None:
    schema = json.loads((ROOT / "tests" / "data" / "compose-spec.json").read_text())
    broken = {"services": {"x": {"image": "a:1", "depends_on": {"y": {"condition": "finished"}}}}}
    assert list(Draft7Validator(schema).iter_errors(broken))


# -------------------------------------------------------------------------------------------------- keys


@pytest.mark.parametrize("service", ["airflow-init", *AIRFLOW_SERVICES])
def test_every_airflow_service_reads_the_same_keys_from_dot_env(service: str) -> None:
    environment = env(service)
    for setting, variable in KEYS.items():
        value = environment[setting]
        assert re.fullmatch(rf"\$\{{{variable}:\?[^}}]+\}}", value), (setting, value)  # required: no default


def test_no_secret_is_written_in_the_compose_file() -> None:
    assert "kafka-segments-local-only-secret" not in COMPOSE_TEXT
    for service in SERVICES:
        for name, value in env(service).items():
            if name in KEYS:
                assert value.startswith("${"), (service, name)


def test_env_example_documents_every_variable_the_compose_file_requires() -> None:
    required = set(re.findall(r"\$\{(\w+):\?", COMPOSE_TEXT))
    assert required == set(KEYS.values())
    example = (ROOT / ".env.example").read_text()
    assigned = set(re.findall(r"^(\w+)=", example, re.MULTILINE))
    assert required <= assigned
    assert "/.env" in (ROOT / ".gitignore").read_text().splitlines()


def test_compose_env_writes_fresh_valid_keys_and_never_overwrites(tmp_path: Path) -> None:
    from cryptography.fernet import Fernet

    output = tmp_path / ".env"
    script = [sys.executable, str(ROOT / "scripts" / "compose_env.py"), "--output", str(output)]
    first = subprocess.run(script, capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stderr
    values = dict(re.findall(r"^(\w+)=(.+)$", output.read_text(), re.MULTILINE))
    assert set(values) == set(KEYS.values())
    token = Fernet(values["AIRFLOW_FERNET_KEY"].encode()).encrypt(b"connection password")
    assert Fernet(values["AIRFLOW_FERNET_KEY"].encode()).decrypt(token) == b"connection password"
    assert len(base64.urlsafe_b64decode(values["AIRFLOW_FERNET_KEY"])) == 32
    assert len(set(values.values())) == 3
    assert output.stat().st_mode & 0o077 == 0  # readable by its owner only
    before = output.read_text()
    second = subprocess.run(script, capture_output=True, text=True, check=False)
    assert second.returncode == 1
    assert "already exists" in second.stderr
    assert output.read_text() == before


# ------------------------------------------------------------------------------ as users would start it

PROJECT_IMAGE = "kafka-segments:0.1.0"
_VARIABLE = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


def interpolated(text: str, environment: dict[str, str]) -> str:
    """``text`` with Compose's ``${NAME}`` / ``${NAME:-default}`` / ``${NAME-default}`` resolved."""
    return _VARIABLE.sub(lambda m: environment.get(m.group(1)) or (m.group(2) or ""), text)


def host_ips(service: str, environment: dict[str, str]) -> list[str]:
    """The host address of each published port of ``service`` (short syntax ``[IP:]HOST:CONTAINER``; no IP:
    every interface, ``0.0.0.0``)."""
    found = []
    for port in SERVICES[service].get("ports", []):
        parts = interpolated(str(port), environment).split("/")[0].split(":")
        found.append(":".join(parts[:-2]) if len(parts) > 2 else "0.0.0.0")
    return found


def test_published_ports_are_bound_to_loopback_by_default() -> None:
    published = {name: host_ips(name, {}) for name in SERVICES if SERVICES[name].get("ports")}
    assert set(published) >= {"minio", "airflow-api-server", "spark-master"}
    for name, addresses in published.items():
        assert set(addresses) == {"127.0.0.1"}, (name, SERVICES[name]["ports"])


def test_the_published_address_can_be_chosen() -> None:
    chosen = {"KAFKA_SEGMENTS_HOST_IP": "192.0.2.10"}
    for name in SERVICES:
        assert set(host_ips(name, chosen)) <= {"192.0.2.10"}, name


def test_the_project_image_is_built_once_and_reused() -> None:
    builders = [name for name, service in SERVICES.items() if "build" in service]
    assert builders == ["airflow-init"]
    assert SERVICES["airflow-init"]["image"] == PROJECT_IMAGE
    assert SERVICES["airflow-init"]["build"] == {"context": ".", "dockerfile": "docker/Dockerfile"}
    users = [name for name, service in SERVICES.items() if service.get("image") == PROJECT_IMAGE]
    assert set(users) >= {"demo-lake", "spark-master", "spark-worker", "airflow-init", *AIRFLOW_SERVICES}
    for name in users:
        if name != "airflow-init":  # never pulled: the tag exists only where airflow-init built it
            assert SERVICES[name]["pull_policy"] == "never", name


def test_every_project_container_shares_one_kernel_cache_volume() -> None:
    from kafka_segments.user_cache import CACHE_DIR_ENV

    assert "kernel-cache" in COMPOSE["volumes"]
    folders = set()
    for name, service in SERVICES.items():
        if service.get("image") != PROJECT_IMAGE:
            continue
        environment = env(name)
        cache = environment[CACHE_DIR_ENV]
        assert f"kernel-cache:{cache}" in service["volumes"], name
        assert environment["NUMBA_CACHE_DIR"].startswith(cache + "/"), name  # the package's kernels too
        folders.add(cache)
    assert len(folders) == 1
    # the image makes the folder the unprivileged user's, so the new named volume takes that owner
    (folder,) = folders
    assert re.search(rf"mkdir -p [^\n]*{re.escape(folder)}", DOCKERFILE)
    assert re.search(rf"chown -R 50000:0 [^\n]*{re.escape(folder)}", DOCKERFILE)


# ------------------------------------------------------------------------------------------ logs, health


def test_task_logs_are_on_a_volume_the_api_server_shares_with_the_task_runners() -> None:
    for service in ("airflow-api-server", "airflow-scheduler", "airflow-triggerer"):
        assert "airflow-logs:/opt/airflow/logs" in SERVICES[service]["volumes"], service
        assert env(service)["AIRFLOW_HOME"] == "/opt/airflow"
    assert "airflow-logs" in COMPOSE["volumes"]
    # running tasks' logs are fetched from the log server on the task instance's hostname
    assert SERVICES["airflow-scheduler"]["hostname"] == "airflow-scheduler"
    assert SERVICES["airflow-triggerer"]["hostname"] == "airflow-triggerer"


def test_every_long_lived_service_has_a_healthcheck() -> None:
    long_lived = [name for name in SERVICES if name not in ONE_SHOT]
    assert set(long_lived) >= {"postgres", "minio", "spark-master", "spark-worker", *AIRFLOW_SERVICES}
    for name in long_lived:
        assert SERVICES[name].get("healthcheck", {}).get("test"), name
        assert SERVICES[name].get("restart") == "unless-stopped", name


@pytest.mark.parametrize(("service", "job_type"), sorted(JOB_TYPES.items()))
def test_airflow_components_check_their_own_job(service: str, job_type: str) -> None:
    test = SERVICES[service]["healthcheck"]["test"]
    assert test[:5] == ["CMD", "airflow", "jobs", "check", "--job-type"]
    assert test[5] == job_type
    assert "--local" in test  # this container's job, not another host's


def test_the_api_server_health_is_the_monitor_endpoint() -> None:
    test = " ".join(SERVICES["airflow-api-server"]["healthcheck"]["test"])
    assert "http://localhost:8080/api/v2/monitor/health" in test


def test_airflow_does_not_wait_for_the_demo_job() -> None:
    for name in ("airflow-init", *AIRFLOW_SERVICES):
        assert "demo-lake" not in SERVICES[name].get("depends_on", {}), name
    assert not any("demo-lake" in service.get("depends_on", {}) for service in SERVICES.values())


# ----------------------------------------------------------------------------------------------- image


def test_the_image_runs_as_an_unprivileged_user() -> None:
    users = re.findall(r"^USER (\S+)", DOCKERFILE, re.MULTILINE)
    assert users, "no USER in the Dockerfile"
    assert users[-1] not in ("root", "0")
    assert DOCKERFILE.rindex("USER ") > DOCKERFILE.rindex("RUN pip install")  # installed as root, run as not
    assert "useradd" in DOCKERFILE
    for name, service in SERVICES.items():
        assert service.get("user") in (None, users[-1]), name


def test_the_image_installs_the_runtime_lock_without_the_dev_tools() -> None:
    assert "--require-hashes -r requirements.lock" in DOCKERFILE
    instructions = [line for line in DOCKERFILE.splitlines() if not line.startswith("#")]
    assert not any("requirements-dev" in line for line in instructions)
    runtime = lock_pins(ROOT / "requirements.lock")
    for tool in ("pytest", "ruff", "mypy", "moto", "hypothesis", "pytest-xdist", "kafka-python"):
        assert tool not in runtime, tool


def test_the_spark_worker_works_in_a_folder_the_user_can_write() -> None:
    command = SERVICES["spark-worker"]["command"]
    assert command[command.index("--work-dir") + 1].startswith("/tmp/")


# ------------------------------------------------------------------------------------------------ locks


def lock_entries(path: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """A hashed lock: package name → (version, hashes)."""
    entries: dict[str, tuple[str, frozenset[str]]] = {}
    blocks = re.split(r"^(?=[A-Za-z0-9])", path.read_text(), flags=re.MULTILINE)
    for block in blocks:
        pin = re.match(r"([A-Za-z0-9][\w.-]*)==(\S+)", block)
        if pin:
            entries[pin.group(1).lower()] = (pin.group(2), frozenset(re.findall(r"--hash=(\S+)", block)))
    return entries


def lock_pins(path: Path) -> dict[str, str]:
    return {name: version for name, (version, _hashes) in lock_entries(path).items()}


def test_every_lock_entry_has_hashes() -> None:
    for lock in ("requirements.lock", "requirements-dev.lock"):
        entries = lock_entries(ROOT / lock)
        assert len(entries) > 100, lock
        assert all(hashes for _version, hashes in entries.values()), lock


def test_the_dev_lock_is_the_runtime_lock_plus_the_dev_tools() -> None:
    runtime = lock_entries(ROOT / "requirements.lock")
    dev = lock_entries(ROOT / "requirements-dev.lock")
    for name, entry in runtime.items():
        assert dev.get(name) == entry, name  # same version, same hashes
    assert {"pytest", "ruff", "mypy", "moto", "uv"} <= set(dev) - set(runtime)
    assert "-r requirements.in" in (ROOT / "requirements-dev.in").read_text().splitlines()


def test_setup_installs_the_dev_lock_with_hashes() -> None:
    setup = (ROOT / "scripts" / "setup").read_text()
    assert "uv pip sync --quiet --python .venv/bin/python --require-hashes requirements-dev.lock" in setup
    lock = (ROOT / "scripts" / "lock").read_text()
    assert "-c requirements.lock" in lock


def test_requirements_txt_has_the_runtime_pins_of_the_lock() -> None:
    lines = [
        line.strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    pins = dict(line.split("==", 1) for line in lines)
    assert {name.lower(): version for name, version in pins.items()} == lock_pins(ROOT / "requirements.lock")
    generated = subprocess.run(
        ["bash", str(ROOT / "scripts" / "requirements-txt")], capture_output=True, text=True, check=True
    ).stdout
    assert generated == (ROOT / "requirements.txt").read_text()


def test_the_runtime_has_the_amazon_provider_for_the_aws_connection() -> None:
    """assume-role, web identity and the UI's AWS connection form (orchestration.settings)."""
    assert "apache-airflow-providers-amazon" in lock_pins(ROOT / "requirements.lock")
