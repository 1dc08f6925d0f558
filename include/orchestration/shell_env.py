"""What a command next to the standalone demo stack needs (``./scripts/airflow-standalone``): its banner and
its environment as a shell script (``source <output>/env.sh``). Only what the stack sets or changes relative
to the calling shell is written, and what it dropped is unset."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from orchestration.demo_stack import MAINTENANCE_DAG_ID, StackSettings, s3_environment

ENV_SCRIPT = "env.sh"


def stack_exports(env: Mapping[str, str], *, base: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``env`` that ``base`` (the caller's environment) lacks or has with another value."""
    return {name: value for name, value in sorted(env.items()) if base.get(name) != value}


def stack_unsets(env: Mapping[str, str], *, base: Mapping[str, str]) -> list[str]:
    """The variables of ``base`` that the stack's environment ``env`` dropped (``airflow_environment``)."""
    return sorted(name for name in base if name not in env)


def write_env_script(folder: Path, exports: Mapping[str, str], *, unset: Sequence[str] = ()) -> Path:
    """``folder/env.sh``: ``unset`` the variables named, then one ``export NAME=value`` line per variable
    (readable by its owner only: it holds the stack's credentials)."""
    path = folder / ENV_SCRIPT
    lines = [
        "# The demo stack's environment: `source` this file to run airflow or kafka-segments commands on it.",
        *(f"unset {name}" for name in unset),
        *(f"export {name}={shlex.quote(value)}" for name, value in exports.items()),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.chmod(path, 0o600)
    return path


def standalone_banner(settings: StackSettings, *, port: int, env_script: Path, login: str) -> str:
    """The lines printed once the standalone stack is up."""
    home = "SQLite metadata database, task logs" if settings.database_url is None else "task logs"
    lines = [
        f"\nAirflow is up: http://localhost:{port}   login: {login}",
        f"  REST API:     http://localhost:{port}/api/v2",
        f"  AIRFLOW_HOME: {settings.airflow_home}   ({home})",
        f"  lake:         {settings.lake_uri}",
    ]
    if settings.database_url is not None:
        lines.append(f"  metadata DB:  {settings.database_url}   (PostgreSQL)")
    if settings.s3_endpoint is not None:
        s3 = s3_environment(settings.s3_endpoint)
        lines.append(
            f"  S3 endpoint:  {settings.s3_endpoint}   access key {s3['AWS_ACCESS_KEY_ID']}, secret key "
            f"{s3['AWS_SECRET_ACCESS_KEY']}, region {s3['AWS_REGION']}"
        )
    return "\n".join(
        [
            *lines,
            f"DAGs: {MAINTENANCE_DAG_ID} (active: its schedule commits; a manual trigger is a dry run unless "
            "its dry_run switch is turned off) and kafka_segments_delete_records",
            f"Commands in another shell see this stack after:  source {env_script}",
            f"  e.g. airflow dags list-runs {MAINTENANCE_DAG_ID}",
            f"       kafka-segments describe --lake {settings.lake_uri}",
            "Press Ctrl-C to stop.",
        ]
    )
