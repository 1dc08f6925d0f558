"""The lakes as Airflow Assets, so downstream DAGs can schedule on a lake's commits (docs/airflow.md,
"Assets").

The lake is a Variable, known only when a task runs, so committing tasks declare the alias
``AssetAlias("kafka_segments_lakes")`` and attach an event for the lake's own Asset at run time. Imported at
DAG parse time (airflow and the standard library only)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from airflow.sdk import Asset, AssetAlias

LAKES_ALIAS = "kafka_segments_lakes"
ASSET_GROUP = "kafka-segments"
_SCHEMES = ("s3://", "file://")


def lakes_alias() -> AssetAlias:
    """The alias every committed lake's event is attached to."""
    return AssetAlias(name=LAKES_ALIAS, group=ASSET_GROUP)


def lake_asset_uri(lake: str) -> str:
    """The Asset URI of a lake URI: ``s3://bucket/prefix`` as it is, a local path as ``file:///abs/path``
    (Airflow strips trailing slashes)."""
    if lake.startswith(_SCHEMES):
        return lake
    return "file://" + os.path.abspath(lake)


def lake_asset(lake: str) -> Asset:
    """The Asset of the lake ``lake`` (named by its URI)."""
    uri = lake_asset_uri(lake)
    return Asset(name=uri, uri=uri, group=ASSET_GROUP)


def record_lake_event(outlet_events: Any, lake: str, *, extra: Mapping[str, Any]) -> Asset:
    """Attach an event for the lake's Asset to the alias (call from a task whose ``outlets`` hold
    ``lakes_alias()``); ``extra`` says what was committed. Returns the Asset."""
    asset = lake_asset(lake)
    outlet_events[lakes_alias()].add(asset, extra=dict(extra))
    return asset
