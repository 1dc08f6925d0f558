"""Lineage of the committing tasks (docs/airflow.md, "Lineage"): a commit attaches an event for the lake's
Asset (``orchestration.assets``) and one for each topic it changed, through the aliases the task declares as
outlets. Airflow records them as asset events; the OpenLineage provider, when a transport is configured,
reports the same assets as the task's output datasets (a TaskFlow task has no extractor, so the provider
takes its outlets and the events attached to them at run time), named by OpenLineage's naming for S3:
namespace ``s3://bucket``, name the lake's prefix, and ``<prefix>/<topic>`` for a topic.

Imported at DAG parse time (airflow and the standard library only)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from airflow.sdk import Asset, AssetAlias

from orchestration.assets import ASSET_GROUP, lake_asset_uri, lakes_alias, record_lake_event

if TYPE_CHECKING:
    from kafka_segments.state.manifest import Manifest

TOPICS_ALIAS = "kafka_segments_topics"


def topics_alias() -> AssetAlias:
    """The alias every changed topic's event is attached to."""
    return AssetAlias(name=TOPICS_ALIAS, group=ASSET_GROUP)


def committing_outlets() -> list[AssetAlias]:
    """The outlets of a task that may commit: the lakes' alias and the topics' alias."""
    return [lakes_alias(), topics_alias()]


def topic_asset(lake: str, topic: str) -> Asset:
    """The Asset of ``topic`` in the lake ``lake``: the lake's URI and the topic, as the lake lays out its
    partitions (``<prefix>/<topic>-<partition>/``)."""
    uri = f"{lake_asset_uri(lake).rstrip('/')}/{topic}"
    return Asset(name=uri, uri=uri, group=ASSET_GROUP)


def changed_topics(manifest: Manifest) -> list[str]:
    """The topics with a partition the manifest's own run changed (``PartitionState.run_id``), sorted."""
    return sorted(
        {state.topic_partition.topic for state in manifest.partitions if state.run_id == manifest.run_id}
    )


def record_commit_lineage(
    outlet_events: Any, lake: str, topics: Iterable[str], *, extra: Mapping[str, Any]
) -> list[Asset]:
    """Attach the events of a commit: the lake's (``extra`` says what was committed) and each changed
    topic's (the same ``extra``). Call from a task whose outlets are ``committing_outlets()``; returns the
    Assets, the lake's first."""
    assets = [record_lake_event(outlet_events, lake, extra=extra)]
    for topic in topics:
        asset = topic_asset(lake, topic)
        outlet_events[topics_alias()].add(asset, extra=dict(extra))
        assets.append(asset)
    return assets


def committed_topics(store: Any, version: int) -> list[str]:
    """``changed_topics`` of the committed ``version`` of the lake in ``store``."""
    from kafka_segments.lake.reader import resolve_manifest

    return changed_topics(resolve_manifest(store, version))
