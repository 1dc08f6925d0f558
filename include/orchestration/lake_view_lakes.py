"""Which lakes the lake view shows (docs/lake-view.md, "Several lakes"), from the deployment's Variables:

* ``kafka_segments_lake`` (with ``kafka_segments_config``): the lake the maintenance and delete-records DAGs
  maintain, named ``default`` on the view;
* ``kafka_segments_lakes`` (optional): the deployment's other lakes, a JSON object from a name to the lake's
  URI, or to ``{"lake": URI, "config": path}`` (the configuration gives the view's next-run columns).

A URI listed twice is shown once, under its first name. No Airflow import here: the app reads the Variables
and hands their texts to ``configured_lakes``."""

from __future__ import annotations

import json
from dataclasses import dataclass

from kafka_segments.errors import LocatedError
from kafka_segments.nesting import check_json_text

DEFAULT_LAKE_NAME = "default"
LAKES_VARIABLE = "kafka_segments_lakes"


class LakeListError(LocatedError):
    """The ``kafka_segments_lakes`` Variable is not a JSON object of lakes (``location`` names it)."""


@dataclass(frozen=True, slots=True)
class ConfiguredLake:
    name: str
    lake: str
    config_path: str | None = None


def configured_lakes(lake: str | None, config_path: str | None, lakes: str | None) -> list[ConfiguredLake]:
    """The lakes to show: ``lake`` (the DAGs' lake, with ``config_path``) first, then those of the
    ``kafka_segments_lakes`` text ``lakes`` in its order. Empty texts count as unset.

    Raises:
        LakeListError: ``lakes`` is not a JSON object of names to URIs or ``{"lake", "config"}`` objects.
    """
    default = _text(lake)
    found = [] if default is None else [ConfiguredLake(DEFAULT_LAKE_NAME, default, _text(config_path))]
    more = _text(lakes)
    if more is not None:
        found += [_entry(name, value) for name, value in _object(more).items()]
    unique: dict[str, ConfiguredLake] = {}
    for entry in found:
        unique.setdefault(entry.lake, entry)
    return list(unique.values())


def _object(text: str) -> dict[str, object]:
    try:
        check_json_text(text)
        document = json.loads(text)
    except ValueError as error:  # not JSON, nested deeper than MAX_NESTING_DEPTH, too many digits
        raise LakeListError(f"not JSON: {error}", location=f"Airflow Variable {LAKES_VARIABLE}") from None
    if not isinstance(document, dict):
        raise LakeListError(
            'must be a JSON object: {"name": "s3://bucket/prefix", ...}',
            location=f"Airflow Variable {LAKES_VARIABLE}",
        )
    return document


def _entry(name: str, value: object) -> ConfiguredLake:
    where = f"Airflow Variable {LAKES_VARIABLE}, lake {name!r}"
    if isinstance(value, str) and _text(value):
        return ConfiguredLake(name, value.strip())
    if isinstance(value, dict) and isinstance(value.get("lake"), str) and _text(value["lake"]):
        config = value.get("config")
        if config is not None and not isinstance(config, str):
            raise LakeListError("config must be a path (a string)", location=where)
        return ConfiguredLake(name, value["lake"].strip(), _text(config))
    raise LakeListError('must be a URI or {"lake": URI, "config": path}', location=where)


def _text(value: str | None) -> str | None:
    text = (value or "").strip()
    return text or None
