"""Real Airflow for the DAG tests: one SQLite metadata database per test session, in a temporary
``AIRFLOW_HOME``, with the repository's ``dags/`` as the DAG folder.

Airflow reads its configuration when it is first imported, so the environment is set here, at import time
of this conftest (before any test module of this folder imports airflow). ``airflow_db`` resets the
database once per session (``airflow db reset``); every test in this folder uses it. Right after the reset
it is saved as ``migrated_database``, which the tests' Airflow stacks copy (``migrated_db``).

Airflow's metrics go to StatsD as a deployment with ``[metrics] statsd_on`` sends them: to the session's
loopback listener (``statsd``), whose port must be in the environment before Airflow reads it. The
OpenLineage provider writes its events, one JSON document a line, to ``openlineage_events`` (its file
transport), from a thread of the task's process rather than a forked child.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from migrated_db import copy_database
from statsd_listener import StatsdListener

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "dags"

_HOME = tempfile.mkdtemp(prefix="kafka-segments-airflow-")
_MIGRATED = Path(_HOME) / "migrated-template.db"
os.environ["AIRFLOW_HOME"] = _HOME
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
os.environ["AIRFLOW__CORE__UNIT_TEST_MODE"] = "True"
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(DAGS)
os.environ.pop("KAFKA_SEGMENTS_SCHEDULE", None)

_STATSD = StatsdListener()
os.environ["AIRFLOW__METRICS__STATSD_ON"] = "True"
os.environ["AIRFLOW__METRICS__STATSD_HOST"] = "127.0.0.1"
os.environ["AIRFLOW__METRICS__STATSD_PORT"] = str(_STATSD.port)

_OPENLINEAGE_EVENTS = Path(_HOME) / "openlineage-events.jsonl"
os.environ["AIRFLOW__OPENLINEAGE__TRANSPORT"] = json.dumps(
    {"type": "file", "log_file_path": str(_OPENLINEAGE_EVENTS), "append": True}
)
os.environ["AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD"] = "True"


@pytest.fixture(scope="session", autouse=True)
def airflow_db() -> Path:
    """A fresh metadata database for the session; returns ``AIRFLOW_HOME``."""
    from airflow import settings
    from airflow.utils import db

    db.resetdb()
    copy_database(Path(str(settings.get_engine().url.database)), _MIGRATED)
    return Path(_HOME)


@pytest.fixture(scope="session")
def migrated_database(airflow_db: Path) -> Path:
    """An empty metadata database, migrated (the session's, saved right after its reset): what a test stack
    copies into its ``AIRFLOW_HOME`` (``migrated_db.install_migrated_database``) instead of running
    ``airflow db migrate``."""
    return _MIGRATED


@pytest.fixture(scope="session")
def statsd() -> Iterator[StatsdListener]:
    """The StatsD listener Airflow's metrics are sent to (``[metrics] statsd_port``) for the session."""
    yield _STATSD
    _STATSD.close()


@pytest.fixture(scope="session")
def openlineage_events() -> Path:
    """The file the OpenLineage provider appends its events to (``[openlineage] transport``)."""
    return _OPENLINEAGE_EVENTS
