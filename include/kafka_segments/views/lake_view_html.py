"""The lake view as one self-contained HTML page: inline CSS, inline SVG charts, no network; readable with
JavaScript off (a few lines of inline script only sort and filter the tables). Times are ISO-8601 UTC.

Every number cell carries ``data-key`` (the ``describe --json`` key it shows) and ``data-value`` (the raw
number), so a reader, a test or a script can check the page against ``describe --json``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from html import escape

from kafka_segments.config.catalogue import LONG_MAX
from kafka_segments.offsets.resolved import offsets_line
from kafka_segments.redaction import redact_uri
from kafka_segments.timefmt import iso_utc
from kafka_segments.topic_partition import TopicPartition
from kafka_segments.views.describe import PartitionDescription
from kafka_segments.views.display_text import shown_text
from kafka_segments.views.lake_list import LakeSummary
from kafka_segments.views.lake_view import LakeView
from kafka_segments.views.lake_view_groups import GroupView
from kafka_segments.views.lake_view_history import Commit, Deleted
from kafka_segments.views.lake_view_svg import topic_chart

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1f2328}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #d0d7de;padding:2px 6px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f6f8fa;cursor:pointer}small{color:#57606a}.bad{color:#d1242f}figure{margin:.5em 0}
.legend span{margin-right:1em}.b{color:#1f6feb}.o{color:#d1242f}
"""
SCRIPT = """
document.querySelectorAll('input.filter').forEach(function(box){box.addEventListener('input',function(){
var t=document.getElementById(box.dataset.table),q=box.value.toLowerCase();
t.querySelectorAll('tbody tr').forEach(function(r){
r.style.display=r.textContent.toLowerCase().indexOf(q)<0?'none':''})})});
document.querySelectorAll('table.sortable th').forEach(function(th,i){th.addEventListener('click',function(){
var b=th.closest('table').tBodies[0],rows=Array.from(b.rows),d=th.dataset.dir==='a'?-1:1;
th.dataset.dir=d>0?'a':'d';
rows.sort(function(x,y){var p=x.cells[i],q=y.cells[i],u=p.dataset.value,v=q.dataset.value;
if(u!==undefined&&v!==undefined&&u!==''&&v!=='')return d*(parseFloat(u)-parseFloat(v));
return d*p.textContent.localeCompare(q.textContent)});rows.forEach(function(r){b.appendChild(r)})})});
"""
TOTALS = {"topics": "topics", "partitions": "partitions", "segments": "live segments",
          "size_bytes": "live bytes", "record_count": "records"}  # fmt: skip
"""The labels of ``LakeDescription.totals``' keys."""
UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
NO_LAG_LIMIT = "none (Long.MAX_VALUE)"
"""What ``max.compaction.lag.ms`` at Kafka's default, ``Long.MAX_VALUE``, shows: no deadline."""
ELIGIBILITY_NOTES = {
    "empty-log": "Kafka's cleaner skips a log with no clean and no cleanable bytes (LogCleanerManager: "
    "totalBytes == 0): every record is in the active segment, newer than min.compaction.lag.ms or past the "
    "last stable offset. The partition may hold records; none can be cleaned yet.",
    "below-dirty-ratio": "the dirty ratio is not above min.cleanable.dirty.ratio and no record is past "
    "max.compaction.lag.ms",
    "not-compacted": "cleanup.policy has no compact",
    "cleaner-disabled": "log.cleaner.enable is false",
    "uncleanable": "a cleaning round failed on this partition (LogCleanerManager.markPartitionUncleanable)",
}
"""The title (tooltip) of a Next compaction cell, by eligibility: what Kafka's name means."""


def render_html(
    views: Sequence[LakeView],
    *,
    title: str = "kafka-segments: lake view",
    back: str | None = None,
    preview: str | None = None,
) -> str:
    """The page for ``views`` (one section per lake); ``back``: a link to the list of lakes above them;
    ``preview``: where a **Preview now** button posts (the Airflow plugin: the maintenance DAG's dry run)."""
    nav = "" if back is None else f'<p><a class="back" href="{escape(back)}">&#8592; all lakes</a></p>'
    if preview is not None:
        nav += (
            f'<form method="post" action="{escape(preview)}"><button type="submit">Preview now</button> '
            "starts a dry run of the maintenance DAG (it commits nothing) and opens it</form>"
        )
    return _page(title, nav + "".join(lake_section(view, index) for index, view in enumerate(views)))


def render_lake_list(lakes: Sequence[LakeSummary], *, title: str, href: Callable[[str], str]) -> str:
    """The page listing ``lakes``, one row each, the name linking to ``href(name)`` (that lake's page)."""
    headers = ("Lake", "Location", "Version", "Last commit", "Run", "Operation", "Outcome", "Live bytes")
    rows = [_lake_row(lake, href(lake.name)) for lake in lakes]
    return _page(title, _filter("lakes") + _table("lakes", headers, rows))


def _lake_row(lake: LakeSummary, href: str) -> str:
    name = f'<td><a href="{escape(href)}">{escape(lake.name)}</a></td>{_td(redact_uri(lake.location))}'
    commit = lake.commit
    if commit is None or lake.size_bytes is None:
        problem = escape(redact_uri(lake.problem or "no committed state"))
        cells = f'{name}<td colspan="6" class="bad">{problem}</td>'
        return f'<tr data-lake="{escape(lake.name)}" data-problem="">{cells}</tr>'
    return (
        f'<tr data-lake="{escape(lake.name)}">{name}{_cell("version", commit.version)}'
        f"{_td(_time_text(commit.committed_at_ms))}{_td(commit.run_id)}{_td(commit.operation)}"
        f"{_td(shown_text(commit.outcome))}"
        f"{_cell('size_bytes', lake.size_bytes, _bytes_note(lake.size_bytes))}</tr>"
    )


def render_problem(title: str, problem: str) -> str:
    """A page saying why there is no view (no lake configured, a lake that cannot be read); a URI's secret
    in ``problem`` is not shown (``redaction.redact_uri``)."""
    return _page(title, f'<p class="bad">{escape(redact_uri(problem))}</p>')


def _page(title: str, body: str) -> str:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width"><style>{STYLE}</style></head><body>'
        f"<h1>{escape(title)}</h1>{body}<script>{SCRIPT}</script></body></html>\n"
    )


def lake_section(view: LakeView, index: int) -> str:
    d = view.description
    totals = d.totals()
    location = escape(redact_uri(d.location))
    return "".join(
        [
            f'<section class="lake" data-lake="{location}" data-now-ms="{view.now_ms}">'
            f"<h2>Lake {location}</h2>",
            f'<p>Manifest version <b data-key="version" data-value="{d.version}">{d.version}</b>, '
            f"committed {_time(d.committed_at_ms)} by run {_code(d.run_id)} ({escape(d.operation)}). "
            f"Shown at {_time(view.now_ms)}; {_offsets(view)}.</p>",
            "<p>" + ", ".join(f"{_num(k, v)} {TOTALS[k]}" for k, v in totals.items()) + "</p>",
            _partitions(view, f"partitions-{index}"),
            _eligibility_legend(view),
            _uncleanable(view),
            _groups(view.groups, f"groups-{index}", view.now_ms),
            _history(view, f"commits-{index}"),
            "</section>",
        ]
    )


def _offsets(view: LakeView) -> str:
    return escape(offsets_line(view.offsets, now_ms=view.now_ms))


def _partitions(view: LakeView, table_id: str) -> str:
    headers = (
        "Topic", "Partition", "Log start offset", "Log end offset", "Segments", "Live bytes", "Records",
        "Dirty ratio", "Compaction delay (ms)", "max.compaction.lag.ms", "Next compaction",
        "Next retention", "Held back by",
    )  # fmt: skip
    rows = [_partition_row(view, p) for p in view.description.partitions]
    configured = view.description.compaction_now_ms is not None
    caption = "" if configured else "Compaction and retention columns need a configuration (--config)."
    return "<h3>Partitions</h3>" + _filter(table_id) + _table(table_id, headers, rows, caption=caption)


def _partition_row(view: LakeView, p: PartitionDescription) -> str:
    outlook = p.compaction
    retention = view.retention.get(_tp(p))
    lag = view.max_compaction_lag_ms.get(p.topic)
    delay = None if outlook is None else outlook.compaction_delay_ms
    cells = [
        _td(p.topic),
        _cell("partition", p.partition),
        _cell("log_start_offset", p.log_start_offset),
        _cell("log_end_offset", p.log_end_offset),
        _cell("segment_count", p.segment_count),
        _cell("size_bytes", p.size_bytes, _bytes_note(p.size_bytes)),
        _cell("record_count", p.record_count),
        _cell("dirty_ratio", None if outlook is None else outlook.dirty_ratio),
        _cell("compaction_delay_ms", delay, _duration(delay) if delay else ""),
        _lag_cell(lag),
        _next_compaction(None if outlook is None else (outlook.next_run.value, outlook.eligibility.value)),
        _td("-" if retention is None else _retention_text(retention.deleted_segments, retention.deleted_bytes,
                                                          retention.log_start_offset, retention.passes)),
        _td("-" if retention is None or retention.holder is None else retention.holder),
    ]  # fmt: skip
    return f'<tr data-topic="{escape(p.topic)}" data-partition="{p.partition}">{"".join(cells)}</tr>'


def _lag_cell(lag: int | None) -> str:
    """``max.compaction.lag.ms``: Kafka's default ``Long.MAX_VALUE`` shows as no deadline (its raw value
    stays in ``data-value``), another value as itself and its duration."""
    if lag != LONG_MAX:
        return _cell("max_compaction_lag_ms", lag, _duration(lag) if lag else "")
    return f'<td class="n" data-key="max_compaction_lag_ms" data-value="{lag!r}">{escape(NO_LAG_LIMIT)}</td>'


def _next_compaction(outlook: tuple[str, str] | None) -> str:
    if outlook is None:
        return _td("-")
    verdict, eligibility = outlook
    note = ELIGIBILITY_NOTES.get(eligibility)
    title = "" if note is None else f' title="{escape(note)}"'
    return f'<td data-eligibility="{escape(eligibility)}"{title}>{escape(f"{verdict} ({eligibility})")}</td>'


def _eligibility_legend(view: LakeView) -> str:
    """One line per eligibility the table shows whose Kafka name needs saying (``empty-log`` above all)."""
    shown = sorted(
        {p.compaction.eligibility.value for p in view.description.partitions if p.compaction is not None}
    )
    notes = [f"<li><code>{escape(e)}</code>: {escape(ELIGIBILITY_NOTES[e])}</li>" for e in shown
             if e in ELIGIBILITY_NOTES]  # fmt: skip
    return f'<ul class="legend eligibility">{"".join(notes)}</ul>' if notes else ""


def _retention_text(segments: int, size: int, start: int, passes: Sequence[str]) -> str:
    if not segments:
        return "nothing to delete"
    return f"delete {segments} segment(s), {_bytes(size)} ({', '.join(passes)}); log start offset → {start}"


def _uncleanable(view: LakeView) -> str:
    if not view.uncleanable:
        return "<h3>Uncleanable partitions</h3><p>None in the last commit's run.</p>"
    rows = [
        f"<tr>{_td(u.topic)}{_cell('partition', u.partition)}{_td(shown_text(u.reason), 'bad')}</tr>"
        for u in view.uncleanable
    ]
    return "<h3>Uncleanable partitions</h3>" + _table("", ("Topic", "Partition", "Reason"), rows)


def _groups(groups: Sequence[GroupView], table_id: str, now_ms: int) -> str:
    if not groups:
        return "<h3>Consumer groups</h3><p>No offsets snapshot pinned in the lake at or before this time.</p>"
    headers = ("Group", "State", "Topic", "Partition", "Committed offset", "Lag (records)", "Lag (bytes)",
               "Offsets expire", "Holds back the next run")  # fmt: skip
    rows = [
        f'<tr data-group="{escape(shown_text(g.group_id))}">{_td(shown_text(g.group_id))}{_td(g.state)}'
        f"{_td(r.topic)}"
        f"{_cell('partition', r.partition)}{_cell('committed_offset', r.committed_offset)}"
        f"{_cell('lag_records', r.lag_records)}{_cell('lag_bytes', r.lag_bytes, _bytes_note(r.lag_bytes))}"
        f"{_td(_expiry(r.expires_at_ms, r.expiry_why, now_ms))}"
        f"{_td('yes' if r.holds_back else '')}</tr>"
        for g in groups
        for r in g.partitions
    ]
    return "<h3>Consumer groups</h3>" + _filter(table_id) + _table(table_id, headers, rows)


def _expiry(expires_at_ms: int | None, why: str, now_ms: int) -> str:
    if expires_at_ms is None:
        return f"never: {why}"
    return f"{'expired' if expires_at_ms <= now_ms else 'expires'} {_time_text(expires_at_ms)}"


def _history(view: LakeView, table_id: str) -> str:
    history = view.history
    charts = [
        f'<figure data-topic="{escape(topic)}"><figcaption>{escape(topic)}</figcaption>'
        f"{topic_chart(topic, points, history.dry_runs)}</figure>"
        for topic, points in history.topics.items()
    ]
    legend = (
        '<p class="legend"><span class="b">&#9632; live bytes</span>'
        '<span class="o">&#9632; log start offsets (sum over partitions)</span>'
        "<span>&#9675; a dry run on that version (it commits nothing)</span></p>"
    )
    rows = [_commit_row(c, _links(view, c.run_id)) for c in reversed(history.commits)]
    headers: tuple[str, ...] = (
        "Version",
        "Committed",
        "Run",
        "Operation",
        "Outcome",
        "Deleted",
        "Cleaner metrics",
    )
    headers += ("Links",) if view.run_links else ()
    return (
        "<h3>History</h3>"
        + legend
        + "".join(charts)
        + "<h3>Commits</h3>"
        + _table(table_id, headers, rows)
        + _dry_runs(view, f"dry-{table_id}")
    )


def _links(view: LakeView, run_id: str) -> str:
    """The run's links cell (nothing when the view has no links at all)."""
    if not view.run_links:
        return ""
    links = view.run_links.get(run_id, ())
    anchors = " ".join(f'<a href="{escape(href)}">{escape(label)}</a>' for label, href in links)
    return f'<td class="links">{anchors or "-"}</td>'


def _dry_runs(view: LakeView, table_id: str) -> str:
    """The dry runs on the shown versions (their reports still in their run folders), newest first."""
    runs = view.history.dry_runs
    if not runs:
        return (
            "<h3>Dry runs</h3><p>No dry run's report on these versions among the newest run folders (a dry "
            "run commits nothing; its report stays in its run folder until gc's run folder retention).</p>"
        )
    headers = ("On version", "Run", "Now", "Would delete") + (("Links",) if view.run_links else ())
    rows = [
        f'<tr data-run-id="{escape(run.run_id)}">{_cell("base_version", run.base_version)}{_td(run.run_id)}'
        f"{_td(_time_text(run.now_ms))}<td>{escape(_deleted_text(run.deleted) or 'nothing')}</td>"
        f"{_links(view, run.run_id)}</tr>"
        for run in reversed(runs)
    ]
    return "<h3>Dry runs</h3>" + _table(table_id, headers, rows)


def _deleted_text(deleted: Sequence[Deleted]) -> str:
    return "; ".join(
        f"{shown_text(d.name)}: {d.segments} segment(s), {_bytes(d.size_bytes)}" for d in deleted
    )


def _commit_row(commit: Commit, links: str) -> str:
    deleted = _deleted_text(commit.deleted)
    cleaner = ", ".join(f"{shown_text(name)} {value}" for name, value in commit.cleaner.items())
    return (
        f'<tr data-version="{commit.version}">{_cell("version", commit.version)}'
        f"{_td(_time_text(commit.committed_at_ms))}{_td(commit.run_id)}{_td(commit.operation)}"
        f"{_td(shown_text(commit.outcome))}{_td(deleted or '-')}{_td(cleaner or '-')}{links}</tr>"
    )


def _table(table_id: str, headers: Iterable[str], rows: Sequence[str], *, caption: str = "") -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    ident = f' id="{table_id}"' if table_id else ""
    cap = f"<caption><small>{escape(caption)}</small></caption>" if caption else ""
    body = "".join(rows)
    return f'<table class="sortable"{ident}>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _filter(table_id: str) -> str:
    return f'<input class="filter" type="search" placeholder="filter" data-table="{table_id}">'


def _td(text: str, css: str = "") -> str:
    return f"<td{f' class={css!r}' if css else ''}>{escape(text)}</td>"


def _cell(key: str, value: int | float | None, note: str = "") -> str:
    if value is None:
        return f'<td class="n" data-key="{key}" data-value="">-</td>'
    shown = f"{value:.4f}" if isinstance(value, float) else str(value)
    extra = f" <small>{escape(note)}</small>" if note else ""
    return f'<td class="n" data-key="{key}" data-value="{value!r}">{shown}{extra}</td>'


def _num(key: str, value: int) -> str:
    return f'<b data-key="{key}" data-value="{value}">{value}</b>'


def _bytes(size: int) -> str:
    value = float(size)
    for unit in UNITS:
        if abs(value) < 1024 or unit == UNITS[-1]:
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def _duration(ms: int) -> str:
    """``ms`` in the largest unit of days, hours, minutes or seconds it fills."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000)):
        if ms >= size:
            return f"{ms / size:.1f} {unit}"
    return f"{ms / 1000:.1f} s"


def _bytes_note(size: int) -> str:
    """The size in binary units beside a raw byte count of 1 KiB or more."""
    return _bytes(size) if size >= 1024 else ""


def _time(ms: int | None) -> str:
    return f'<time datetime="{_time_text(ms)}">{_time_text(ms)}</time>'


def _time_text(ms: int | None) -> str:
    return iso_utc(ms) or "-"


def _code(text: str) -> str:
    return f"<code>{escape(text)}</code>"


def _tp(p: PartitionDescription) -> TopicPartition:
    return TopicPartition(p.topic, p.partition)
