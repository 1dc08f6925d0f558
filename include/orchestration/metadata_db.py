"""The demo and test stacks' Airflow metadata database: SQLite in ``AIRFLOW_HOME`` (Airflow's default, with
``orchestration.sqlite_settings``), or PostgreSQL, the database production deployments use, on a throwaway
server this module starts (``./scripts/airflow-standalone --postgres`` and the PostgreSQL test stack).

Facts this encodes (Debian's PostgreSQL 15 packages):

* The binaries (``initdb``, ``pg_ctl``, ``psql``) are in ``/usr/lib/postgresql/<version>/bin``, not on
  ``PATH``; the newest version there is used, else ``initdb`` on ``PATH``.
* PostgreSQL refuses to run as root: a root process runs the server as an unprivileged system user
  (``postgres``, which Debian's package creates, else ``nobody``) through ``runuser``, in a folder of its
  own under the system's temporary folder that this user owns (a test's temporary folder is private to
  root).
* The server listens on 127.0.0.1 only, at a port chosen by the caller, with ``trust`` authentication and
  without ``fsync``: a throwaway server on this machine whose data goes when it stops.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

SQLITE_CONNECT_ARGS = "orchestration.sqlite_settings.CONNECT_ARGS"
DEBIAN_POSTGRES = Path("/usr/lib/postgresql")
SERVER_USERS = ("postgres", "nobody")
"""Who runs the server when this process is root, in order of preference."""
SUPERUSER = "postgres"
"""The database superuser ``initdb`` creates (the stack's Airflow connects as it)."""
STEP_TIMEOUT_S = 120


class PostgresError(Exception):
    """A step of the throwaway PostgreSQL server failed: ``step`` says which, ``log`` where its output is."""

    def __init__(self, reason: str, *, step: str, log: Path | None = None) -> None:
        self.reason = reason
        self.step = step
        self.log = log
        super().__init__(f"PostgreSQL {step}: {reason}" + ("" if log is None else f" (log: {log})"))


def database_settings(url: str | None) -> dict[str, str]:
    """Airflow's ``[database]`` settings of a stack: SQLite in ``AIRFLOW_HOME`` when ``url`` is ``None``,
    else the database ``url`` names (a SQLAlchemy URL)."""
    if url is None:
        return {"AIRFLOW__DATABASE__SQL_ALCHEMY_CONNECT_ARGS": SQLITE_CONNECT_ARGS}
    return {"AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": url}


def postgres_bin() -> Path | None:
    """The folder of PostgreSQL's server binaries (Debian's newest, else ``initdb``'s on ``PATH``)."""
    versions = sorted(
        (path for path in DEBIAN_POSTGRES.glob("*/bin") if (path / "initdb").exists()),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1]
    found = shutil.which("initdb")
    return None if found is None else Path(found).parent


def server_user() -> str | None:
    """The user the server runs as when this process is root (``None``: run as this process's user)."""
    if os.geteuid() != 0:
        return None
    for name in SERVER_USERS:
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    return None


def unavailable_reason() -> str | None:
    """Why no throwaway PostgreSQL server can run here, in one line (``None``: it can)."""
    if postgres_bin() is None:
        return f"PostgreSQL's binaries are not installed (no initdb in {DEBIAN_POSTGRES}/*/bin or on PATH)"
    if os.geteuid() == 0 and server_user() is None:
        users = ", ".join(SERVER_USERS)
        return f"running as root without an unprivileged user to run PostgreSQL as ({users})"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser to start PostgreSQL as an unprivileged user"
    return None


@dataclass(frozen=True, slots=True)
class PostgresServer:
    """A running throwaway server: its binaries, its folder (data, socket, log) and its loopback port."""

    bin_dir: Path
    folder: Path
    port: int

    @property
    def log(self) -> Path:
        return self.folder / "postgres.log"

    def url(self, database: str) -> str:
        """The SQLAlchemy URL of ``database`` for Airflow (psycopg2, as the superuser, no password)."""
        return f"postgresql+psycopg2://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def query(self, statement: str, *, database: str = "postgres") -> list[str]:
        """Run one SQL statement in ``database`` as the superuser (``psql``); returns the rows it printed,
        one line each (columns separated by ``|``).

        Raises:
            PostgresError: it failed.
        """
        args = [str(self.bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER]
        args += ["-d", database, "-v", "ON_ERROR_STOP=1", "-A", "-t", "-c", statement]
        try:
            done = subprocess.run(args, capture_output=True, text=True, timeout=STEP_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PostgresError(str(exc), step="psql") from exc
        if done.returncode != 0:
            raise PostgresError(done.stderr.strip() or f"exited with {done.returncode}", step="psql")
        return done.stdout.splitlines()

    def create_database(self, name: str) -> str:
        """A new, empty database ``name``; returns its URL (``url``).

        Raises:
            PostgresError: it could not be created (it exists, or the server is gone).
        """
        self.query(f'CREATE DATABASE "{name}"')
        return self.url(name)


@contextlib.contextmanager
def running_postgres(*, port: int, log: Path) -> Iterator[PostgresServer]:
    """A new PostgreSQL server on 127.0.0.1:``port`` for the duration of the block (``initdb`` in a new
    temporary folder, ``pg_ctl start``); stopped and its folder removed afterwards. The steps' output is
    appended to ``log``; the server's own log is ``PostgresServer.log``.

    Raises:
        PostgresError: it cannot run here (``unavailable_reason``) or a step failed.
    """
    reason = unavailable_reason()
    bin_dir = postgres_bin()
    if reason is not None or bin_dir is None:
        raise PostgresError(reason or "no binaries", step="start")
    user = server_user()
    folder = Path(tempfile.mkdtemp(prefix="kafka-segments-postgres-"))
    try:
        server = PostgresServer(bin_dir, folder, port)
        data = folder / "data"
        data.mkdir()
        if user is not None:
            entry = pwd.getpwnam(user)
            for path in (folder, data):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        initdb = [str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", SUPERUSER, "--no-sync"]
        _run("initdb", _as(user, [*initdb, "-E", "UTF8", "--locale=C"]), log=log)
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        start = [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(server.log), "-w"]
        _run("start", _as(user, [*start, "start"]), log=log)
        try:
            yield server
        finally:
            stop = [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]
            with contextlib.suppress(PostgresError):
                _run("stop", _as(user, stop), log=log)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _as(user: str | None, args: Sequence[str]) -> list[str]:
    return list(args) if user is None else ["runuser", "-u", user, "--", *args]


def _run(step: str, args: Sequence[str], *, log: Path) -> None:
    """Run one command to completion, its output appended to ``log``.

    Raises:
        PostgresError: it failed, was not found or did not finish in time.
    """
    env = {**os.environ, "LC_ALL": "C"}
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n===== postgres {step}: {' '.join(args)}\n")
        out.flush()
        try:
            done = subprocess.run(
                list(args),
                env=env,
                cwd=tempfile.gettempdir(),  # a folder the server's user may enter
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=STEP_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PostgresError(str(exc), step=step, log=log) from exc
    if done.returncode != 0:
        raise PostgresError(f"exited with {done.returncode}", step=step, log=log)
