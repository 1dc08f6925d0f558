"""The lake view's history: one point per committed manifest version (docs/lake-view.md, "History").

Each version gives, per topic, its live bytes and its partitions' log start offsets (from the manifest: no
segment is read), and the commit's run, outcome and what each pass deleted (from the run's ``report.json``
when it has one: ``adopt``, ``fence`` and older runs may have none). Dry runs commit no version: those whose
report is in their run folder (until gc's run folder retention removes it) are marks on the version they
built on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from kafka_segments.lake.history import manifest_versions
from kafka_segments.lake.json_document import decode_json
from kafka_segments.lake.layout import manifest_key
from kafka_segments.lake.roots import VersionRoot, read_root
from kafka_segments.lake.run_folder import REPORT, list_runs_with
from kafka_segments.state import MANIFEST_FORMAT_VERSION, Manifest
from kafka_segments.storage.base import ObjectStore
from kafka_segments.views.run_report import RunReport, read_report

COMMITTED = "committed"
SINCE_LAST_RUN = "time-since-last-run-ms"
DRY_RUN_READS = 20
"""How many of the newest reports of runs that committed nothing the history reads to find dry runs."""


@dataclass(frozen=True, slots=True)
class TopicPoint:
    """One topic at one manifest version."""

    version: int
    committed_at_ms: int
    size_bytes: int
    log_start_offsets: tuple[int, ...]
    """Per partition, in partition order."""

    @property
    def log_start_offset_sum(self) -> int:
        return sum(self.log_start_offsets)


@dataclass(frozen=True, slots=True)
class Deleted:
    """What one pass of a commit removed: a retention reason's segments and bytes, or compaction's segments
    replaced less written and bytes read less written."""

    name: str
    segments: int
    size_bytes: int


@dataclass(frozen=True, slots=True)
class Commit:
    """One committed manifest version: its run, outcome and what each pass deleted."""

    version: int
    run_id: str
    operation: str
    committed_at_ms: int
    outcome: str
    deleted: tuple[Deleted, ...]
    cleaner: Mapping[str, object]
    """Kafka's cleaner gauges of the run (the report's ``metrics.log_cleaner``: docs/metrics.md)."""


@dataclass(frozen=True, slots=True)
class DryRun:
    """A dry run on a shown version: what it would have committed on top of ``base_version``."""

    run_id: str
    base_version: int
    now_ms: int
    deleted: tuple[Deleted, ...]


@dataclass(frozen=True, slots=True)
class History:
    """The commits (ascending), per topic its points over them, and the dry runs on those versions (by
    base version, then run id)."""

    commits: tuple[Commit, ...]
    topics: Mapping[str, tuple[TopicPoint, ...]]
    dry_runs: tuple[DryRun, ...] = ()


def read_history(store: ObjectStore, *, limit: int | None = None, head: VersionRoot | None = None) -> History:
    """The last ``limit`` retained versions (all when ``None``) up to ``head`` (its root, already read: not
    read again, and no partition of it is; ``None``: up to the newest). Older versions are read by
    ``version_summary``.

    Raises:
        ManifestFormatError: a manifest (``lake.history.read_manifest``'s error) or a run report
            (``views.run_report.read_report``) is not valid.
    """
    versions = [v for v in manifest_versions(store) if head is None or v <= head.version]
    if limit is not None:
        versions = versions[-limit:] if limit > 0 else []
    summaries = [
        root_summary(head) if head is not None and head.version == v else version_summary(store, v)
        for v in versions
    ]
    history = history_of(summaries, {s.run_id: read_report(store, s.run_id) for s in summaries})
    return replace(history, dry_runs=dry_runs_on(store, versions, committed={s.run_id for s in summaries}))


def dry_runs_on(store: ObjectStore, versions: Sequence[int], *, committed: set[str]) -> tuple[DryRun, ...]:
    """The dry runs whose report is in their folder and that built on one of ``versions``: one listing of
    the runs' folders, then the reports of the newest ``DRY_RUN_READS`` runs that reported and are not in
    ``committed`` (the shown commits' runs; run ids sort by start time), one GET each.

    Raises:
        ManifestFormatError: a report is not valid (``views.run_report.read_report``).
    """
    shown = set(versions)
    candidates = [run_id for run_id in list_runs_with(store, REPORT) if run_id not in committed]
    found: list[DryRun] = []
    for run_id in candidates[-DRY_RUN_READS:] if shown else ():
        report = read_report(store, run_id)
        if report is not None and report.dry_run and report.base_version in shown:
            found.append(DryRun(run_id, report.base_version, report.now_ms, deleted_by_pass(report)))
    return tuple(sorted(found, key=lambda run: (run.base_version, run.run_id)))


@dataclass(frozen=True, slots=True)
class VersionSummary:
    """What the history needs of one manifest version."""

    version: int
    run_id: str
    operation: str
    committed_at_ms: int
    points: Mapping[str, TopicPoint]


def history_of(summaries: Sequence[VersionSummary], reports: Mapping[str, RunReport | None]) -> History:
    """The history of ``summaries`` (ascending) with their runs' reports (``None``: no report)."""
    topics: dict[str, list[TopicPoint]] = {}
    for summary in summaries:
        for topic, point in summary.points.items():
            topics.setdefault(topic, []).append(point)
    commits = tuple(_commit(s, reports.get(s.run_id)) for s in summaries)
    return History(commits=commits, topics={t: tuple(points) for t, points in sorted(topics.items())})


def summary_of(manifest: Manifest) -> VersionSummary:
    rows = [(s.topic_partition.topic, s.log_start_offset, s.size_bytes) for s in manifest.partitions]
    return _summary(manifest.version, manifest.run_id, manifest.operation, manifest.committed_at_ms, rows)


def root_summary(root: VersionRoot) -> VersionSummary:
    """A version's summary from its root alone (a format 2 root reads no partition's pieces)."""
    rows = [(p.topic_partition.topic, p.summary.log_start_offset, p.summary.bytes) for p in root.partitions]
    header = root.header
    return _summary(root.version, root.run_id, header.operation, root.committed_at_ms, rows)


def version_summary(store: ObjectStore, version: int) -> VersionSummary:
    """Version ``version``'s summary from its JSON, without building every segment entry (a 4,000-partition
    manifest decodes ~8x faster); a format 2 root, or a document that does not have the fields' types, is
    read by the strict reader (which names what is wrong), from the root's summaries.

    Raises:
        ManifestFormatError: the manifest is not valid.
    """
    data = store.get(manifest_key(version))
    try:
        document = decode_json(data, location=store.location(manifest_key(version)), kind="manifest")
        if document["format_version"] != MANIFEST_FORMAT_VERSION or document["version"] != version:
            raise ValueError(version)
        rows = [
            (str(p["topic"]), int(p["log_start_offset"]), sum(int(s["size"]) for s in p["segments"]))
            for p in document["partitions"]
        ]
        header = (str(document["run_id"]), str(document["operation"]), int(document["committed_at_ms"]))
    except (ValueError, KeyError, TypeError):
        return root_summary(read_root(store, version))
    return _summary(version, *header, rows)


def _summary(
    version: int, run_id: str, operation: str, committed_at_ms: int, rows: Sequence[tuple[str, int, int]]
) -> VersionSummary:
    sizes: dict[str, int] = {}
    starts: dict[str, list[int]] = {}
    for topic, log_start_offset, size in rows:
        sizes[topic] = sizes.get(topic, 0) + size
        starts.setdefault(topic, []).append(log_start_offset)
    points = {t: TopicPoint(version, committed_at_ms, sizes[t], tuple(starts[t])) for t in sizes}
    return VersionSummary(version, run_id, operation, committed_at_ms, points)


def _commit(manifest: VersionSummary, report: RunReport | None) -> Commit:
    return Commit(
        version=manifest.version,
        run_id=manifest.run_id,
        operation=manifest.operation,
        committed_at_ms=manifest.committed_at_ms,
        outcome=COMMITTED if report is None else report.outcome or COMMITTED,
        deleted=() if report is None else deleted_by_pass(report),
        cleaner={} if report is None else _cleaner_gauges(report),
    )


def _cleaner_gauges(report: RunReport) -> dict[str, int | float | None]:
    """The report's cleaner gauges, without a negative ``time-since-last-run-ms`` (written by runs before it
    was left out for a run whose ``now`` precedes its base version's: ``pipeline.metrics``)."""
    since = report.log_cleaner.get(SINCE_LAST_RUN)
    gauges = dict(report.log_cleaner)
    if since is not None and since < 0:
        del gauges[SINCE_LAST_RUN]
    return gauges


def deleted_by_pass(report: RunReport) -> tuple[Deleted, ...]:
    """Retention's passes (``plan.totals.by_reason``) then compaction's bytes read less bytes written."""
    passes = [Deleted(p.reason, p.segments, p.size_bytes) for p in report.by_reason]
    if report.cleaned:
        segments = sum(r.segments_replaced - r.segments_written for r in report.rounds)
        passes.append(Deleted("compaction", segments, report.bytes_read - report.bytes_written))
    return tuple(passes)
