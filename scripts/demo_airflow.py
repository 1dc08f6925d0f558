"""The quick start's drivers: the maintenance DAG on the demo lake, under Airflow, on one machine.

    demo_airflow.py demo [--output DIR]                 # ./scripts/demo
    demo_airflow.py standalone [--output DIR] [--port N] [--postgres]  # ./scripts/airflow-standalone
    demo_airflow.py lake --lake URI                     # the demo lake into any lake (docker-compose)

Both start the embedded S3 server in this process, build the demo lake in it
(``kafka_segments.demo.lake``) and run Airflow 3 with SQLite in a throwaway ``AIRFLOW_HOME`` under the
output folder (default ``demo-output/<command>/``), with the DAG contract's Variables and Connections in the
environment and local Spark.

``demo`` runs ``airflow dags test kafka_segments_maintenance`` twice (a manual run with ``dry_run: false``:
its ``now`` is the trigger time) and prints each run's per-partition report read from the lake: the first
deletes segments by the log start offset, consumed retention and retention.ms; the second finds nothing
left to do. The lake is then copied to ``<output>/lake`` (report, Data Docs, manifests) because the embedded
server's data goes when it stops, and the demo ends with a query on a table: ``customers`` synced as Iceberg
tables in that local lake (``tables sync``, the embedded catalog; docs/tables.md) and ``customers_latest``
read back with pyiceberg. Airflow's and Spark's output goes to ``<output>/demo.log``; on failure its
tail is shown and the exit status is 1.

``standalone`` runs ``airflow standalone`` on the same kind of stack, prints the URL and login, and keeps
everything (the embedded S3 server too) running until Ctrl-C, then stops each Airflow component cleanly.
With ``--postgres`` its metadata database is PostgreSQL, as in production, on a throwaway server on
127.0.0.1 (``orchestration.metadata_db``: Debian's binaries), removed when it stops.

``lake`` builds the demo lake (with the offsets pinned at the last two midnights) into the lake a URI names
(``s3://bucket/prefix`` with the standard AWS settings, or a local path), unless it already has a committed
manifest: the docker-compose stack's one-shot ``demo-lake`` service.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from kafka_segments.cli.demo_cmd import build_lake  # `kafka-segments demo --lake`: the docker-compose lake
from kafka_segments.demo import (
    DEMO_BUCKET,
    DEMO_PREFIX,
    MINUTE_MS,
    DemoLake,
    EmbeddedS3,
    build_demo_lake,
    embedded_s3_server,
    pin_demo_history,
)
from kafka_segments.errors import KafkaSegmentsError
from kafka_segments.pipeline.report import render_report
from kafka_segments.storage import LocalStore, ObjectStore, S3Store
from kafka_segments.timefmt import text_time
from orchestration.demo_stack import (
    MAINTENANCE_DAG_ID,
    Component,
    DemoStackError,
    StackSettings,
    airflow_environment,
    free_port,
    fresh_output_dir,
    log_tail,
    run_step,
    wait_until,
)
from orchestration.metadata_db import PostgresError, running_postgres
from orchestration.rest_api import api_healthy
from orchestration.shell_env import stack_exports, stack_unsets, standalone_banner, write_env_script
from orchestration.task_progress import TaskProgress

PROJECT = Path(__file__).resolve().parents[1]
RUNS_PREFIX = "_kafka_segments/runs/"
REPORT_SUFFIX = "/report.json"
LOG_NAME = "demo.log"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="run the maintenance DAG twice on the demo lake")
    demo.add_argument("--output", type=Path, default=PROJECT / "demo-output" / "demo")
    standalone = commands.add_parser("standalone", help="airflow standalone on the demo lake")
    standalone.add_argument("--output", type=Path, default=PROJECT / "demo-output" / "standalone")
    standalone.add_argument("--port", type=int, default=8080)
    standalone.add_argument(
        "--postgres",
        action="store_true",
        help="the metadata database on a throwaway PostgreSQL server (as production) instead of SQLite",
    )
    lake = commands.add_parser("lake", help="build the demo lake into a lake URI (once)")
    lake.add_argument("--lake", required=True, help="s3://bucket/prefix or a local path")
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            return run_demo(args.output.resolve())
        if args.command == "lake":
            return build_lake(args.lake)
        return run_standalone(args.output.resolve(), port=args.port, postgres=args.postgres)
    except (DemoStackError, PostgresError) as exc:
        say(f"FAILED: {exc}")
        if exc.log is not None:
            say(f"---- last lines of {exc.log} ----\n{log_tail(exc.log).rstrip()}\n----")
        return 1
    except KafkaSegmentsError as exc:  # the lake could not be built or read
        say(f"FAILED: {exc}")
        return 1
    except KeyboardInterrupt:
        say("interrupted")
        return 130


def say(message: str) -> None:
    print(message, flush=True)


def minute_now_ms() -> int:
    return int(time.time() * 1000) // MINUTE_MS * MINUTE_MS


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat()


# ------------------------------------------------------------------------------------------------- the lake


@contextmanager
def demo_lake_on_s3(*, now_ms: int, history: bool) -> Iterator[tuple[EmbeddedS3, S3Store, DemoLake]]:
    """The embedded S3 server with the demo lake built and committed (version 1) in it."""
    with embedded_s3_server() as s3:
        s3.client().create_bucket(Bucket=DEMO_BUCKET)
        store = s3.store(DEMO_BUCKET, DEMO_PREFIX)
        lake = build_demo_lake(store, now_ms=now_ms)
        if history:
            pin_demo_history(store, now_ms=now_ms)
        say(f"embedded S3 server on {s3.endpoint_url}")
        say(
            f"demo lake s3://{DEMO_BUCKET}/{DEMO_PREFIX} built for now={text_time(now_ms)}: "
            f"{lake.segments} segments ({lake.objects} objects, {lake.bytes} bytes): customers (compacted), "
            "clickstream (consumed retention) and __consumer_offsets (groups billing, analytics, audit); "
            f"committed as version {lake.committed_version}"
        )
        yield s3, store, lake


def settings_for(
    output: Path, s3: EmbeddedS3, *, port: int = 8080, database_url: str | None = None, **extra: str
) -> StackSettings:
    return StackSettings(
        project=PROJECT,
        airflow_home=output / "airflow-home",
        lake_uri=f"s3://{DEMO_BUCKET}/{DEMO_PREFIX}",
        s3_endpoint=s3.endpoint_url,
        config=PROJECT / "config" / "demo.yaml",
        offsets_source="lake",
        api_port=port,
        database_url=database_url,
        extra=extra,
    )


def report_keys(store: ObjectStore) -> set[str]:
    return {meta.key for meta in store.list(RUNS_PREFIX) if meta.key.endswith(REPORT_SUFFIX)}


def copy_lake(source: ObjectStore, target: Path) -> LocalStore:
    """Copy every object of the lake to a local folder (a lake of its own: ``kafka-segments describe``)."""
    target.mkdir()
    local = LocalStore(str(target))
    for meta in source.list():
        local.put(meta.key, source.get(meta.key))
    return local


# ---------------------------------------------------------------------------------------------------- demo


def run_demo(output: Path) -> int:
    started = time.monotonic()
    fresh_output_dir(output)
    log = output / LOG_NAME
    now_ms = minute_now_ms()
    with demo_lake_on_s3(now_ms=now_ms, history=False) as (s3, store, _lake):
        env = airflow_environment(settings_for(output, s3))
        step_started = time.monotonic()
        run_step("airflow db migrate", ["airflow", "db", "migrate"], env=env, log=log)
        say(f"Airflow metadata database (SQLite) ready in {time.monotonic() - step_started:.1f} s")
        first = dags_test(store, env, log, logical_ms=now_ms, label="run 1")
        later_ms = max(now_ms + 1000, int(time.time()) * 1000)  # a logical date of its own, not in the future
        second = dags_test(store, env, log, logical_ms=later_ms, label="run 2")
        local = copy_lake(store, output / "lake")
    problems = check_outcomes(first, second)
    query_table(local)
    finish(output, local, first, problems, seconds=time.monotonic() - started)
    return 1 if problems else 0


def dags_test(
    store: ObjectStore, env: dict[str, str], log: Path, *, logical_ms: int, label: str
) -> dict[str, Any]:
    """One manual run of the maintenance DAG (committing); returns its report read from the lake."""
    before = report_keys(store)
    args = [
        "airflow",
        "dags",
        "test",
        MAINTENANCE_DAG_ID,
        iso(logical_ms),
        "-c",
        json.dumps({"dry_run": False}),
    ]
    say(f"{label}: {' '.join(args[:5])} -c '{args[6]}' (each task as it starts and ends)")
    started = time.monotonic()
    run_step(f"{label} (airflow dags test)", args, env=env, log=log, on_line=progress_printer())
    new = sorted(report_keys(store) - before)
    if len(new) != 1:
        raise DemoStackError(
            f"expected one new run report in the lake, found {new or 'none'}", step=label, log=log
        )
    report: dict[str, Any] = json.loads(store.get(new[0]))
    say(f"\n== {label}: {report.get('outcome')} ({time.monotonic() - started:.1f} s) ==")
    say(render_report(report).rstrip() + "\n")
    return report


def progress_printer() -> Callable[[str], None]:
    """Prints a line as each task of an ``airflow dags test`` starts and ends (its output goes to the log)."""
    progress = TaskProgress()

    def show(line: str) -> None:
        message = progress.line(line)
        if message is not None:
            say(message)

    return show


def check_outcomes(first: dict[str, Any], second: dict[str, Any]) -> list[str]:
    """What the demo promises: the first run commits deletions, the second has nothing left to do."""
    problems = []
    deleted = first["plan"]["totals"]["segments_deleted"]
    if first.get("outcome") != "committed" or deleted == 0:
        problems.append(f"run 1: expected a commit that deletes segments, got {first.get('outcome')!r}")
    if second.get("outcome") != "nothing to change" or second["plan"]["totals"]["segments_deleted"]:
        problems.append(f"run 2: expected 'nothing to change', got {second.get('outcome')!r}")
    return problems


def query_table(lake: LocalStore) -> None:
    """The demo's last step: ``customers`` as Iceberg tables in the local lake (its ``_latest`` table too:
    the topic is compacted), then a pyiceberg scan of ``customers_latest``: one row per key."""
    from kafka_segments.config import load_config
    from kafka_segments.tables import CatalogSettings, open_catalog, sync_tables

    synced = sync_tables(
        lake, topics=["customers"], config=load_config(str(PROJECT / "config" / "demo.yaml"))
    )
    say("\n== tables sync --topics customers (Iceberg, the embedded catalog in the lake) ==")
    say("\n".join(synced.lines()))
    table = open_catalog(lake, CatalogSettings()).load_table(("kafka_segments", "customers_latest"))
    rows = table.scan(selected_fields=("partition", "offset", "key", "value")).to_arrow()
    rows = rows.sort_by([("partition", "ascending"), ("offset", "ascending")])
    say(f"\n== query: customers_latest.scan().to_arrow(): {rows.num_rows} rows, one per key ==")
    for row in rows.to_pylist()[:8]:
        key, value = (row[name].decode(errors="replace") for name in ("key", "value"))
        say(f"customers-{row['partition']} offset {row['offset']}: {key} = {value}")
    if rows.num_rows > 8:
        say(f"… and {rows.num_rows - 8} more")


def finish(
    output: Path, local: LocalStore, first: dict[str, Any], problems: list[str], *, seconds: float
) -> None:
    totals = first["plan"]["totals"]
    reasons = ", ".join(f"{reason} {item['segments']}" for reason, item in totals["by_reason"].items())
    status = "OK" if not problems else "PROBLEMS: " + "; ".join(problems)
    say(
        f"demo {status} in {seconds:.0f} s: run 1 deleted {totals['segments_deleted']} segment(s) "
        f"({reasons}) and committed version {first.get('committed_version')}; run 2 found nothing left to do."
    )
    lake = output / "lake"
    say(f"  report:    {lake / first['report_key']}")
    docs = (first.get("validation") or {}).get("data_docs")
    say(f"  Data Docs: {(lake / docs).as_uri() if docs else '(none: the run has no validation result)'}")
    page = (first.get("validation") or {}).get("page")
    if page:
        say(f"  offline:   {(lake / page).as_uri()}   (the validation results without a network)")
    say(f"  the lake:  {lake}   (.venv/bin/kafka-segments describe --lake {lake})")
    say(f"  log:       {output / LOG_NAME}   (Airflow and Spark output)")


# ---------------------------------------------------------------------------------------------- standalone


class _StopRequestedError(Exception):
    """SIGTERM: stop as on Ctrl-C."""


def _on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    raise _StopRequestedError


@contextmanager
def metadata_database(log: Path, *, postgres: bool) -> Iterator[str | None]:
    """The standalone's metadata database: ``None`` (SQLite in ``AIRFLOW_HOME``), or with ``postgres`` the
    URL of database ``airflow`` on a throwaway PostgreSQL server, stopped and removed afterwards."""
    if not postgres:
        yield None
        return
    with running_postgres(port=free_port(), log=log) as server:
        url = server.create_database("airflow")
        say(f"PostgreSQL on 127.0.0.1:{server.port} (data in {server.folder}, removed when Airflow stops)")
        yield url


def run_standalone(output: Path, *, port: int, postgres: bool = False) -> int:
    fresh_output_dir(output)
    log = output / "airflow.log"
    signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with SIGINT ignored
    now_ms = minute_now_ms()
    with (
        demo_lake_on_s3(now_ms=now_ms, history=True) as (s3, _store, _lake),
        metadata_database(log, postgres=postgres) as database_url,
    ):
        settings = settings_for(
            output,
            s3,
            port=port,
            database_url=database_url,
            AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS="False",
        )
        env = airflow_environment(settings)
        run_step("airflow db migrate", ["airflow", "db", "migrate"], env=env, log=log)
        airflow = Component(
            "airflow standalone", ["airflow", "standalone"], env=env, log=log, children_first=True
        )
        try:
            base_url = f"http://127.0.0.1:{port}"
            say(f"starting airflow standalone (30 s to a minute); its output goes to {log}")
            wait_until(
                "airflow standalone health",
                lambda: api_healthy(base_url),
                timeout_s=300,
                alive=airflow.running,
            )
            exports = stack_exports(env, base=os.environ)
            env_script = write_env_script(output, exports, unset=stack_unsets(env, base=os.environ))
            say(
                standalone_banner(
                    settings, port=port, env_script=env_script, login=login(settings.airflow_home)
                )
            )
            while airflow.running():
                time.sleep(1)
            raise DemoStackError("airflow standalone exited", step="airflow standalone", log=log)
        except (KeyboardInterrupt, _StopRequestedError):
            say("\nstopping Airflow ...")
            return 0
        finally:
            airflow.stop()
            say("Airflow stopped; stopping the embedded S3 server")


def login(airflow_home: Path) -> str:
    """The admin login ``airflow standalone`` generated."""
    generated = airflow_home / "simple_auth_manager_passwords.json.generated"
    try:
        passwords = json.loads(generated.read_text())
    except (OSError, ValueError):
        return f"see {generated}"
    return ", ".join(f"{user} / {password}" for user, password in passwords.items())


if __name__ == "__main__":
    sys.exit(main())
