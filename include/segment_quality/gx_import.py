"""GX's import without the engines a validation never uses.

``import great_expectations`` tries to import every optional integration it supports (its
``great_expectations.compatibility`` modules: ``try: import pyspark`` / ``except ImportError:`` a stand-in),
and when they are installed (this project installs PySpark and, with Airflow, SQLAlchemy) it loads them and
builds its Spark and SQL datasource classes on them: over a second of CPU per validation process. Our
validation runs on GX's pandas engine only (``data_sources.add_pandas``), so while GX is imported those
packages are marked as absent the way Python's import system documents: a ``None`` entry in
``sys.modules`` makes ``import name`` raise ``ImportError`` (https://docs.python.org/3/reference/import.html,
"The module cache"); GX then takes the same path it takes when the extra is not installed (``pip install
great_expectations`` without ``[spark]``/``[sql]``) and its pandas engine, results and Data Docs are those of
that install.

Safe for the rest of the process: a package already imported is left alone (GX uses it as before), and the
``None`` entries are removed right after GX's import, so a later ``import pyspark`` in the same process (a
Spark job, a test) works as usual."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

UNUSED_ENGINES = ("pyspark", "pyspark.sql.connect", "py4j", "sqlalchemy", "psycopg2", "pyathena")
"""Packages of GX's Spark and SQL integrations (and their database drivers). ``pyspark.sql.connect`` for a
process that imported PySpark before GX (a Spark job's driver, a test worker): GX would import Spark
Connect, whose import check (``pyspark.sql.connect.utils.check_dependencies``) calls ``sys.exit(0)`` when the
main module has no file (``python -c``, an xdist worker) and pandas is newer than PySpark supports."""


@contextmanager
def engines_hidden(names: tuple[str, ...] = UNUSED_ENGINES) -> Iterator[tuple[str, ...]]:
    """Within the block, ``import <name>`` of each not yet imported package in ``names`` raises
    ``ImportError``; yields the names hidden. Afterwards they are importable again."""
    hidden = tuple(name for name in names if name not in sys.modules)
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # documented: "import name" raises ImportError
    try:
        yield hidden
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
