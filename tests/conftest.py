"""Shared test configuration. Fixtures live next to the tests that use them; what tests of several folders
share is a module here: ``kit`` (clock, segments), ``cli_harness`` (the command line), ``s3_fixtures``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from file_durations import FileDurations, read_slow_files, slowest_first, write_slow_files
from hypothesis import HealthCheck, settings
from kafka_segments.demo import EmbeddedS3
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.storage.local_etags import ETAG_CACHE_ENV
from kit import FakeClock
from ministack_fixtures import ministack_server_fixture
from s3_fixtures import PREFIXES, delete_objects_under, new_s3_store, s3_server_fixture
from spark_startup import seed_archive_kernels, user_kernel_cache

settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(scope="session")
def kafka_segments_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``$KAFKA_SEGMENTS_CACHE_DIR`` of the tests that run Spark jobs: the library archive and the kernels
    numba compiles for it, built once for the whole session (with xdist, in the folder the workers share:
    compiling the kernels in a Spark worker takes tens of seconds on a loaded machine), never in the user's
    cache folder. Both are written to a temporary name and renamed, so workers may share them. The kernels
    the user's cache already holds for the archive are copied in first (``spark_startup``)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "kafka-segments-cache"
    folder.mkdir(exist_ok=True)
    seed_archive_kernels(folder, user_cache=user_kernel_cache())
    return folder


@pytest.fixture(scope="session", autouse=True)
def etag_records(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The local lakes' persisted etags (``storage.local_etags``) in the session's temporary folder, never in
    the user's cache folder (the processes tests start inherit it); ``KAFKA_SEGMENTS_ETAG_CACHE`` set
    before the session (``off``, to run the suite without them) is kept."""
    if os.environ.get(ETAG_CACHE_ENV) is not None:
        yield
        return
    os.environ[ETAG_CACHE_ENV] = str(tmp_path_factory.getbasetemp() / "etag-records")
    try:
        yield
    finally:
        os.environ.pop(ETAG_CACHE_ENV, None)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[EmbeddedS3]:
    """moto's S3 server on loopback for the whole session, bucket ``s3_fixtures.BUCKET`` created."""
    yield from s3_server_fixture()


@pytest.fixture(scope="module", autouse=True)
def s3_objects_of_ended_files() -> None:
    """Before each test file, delete the objects of the test files that ended (``s3_fixtures``: moto's
    listings scan the whole bucket)."""
    delete_objects_under(PREFIXES.of_ended_file())


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[object]) -> Iterator[object]:
    """The S3 prefixes a session-scoped fixture makes live for the session (``s3_fixtures.PREFIXES``)."""
    if fixturedef.scope != "session":
        return (yield)
    with PREFIXES.for_the_session():
        return (yield)


@pytest.fixture(scope="session")
def ministack_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """ministack's S3 (a second implementation, not moto) on loopback for the session: its endpoint; skips
    when ``.venv-ministack`` is missing."""
    yield from ministack_server_fixture(tmp_path_factory.mktemp("ministack"))


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    """A fresh lake on a local directory and on S3 (moto's server over real HTTP on loopback)."""
    if request.param == "local":
        return LocalStore(tmp_path / "lake")
    return new_s3_store(request.getfixturevalue("s3_server"))


@pytest.fixture
def local_store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "lake")


@pytest.fixture
def clock() -> FakeClock:
    """A settable wall clock."""
    return FakeClock()


_FILE_DURATIONS = FileDurations()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-slow-files",
        action="store_true",
        help="rewrite tests/slow_files.json with the seconds of this run's slow files (run the whole suite "
        "with workers, as scripts/test does)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The recorded slow files first, slowest first (``file_durations``): with ``--dist loadfile`` workers
    take files in collection order."""
    items[:] = slowest_first(items, read_slow_files())


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _FILE_DURATIONS.add(report)


def pytest_sessionfinish(session: pytest.Session) -> None:
    if session.config.getoption("record_slow_files") and not hasattr(session.config, "workerinput"):
        write_slow_files(_FILE_DURATIONS.slow_files(read_slow_files()))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if config.getoption("durations", None) is None or not _FILE_DURATIONS.seconds:
        return
    terminalreporter.write_sep("=", f"slowest {len(_FILE_DURATIONS.lines()) - 1} files (seconds per file)")
    for line in _FILE_DURATIONS.lines():
        terminalreporter.write_line(line)
