"""Great Expectations, called from code: the only module that imports ``great_expectations`` (GX 1.x, checked
with 1.24.1): an ephemeral context per validation (so its Data Docs are that run's), one asset, suite and
validation definition per suite, then the Data Docs site built into a local folder.

GX is imported once per process, inside ``_gx`` (never at module import), with the warnings its import
triggers silenced and without its Spark and SQL integrations (``gx_import``: the validation runs on GX's
pandas engine). Progress bars are off, and GX's loggers log at ``WARNING`` and above: at ``INFO`` they
wrote some 200 lines per validation into every Airflow task log, burying the report."""

from __future__ import annotations

import datetime
import logging
import math
import warnings
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from segment_quality.frames import to_dataframe
from segment_quality.gx_import import engines_hidden
from segment_quality.results import ExpectationOutcome, SuiteResult
from segment_quality.spec import Invariant, SuiteSpec, When, conditions_of
from segment_quality.staged.frames import QualityFrames
from segment_quality.suites import FRAME_COLUMNS

DATASOURCE = "staged-run"
SITE = "run_site"
PARTIAL_ROWS = 5
"""Failing rows kept per expectation in ``validation.json`` (Data Docs show up to GX's default)."""
RESULT_KEYS = ("element_count", "unexpected_count", "unexpected_percent", "missing_count", "observed_value")
GX_LOGGER = "great_expectations"
GX_LOG_LEVEL = logging.WARNING


@cache
def _gx() -> SimpleNamespace:
    """The GX modules (imported once per process), with GX's loggers quiet below ``GX_LOG_LEVEL``."""
    logging.getLogger(GX_LOGGER).setLevel(GX_LOG_LEVEL)  # before the import: it logs too
    with warnings.catch_warnings(), engines_hidden():
        warnings.filterwarnings(
            "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
        )
        warnings.filterwarnings(  # GX's file_path_data_connector imports sre_constants/sre_parse
            "ignore", message=r"module 'sre_\w+' is deprecated", category=DeprecationWarning
        )
        import great_expectations as gx
        import great_expectations.expectations as gxe
        from great_expectations.core.run_identifier import RunIdentifier
        from great_expectations.data_context.types.base import (
            DataContextConfig,
            InMemoryStoreBackendDefaults,
            ProgressBarsConfig,
        )
        from great_expectations.expectations.row_conditions import AndCondition, Column
    return SimpleNamespace(
        gx=gx,
        gxe=gxe,
        RunIdentifier=RunIdentifier,
        DataContextConfig=DataContextConfig,
        InMemoryStoreBackendDefaults=InMemoryStoreBackendDefaults,
        ProgressBarsConfig=ProgressBarsConfig,
        Column=Column,
        AndCondition=AndCondition,
    )


def load_gx() -> None:
    """Imports GX as a validation does (``orchestration.task_preload`` calls it ahead of the tasks)."""
    _gx()


def _context() -> Any:
    """A fresh ephemeral context: in-memory stores, no default Data Docs site, no progress bars."""
    mods = _gx()
    config = mods.DataContextConfig(
        store_backend_defaults=mods.InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        progress_bars=mods.ProgressBarsConfig(globally=False),
        analytics_enabled=False,
    )
    return mods.gx.get_context(mode="ephemeral", project_config=config)


def run_suites(
    frames: QualityFrames,
    specs: Sequence[SuiteSpec],
    *,
    run_name: str,
    docs_dir: Path | None,
    detail: bool = True,
) -> tuple[SuiteResult, ...]:
    """Run every suite over its frame; build the Data Docs site into ``docs_dir`` (when given).

    Args:
        detail: GX's ``SUMMARY`` results (counts and the failing rows, named by the suite's index columns);
            ``False``: ``BOOLEAN_ONLY`` (verdicts only, about twice as fast; for bulk checks).
    """
    mods = _gx()
    context = _context()
    source = context.data_sources.add_pandas(DATASOURCE)
    # The time is given: without it GX parses the run name as a date, and some run ids (a hex suffix
    # read as a timezone offset of more than a day) give a time it cannot store.
    run_id = mods.RunIdentifier(run_name=run_name, run_time=datetime.datetime.now(tz=datetime.UTC))
    results = []
    for spec in specs:
        frame = to_dataframe(frames.table(spec.frame), FRAME_COLUMNS[spec.frame])
        definition = _validation_definition(context, source, spec)
        result_format: dict[str, Any] = {"result_format": "BOOLEAN_ONLY"}
        if detail:
            result_format = {
                "result_format": "SUMMARY",
                "unexpected_index_column_names": list(spec.index_columns),
            }
        validated = definition.run(
            batch_parameters={"dataframe": frame}, result_format=result_format, run_id=run_id
        )
        results.append(_suite_result(spec, validated, rows=len(frame)))
    if docs_dir is not None:
        build_docs(context, docs_dir)
    return tuple(results)


def _validation_definition(context: Any, source: Any, spec: SuiteSpec) -> Any:
    mods = _gx()
    batch = source.add_dataframe_asset(spec.name).add_batch_definition_whole_dataframe(spec.frame)
    # Filled before it is added: an added suite writes itself to the store on every add_expectation.
    suite = mods.gx.ExpectationSuite(name=spec.name)
    for invariant in spec.invariants:
        suite.add_expectation(expectation(invariant))
    suite = context.suites.add(suite)
    return context.validation_definitions.add(
        mods.gx.ValidationDefinition(name=spec.name, data=batch, suite=suite)
    )


def expectation(invariant: Invariant) -> Any:
    """The GX expectation of ``invariant`` (its name in ``meta["invariant"]``, its rule as description)."""
    mods = _gx()
    kwargs: dict[str, Any] = dict(invariant.kwargs)
    conditions = [_condition(when) for when in conditions_of(invariant.when)]
    if conditions:
        kwargs["row_condition"] = (
            conditions[0] if len(conditions) == 1 else mods.AndCondition(conditions=conditions)
        )
    cls = getattr(mods.gxe, invariant.expectation)
    return cls(
        **kwargs, meta={"invariant": invariant.name}, description=f"{invariant.name}: {invariant.rule}"
    )


def _condition(when: When) -> Any:
    column = _gx().Column(when.column)
    if when.op == "null":
        return column.is_null()
    if when.op == "==":
        return column == when.value
    if when.op == "!=":
        return column != when.value
    raise ValueError(f"unknown row condition operator {when.op!r}")


def _suite_result(spec: SuiteSpec, validated: Any, *, rows: int) -> SuiteResult:
    rules = {invariant.name: invariant.rule for invariant in spec.invariants}
    outcomes = []
    for item in validated.results:
        config = item.expectation_config
        name = str((config.meta or {}).get("invariant", config.type))
        kwargs = {k: v for k, v in config.to_json_dict()["kwargs"].items() if k != "batch_id"}
        outcomes.append(
            ExpectationOutcome(
                invariant=name,
                type=str(config.type),
                kwargs=plain(kwargs),
                success=bool(item.success),
                result=small_result(item.result, item.exception_info),
                rule=rules.get(name, ""),
            )
        )
    order = {invariant.name: index for index, invariant in enumerate(spec.invariants)}
    outcomes.sort(key=lambda outcome: order.get(outcome.invariant, len(order)))
    return SuiteResult(spec.name, bool(validated.success), tuple(outcomes), rows)


def small_result(result: Mapping[str, Any], exception_info: Any) -> dict[str, Any]:
    """Counts, the observed value and up to ``PARTIAL_ROWS`` failing rows; the exception if one was raised."""
    small = {key: plain(result[key]) for key in RESULT_KEYS if key in result}
    rows = result.get("partial_unexpected_index_list")
    if rows:
        small["unexpected_rows"] = plain(list(rows)[:PARTIAL_ROWS])
    message = _exception_message(exception_info)
    if message:
        small["exception"] = message
    return small


def _exception_message(exception_info: Any) -> str | None:
    """GX reports a raised exception either directly or per metric (a dict of such dicts)."""
    if not isinstance(exception_info, Mapping):
        return None
    if exception_info.get("raised_exception"):
        return str(exception_info.get("exception_message"))
    for value in exception_info.values():
        if isinstance(value, Mapping) and value.get("raised_exception"):
            return str(value.get("exception_message"))
    return None


def plain(value: Any) -> Any:  # noqa: PLR0911 - one return per value type GX results hold
    """``value`` as plain JSON data (numpy scalars → Python, pandas ``NA``/NaN → ``None``, tuples → lists)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    item = getattr(value, "item", None)
    if callable(item):
        return plain(item())
    import pandas as pd

    if value is pd.NA:
        return None
    return str(value)


def build_docs(context: Any, docs_dir: Path) -> Path:
    """Build the Data Docs site of the context's stored results into ``docs_dir``; return its index."""
    site_config = {
        "class_name": "SiteBuilder",
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs_dir)},
    }
    context.add_data_docs_site(site_name=SITE, site_config=site_config)
    context.build_data_docs(site_names=[SITE])
    return docs_dir / "index.html"
