"""The run report's ``metrics`` (``kafka_segments.pipeline.metrics``) emitted as gauges through Airflow's
metrics (``airflow.sdk.observability.stats``): StatsD, Datadog or OpenTelemetry, whichever the deployment's
``[metrics]`` section turns on (nothing when none is). Names and tags: docs/metrics.md.

StatsD has no tags, so what a tag says is also in the name: ``kafka_segments.<Kafka name>`` per run,
``kafka_segments.retention.<pass>.<name>`` per pass and ``kafka_segments.log.<topic>.<partition>.<name>`` per
partition (``statsd_prefix``, ``airflow`` by default, in front of each)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from kafka_segments.pipeline.metrics import LOG_CLEANER, LOG_CLEANER_MANAGER, PARTITION_GAUGES, RUN_RETENTION

PREFIX = "kafka_segments"


def metric_gauges(metrics: Mapping[str, Any], *, lake: str) -> Iterator[tuple[str, float, dict[str, str]]]:
    """``(name, value, tags)`` of every gauge of a report's ``metrics``; gauges without a value (the first
    run's ``time-since-last-run-ms``) are left out."""
    cleaner = metrics["log_cleaner"]
    for name in (*LOG_CLEANER, *LOG_CLEANER_MANAGER):
        if cleaner[name] is not None:
            yield f"{PREFIX}.{name}", cleaner[name], {"lake": lake}
    retention = metrics["retention"]
    for name in RUN_RETENTION:
        yield f"{PREFIX}.retention.{name}", retention[name], {"lake": lake}
    for reason, deleted in retention["passes"].items():
        for name in RUN_RETENTION:
            yield f"{PREFIX}.retention.{reason}.{name}", deleted[name], {"lake": lake, "pass": reason}
    for partition in metrics["partitions"]:
        tags = {"lake": lake, "topic": partition["topic"], "partition": str(partition["partition"])}
        where = f"{PREFIX}.log.{partition['topic']}.{partition['partition']}"
        for name in PARTITION_GAUGES:
            yield f"{where}.{name}", partition[name], tags


METRICS_SWITCHES = ("statsd_on", "statsd_datadog_enabled", "otel_on")
"""The ``[metrics]`` options that turn one of Airflow's metrics backends on."""


def metrics_backends() -> tuple[str, ...]:
    """The ``[metrics]`` switches that are on in Airflow's configuration (none: metrics go nowhere)."""
    from airflow.sdk import conf

    return tuple(name for name in METRICS_SWITCHES if conf.getboolean("metrics", name, fallback=False))


def publish_metrics(metrics: Mapping[str, Any] | None, *, lake: str) -> str:
    """Send a report's gauges (``None``: a dry run's, which are not sent) when a metrics backend is on;
    the task log's line saying what happened."""
    if metrics is None:
        return "dry run: no metric sent (a preview publishes nothing; docs/metrics.md)"
    backends = metrics_backends()
    if not backends:
        return "no metric sent: no metrics backend is on (statsd_on, otel_on in [metrics]; docs/metrics.md)"
    sent = emit_metrics(metrics, lake=lake)
    return f"{sent} metric(s) sent through Airflow's metrics ({', '.join(backends)}; docs/metrics.md)"


def emit_metrics(metrics: Mapping[str, Any], *, lake: str) -> int:
    """Send every gauge of a report's ``metrics`` through Airflow's stats; returns how many were sent."""
    from airflow.sdk.observability import stats

    sent = 0
    for name, value, tags in metric_gauges(metrics, lake=lake):
        stats.gauge(stats.normalize_name_for_stats(name), value, tags=tags)
        sent += 1
    return sent
